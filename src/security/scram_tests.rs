//! Tests of `security::scram`.

use super::*;
use proptest::prelude::*;

const SALT: &[u8] = b"0123456789abcdef";

fn credential(mechanism: ScramMechanism, password: &[u8]) -> ScramCredential {
    ScramCredential::from_password(mechanism, password, SALT, 4096)
}

/// A cheap credential (no PBKDF2) for tests that never present the right proof.
fn quick_credential(mechanism: ScramMechanism) -> ScramCredential {
    ScramCredential::from_salted_password(mechanism, &[7; 64], SALT, 4096)
}

fn past_first(first: &[u8]) -> AwaitingFinal {
    ScramServer::new(ScramMechanism::Sha256)
        .client_first(first, "srv", |_| {
            Some(quick_credential(ScramMechanism::Sha256))
        })
        .expect("a valid client-first")
        .1
}

#[test]
fn rfc7677_sha256_test_vector() {
    let salt = STANDARD.decode("W22ZaJ0SNY7soEsUEjb6gQ==").expect("salt");
    let stored = ScramCredential::from_password(ScramMechanism::Sha256, b"pencil", &salt, 4096);
    let client = ScramClient::new(
        ScramMechanism::Sha256,
        "user",
        b"pencil",
        "rOprNGfwEbeRWgbNEkqO",
    );
    assert_eq!(client.client_first(), b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO");

    let (server_first, awaiting) = ScramServer::new(ScramMechanism::Sha256)
        .client_first(
            &client.client_first(),
            "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0",
            |name| (name == "user").then(|| stored.clone()),
        )
        .expect("client-first accepted");
    assert_eq!(
        String::from_utf8(server_first.clone()).expect("UTF-8"),
        "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
    );

    let expected_client_final = "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,\
                                 p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
    let (client_final, expected_server_final) = client.client_final(&server_first);
    assert_eq!(
        String::from_utf8(client_final).expect("UTF-8"),
        expected_client_final
    );

    // The server checks the RFC's bytes, not our client's.
    let (server_final, authenticated) = awaiting
        .client_final(expected_client_final.as_bytes())
        .expect("the RFC's proof is accepted");
    assert_eq!(
        String::from_utf8(server_final.clone()).expect("UTF-8"),
        "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
    );
    assert_eq!(server_final, expected_server_final);
    assert_eq!(authenticated.username, "user");
}

#[test]
fn sha512_round_trip() {
    let stored = credential(ScramMechanism::Sha512, b"s3cret");
    let authenticated = exchange(ScramMechanism::Sha512, "alice", b"s3cret", |name| {
        (name == "alice").then(|| stored.clone())
    })
    .expect("the right password authenticates");
    assert_eq!(authenticated.username, "alice");
    assert_eq!(stored.stored_key.len(), 64);
    assert_eq!(stored.server_key.len(), 64);
}

#[test]
fn a_credential_of_one_mechanism_does_not_serve_the_other() {
    let stored = credential(ScramMechanism::Sha256, b"s3cret");
    let refused = exchange(ScramMechanism::Sha512, "alice", b"s3cret", |_| {
        Some(stored.clone())
    });
    assert_eq!(refused, Err(ScramError::WrongPassword));
}

#[test]
fn salted_password_gives_the_same_credential_as_the_password() {
    for mechanism in ScramMechanism::ALL {
        let iterations = NonZeroU32::new(4096).expect("non-zero");
        let salted = salted_password(mechanism, b"pencil", SALT, iterations);
        assert_eq!(
            ScramCredential::from_salted_password(mechanism, &salted, SALT, 4096),
            ScramCredential::from_password(mechanism, b"pencil", SALT, 4096)
        );
    }
}

#[test]
fn wrong_password_and_unknown_user_read_the_same() {
    let stored = credential(ScramMechanism::Sha256, b"right");
    let wrong = exchange(ScramMechanism::Sha256, "bob", b"wrong", |_| {
        Some(stored.clone())
    })
    .expect_err("a wrong password is refused");
    assert_eq!(wrong, ScramError::WrongPassword);

    let unknown = exchange(ScramMechanism::Sha256, "nobody", b"right", |_| None)
        .expect_err("an unknown user is refused");
    assert_eq!(unknown, ScramError::UnknownUser);

    let weak = exchange(ScramMechanism::Sha256, "bob", b"right", |_| {
        Some(ScramCredential::from_password(
            ScramMechanism::Sha256,
            b"right",
            SALT,
            4095,
        ))
    })
    .expect_err("a credential under the minimum is refused");
    assert_eq!(
        weak,
        ScramError::TooFewIterations {
            iterations: 4095,
            minimum: 4096
        }
    );

    for error in [&wrong, &unknown, &weak] {
        assert_eq!(
            error.to_string(),
            "Authentication failed: Invalid user credentials"
        );
    }
}

#[test]
fn nonce_mismatch_is_refused() {
    let stored = credential(ScramMechanism::Sha256, b"pw");
    let client = ScramClient::new(ScramMechanism::Sha256, "carol", b"pw", "clientnonce");
    let (server_first, awaiting) = ScramServer::new(ScramMechanism::Sha256)
        .client_first(&client.client_first(), "servernonce", |_| {
            Some(stored.clone())
        })
        .expect("client-first accepted");
    let (client_final, _) = client.client_final(&server_first);
    let tampered = String::from_utf8(client_final)
        .expect("UTF-8")
        .replace("servernonce", "othernonce");
    assert_eq!(
        awaiting.client_final(tampered.as_bytes()).map(|(_, a)| a),
        Err(ScramError::NonceMismatch)
    );
}

#[test]
fn channel_binding_is_refused() {
    let refused = ScramServer::new(ScramMechanism::Sha256).client_first(
        b"p=tls-server-end-point,,n=user,r=abc",
        "srv",
        |_| unreachable!("no lookup for a refused binding"),
    );
    assert_eq!(
        refused.map(|_| ()),
        Err(ScramError::ChannelBindingUnsupported)
    );
}

#[test]
fn the_gs2_header_must_come_back_in_c() {
    // `y,,` is accepted, and client-final must then carry base64("y,,") = "eSws".
    let waiting = past_first(b"y,,n=user,r=abc");
    let proof = STANDARD.encode([0u8; 32]);
    let biws = format!("c=biws,r=abcsrv,p={proof}");
    assert_eq!(
        waiting.client_final(biws.as_bytes()).map(|_| ()),
        Err(ScramError::ChannelBindingMismatch)
    );
    let waiting = past_first(b"y,,n=user,r=abc");
    let esws = format!("c=eSws,r=abcsrv,p={proof}");
    assert_eq!(
        waiting.client_final(esws.as_bytes()).map(|_| ()),
        Err(ScramError::WrongPassword),
        "past the binding and nonce checks"
    );
}

#[test]
fn tokenauth_is_refused_before_any_lookup() {
    let messages: [&[u8]; 3] = [
        b"n,,n=user,r=abc,tokenauth=true",
        b"n,,n=user,r=abc,tokenauth=TRUE",
        b"n,,n=user,r=abc,tokenauth=false,tokenauth=true",
    ];
    for message in messages {
        let refused = ScramServer::new(ScramMechanism::Sha512)
            .client_first(message, "srv", |_| unreachable!("no lookup for a token"));
        assert_eq!(refused.map(|_| ()), Err(ScramError::TokenAuthUnsupported));
    }
    // Other extensions, and tokenauth=false, are ignored as Kafka ignores them.
    let (_, waiting) = ScramServer::new(ScramMechanism::Sha256)
        .client_first(b"n,,n=user,r=abc,tokenauth=false,x=y=z", "srv", |_| {
            Some(quick_credential(ScramMechanism::Sha256))
        })
        .expect("accepted");
    assert_eq!(waiting.username(), "user");
}

#[test]
fn authzid_must_be_the_username() {
    let same = past_first(b"n,a=user,n=user,r=abc");
    assert_eq!(same.username(), "user");
    // c= must then echo the whole header, authzid included.
    let proof = STANDARD.encode([0u8; 32]);
    let echo = format!("c={},r=abcsrv,p={proof}", STANDARD.encode("n,a=user,"));
    assert_eq!(
        same.client_final(echo.as_bytes()).map(|_| ()),
        Err(ScramError::WrongPassword)
    );

    let other = ScramServer::new(ScramMechanism::Sha256).client_first(
        b"n,a=admin,n=user,r=abc",
        "srv",
        |_| unreachable!("refused before the lookup, so the answer says nothing of the user"),
    );
    assert_eq!(other.map(|_| ()), Err(ScramError::AuthorizationIdMismatch));
}

#[test]
fn escaped_names_are_unescaped() {
    let mut seen = String::new();
    ScramServer::new(ScramMechanism::Sha256)
        .client_first(b"n,,n=a=2Cb=3Dc,r=abc", "srv", |name| {
            seen = name.to_owned();
            Some(quick_credential(ScramMechanism::Sha256))
        })
        .expect("accepted");
    assert_eq!(seen, "a,b=c");

    let stored = credential(ScramMechanism::Sha256, b"pw");
    let authenticated = exchange(ScramMechanism::Sha256, "we,ird=name", b"pw", |name| {
        (name == "we,ird=name").then(|| stored.clone())
    })
    .expect("authenticated");
    assert_eq!(authenticated.username, "we,ird=name");
}

#[test]
fn malformed_client_first_is_refused() {
    let cases: &[&[u8]] = &[
        b"",
        b"n",
        b"n,",
        b"n,,",
        b"x,,n=user,r=abc",
        b"n,b=user,n=user,r=abc",
        b"n,a=,n=user,r=abc",
        b"n,,n=,r=abc",
        b"n,,u=user,r=abc",
        b"n,,n=user",
        b"n,,n=user,r=",
        b"n,,n=user,x=abc",
        b"n,,n=user,r=a b",
        b"n,,n=user,r=\x7f",
        b"n,,n=us=er,r=abc",
        b"n,,n=user=2c,r=abc",
        b"n,,n=user=,r=abc",
        b"n,,n=us\0er,r=abc",
        b"n,,m=ext,n=user,r=abc",
        b"n,,n=user,r=abc,",
        b"n,,n=user,r=abc,1=2",
        b"n,,n=user,r=abc,key",
        b"n,,n=user,r=abc,key=",
        b"n,,n=user,r=abc,=v",
        b"n,,n=us\xffer,r=abc",
    ];
    for &message in cases {
        let refused = ScramServer::new(ScramMechanism::Sha256).client_first(message, "srv", |_| {
            Some(quick_credential(ScramMechanism::Sha256))
        });
        assert!(
            matches!(refused, Err(ScramError::InvalidClientFirst(_))),
            "{:?} gave {:?}",
            String::from_utf8_lossy(message),
            refused.map(|_| ())
        );
    }
}

#[test]
fn inputs_are_bounded() {
    let long = format!("n,,n=user,r={}", "a".repeat(MESSAGE_BYTES_MAX));
    let refused =
        ScramServer::new(ScramMechanism::Sha256).client_first(long.as_bytes(), "srv", |_| None);
    assert!(matches!(refused, Err(ScramError::TooLong { .. })));

    let at_limit = format!("n,,n={},r=abc", "u".repeat(USERNAME_BYTES_MAX));
    let (_, waiting) = ScramServer::new(ScramMechanism::Sha256)
        .client_first(at_limit.as_bytes(), "srv", |_| {
            Some(quick_credential(ScramMechanism::Sha256))
        })
        .expect("a username at the limit is accepted");
    assert_eq!(waiting.username().len(), USERNAME_BYTES_MAX);

    let over = format!("n,,n={},r=abc", "u".repeat(USERNAME_BYTES_MAX + 1));
    let refused =
        ScramServer::new(ScramMechanism::Sha256).client_first(over.as_bytes(), "srv", |_| None);
    assert!(matches!(refused, Err(ScramError::UsernameTooLong { .. })));

    let long_final = "c=biws,r=".to_owned() + &"a".repeat(MESSAGE_BYTES_MAX);
    let refused = past_first(b"n,,n=user,r=abc").client_final(long_final.as_bytes());
    assert!(matches!(refused, Err(ScramError::TooLong { .. })));
}

#[test]
fn a_bad_server_nonce_is_refused() {
    for suffix in ["", "a,b", "a b", "é"] {
        let refused = ScramServer::new(ScramMechanism::Sha256).client_first(
            b"n,,n=user,r=abc",
            suffix,
            |_| Some(quick_credential(ScramMechanism::Sha256)),
        );
        assert_eq!(refused.map(|_| ()), Err(ScramError::InvalidServerNonce));
    }
}

#[test]
fn every_truncation_of_a_valid_client_final_is_refused() {
    let stored = credential(ScramMechanism::Sha256, b"pw");
    let client = ScramClient::new(ScramMechanism::Sha256, "dave", b"pw", "clientnonce");
    let (server_first, awaiting) = ScramServer::new(ScramMechanism::Sha256)
        .client_first(&client.client_first(), "servernonce", |_| {
            Some(stored.clone())
        })
        .expect("client-first accepted");
    let (client_final, _) = client.client_final(&server_first);
    for len in 0..client_final.len() {
        let truncated = client_final.get(..len).expect("in range");
        assert!(
            awaiting.clone().client_final(truncated).is_err(),
            "a client-final cut to {len} bytes was accepted"
        );
    }
    assert!(awaiting.client_final(&client_final).is_ok());
}

#[test]
fn malformed_client_final_is_refused() {
    let proof = STANDARD.encode([0u8; 32]);
    let cases = [
        String::new(),
        "c=biws".to_owned(),
        format!("c=biws,r=abcsrv,q={proof}"),
        format!("r=abcsrv,c=biws,p={proof}"),
        format!("c=biws,p={proof}"),
        format!("c=b!ws,r=abcsrv,p={proof}"),
        "c=biws,r=abcsrv,p=not*base64".to_owned(),
        format!("c=biws,r=abcsrv,p={}", STANDARD.encode([0u8; 31])),
        format!("c=biws,r=abcsrv,1=2,p={proof}"),
    ];
    for message in cases {
        let refused = past_first(b"n,,n=user,r=abc").client_final(message.as_bytes());
        assert!(
            matches!(refused, Err(ScramError::InvalidClientFinal(_))),
            "{message:?} gave {:?}",
            refused.map(|_| ())
        );
    }
    // Extensions between r= and p= are allowed (and, being in AuthMessage, signed).
    let with_extension = format!("c=biws,r=abcsrv,x=1,p={proof}");
    assert_eq!(
        past_first(b"n,,n=user,r=abc")
            .client_final(with_extension.as_bytes())
            .map(|_| ()),
        Err(ScramError::WrongPassword)
    );
}

#[test]
fn mechanism_names_and_codes() {
    assert_eq!(ScramMechanism::Sha256.name(), "SCRAM-SHA-256");
    assert_eq!(ScramMechanism::Sha512.name(), "SCRAM-SHA-512");
    assert_eq!(ScramMechanism::Sha256.code(), 1);
    assert_eq!(ScramMechanism::Sha512.code(), 2);
    for mechanism in ScramMechanism::ALL {
        assert_eq!(ScramMechanism::from_name(mechanism.name()), Some(mechanism));
        assert_eq!(ScramMechanism::from_code(mechanism.code()), Some(mechanism));
        assert!(mechanism.accepts_iterations(4096));
        assert!(mechanism.accepts_iterations(ScramMechanism::MAX_ITERATIONS));
        assert!(!mechanism.accepts_iterations(4095));
        assert!(!mechanism.accepts_iterations(ScramMechanism::MAX_ITERATIONS + 1));
    }
    assert_eq!(ScramMechanism::from_name("scram-sha-256"), None);
    assert_eq!(ScramMechanism::from_name("SCRAM-SHA-1"), None);
    assert_eq!(ScramMechanism::from_code(0), None);
    assert_eq!(ScramMechanism::from_code(3), None);
}

#[test]
fn kafka_client_messages() {
    assert_eq!(
        ScramError::WrongPassword.kafka_client_message(ScramMechanism::Sha512, false),
        "Authentication failed during authentication due to invalid credentials with SASL \
         mechanism SCRAM-SHA-512"
    );
    assert_eq!(
        ScramError::UnknownUser.kafka_client_message(ScramMechanism::Sha256, true),
        "Authentication failed during re-authentication due to invalid credentials with SASL \
         mechanism SCRAM-SHA-256"
    );
    assert_eq!(
        ScramError::AuthorizationIdMismatch.kafka_client_message(ScramMechanism::Sha256, false),
        "Authentication failed: Client requested an authorization id that is different from \
         username"
    );
}

#[test]
fn debug_shows_no_key() {
    let stored = credential(ScramMechanism::Sha256, b"pw");
    let (_, waiting) = ScramServer::new(ScramMechanism::Sha256)
        .client_first(b"n,,n=user,r=abc", "srv", |_| Some(stored.clone()))
        .expect("accepted");
    for shown in [format!("{stored:?}"), format!("{waiting:?}")] {
        assert!(
            !shown.contains(&format!("{:?}", stored.stored_key)),
            "{shown}"
        );
        assert!(
            !shown.contains(&format!("{:?}", stored.server_key)),
            "{shown}"
        );
        assert!(
            !shown.contains("stored_key") && !shown.contains("server_key"),
            "{shown}"
        );
    }
}

#[test]
fn credentials_survive_serialization() {
    let stored = credential(ScramMechanism::Sha512, b"pw");
    let bytes = postcard::to_stdvec(&(ScramMechanism::Sha512, &stored)).expect("serializes");
    let back: (ScramMechanism, ScramCredential) =
        postcard::from_bytes(&bytes).expect("deserializes");
    assert_eq!(back, (ScramMechanism::Sha512, stored));
}

proptest! {
    #[test]
    fn arbitrary_client_first_never_panics(message in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = ScramServer::new(ScramMechanism::Sha256).client_first(&message, "srv", |_| {
            Some(quick_credential(ScramMechanism::Sha256))
        });
    }

    #[test]
    fn nearly_valid_client_first_never_panics(
        message in "(n|y|p=x)?,(a=[a-z=23CD\\x00é]{0,6})?,(m=x,)?n=[a-z=23CD,\\x00é]{0,8},r=[!-~ ]{0,8}(,[a-z=]{0,5})*",
    ) {
        let _ = ScramServer::new(ScramMechanism::Sha512).client_first(message.as_bytes(), "srv", |_| {
            Some(quick_credential(ScramMechanism::Sha512))
        });
    }

    #[test]
    fn arbitrary_client_final_never_authenticates(message in proptest::collection::vec(any::<u8>(), 0..300)) {
        prop_assert!(past_first(b"n,,n=user,r=abc").client_final(&message).is_err());
    }

    #[test]
    fn nearly_valid_client_final_never_authenticates(
        message in "c=[a-zA-Z0-9+/=]{0,8},r=(abcsrv|[!-~]{0,6})(,[a-z]{0,2}=?[a-z]{0,2})*,p=[a-zA-Z0-9+/=]{0,48}",
    ) {
        prop_assert!(past_first(b"n,,n=user,r=abc").client_final(message.as_bytes()).is_err());
    }
}
