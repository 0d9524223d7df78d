//! Kafka security, judged by real clients: confluent-kafka (librdkafka), kafka-python and kcat
//! produce and consume over SSL (with and without client certificates), SASL_PLAINTEXT and
//! SASL_SSL with PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER, with sessions short
//! enough that clients re-authenticate (KIP-368); wrong passwords, unknown users and expired
//! tokens are refused with SASL_AUTHENTICATION_FAILED and never logged. Certificates, keys and
//! the JWKS are made by the test.

// These tests drive real processes over real sockets, in real time.
#![allow(clippy::disallowed_methods)]

mod support;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use base64::Engine;
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use support::{Floe, free_addr, run_client, temp_dir};

const ISSUER: &str = "https://issuer.floe.test";
const AUDIENCE: &str = "floe";

/// A CA, a server certificate for localhost and 127.0.0.1, and a client certificate for
/// `CN=alice,O=floe`, as PEM files in `dir`.
struct Certificates {
    ca: PathBuf,
    server_cert: PathBuf,
    server_key: PathBuf,
    client_cert: PathBuf,
    client_key: PathBuf,
}

fn certificates(dir: &Path) -> Certificates {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("params");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "floe test CA");
    let ca_key = KeyPair::generate().expect("key");
    let ca_cert = ca_params.self_signed(&ca_key).expect("CA");
    let issuer = Issuer::new(ca_params, ca_key);
    let leaf = |sans: Vec<String>, cn: &str| {
        let mut params = CertificateParams::new(sans).expect("params");
        params
            .distinguished_name
            .push(DnType::OrganizationName, "floe");
        params.distinguished_name.push(DnType::CommonName, cn);
        let key = KeyPair::generate().expect("key");
        let cert = params.signed_by(&key, &issuer).expect("signed");
        (cert.pem(), key.serialize_pem())
    };
    let (server_pem, server_key) = leaf(vec!["localhost".into(), "127.0.0.1".into()], "localhost");
    let (client_pem, client_key) = leaf(vec![], "alice");
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).expect("write");
        path
    };
    Certificates {
        ca: write("ca.pem", &ca_cert.pem()),
        server_cert: write("server.pem", &server_pem),
        server_key: write("server.key", &server_key),
        client_cert: write("client.pem", &client_pem),
        client_key: write("client.key", &client_key),
    }
}

/// An ES256 key that signs OAUTHBEARER tokens, and its JWKS.
struct TokenIssuer {
    key: EcdsaKeyPair,
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

impl TokenIssuer {
    fn new() -> TokenIssuer {
        TokenIssuer {
            key: EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING).expect("key"),
        }
    }

    fn jwks(&self) -> String {
        let point = self.key.public_key().as_ref();
        json!({"keys": [{
            "kty": "EC", "crv": "P-256", "kid": "test-key", "alg": "ES256", "use": "sig",
            "x": b64(&point[1..33]), "y": b64(&point[33..65]),
        }]})
        .to_string()
    }

    /// A token for `subject` that expires `expires_in` seconds from now (negative: expired).
    fn token(&self, subject: &str, expires_in: i64) -> String {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("time")
            .as_secs() as i64;
        let header = b64(json!({"alg": "ES256", "kid": "test-key", "typ": "JWT"})
            .to_string()
            .as_bytes());
        let claims = json!({
            "sub": subject, "iss": ISSUER, "aud": AUDIENCE,
            "iat": now - 60, "exp": now + expires_in,
        });
        let payload = b64(claims.to_string().as_bytes());
        let signing_input = format!("{header}.{payload}");
        let rng = aws_lc_rs::rand::SystemRandom::new();
        let signature = self.key.sign(&rng, signing_input.as_bytes()).expect("sign");
        format!("{signing_input}.{}", b64(signature.as_ref()))
    }
}

struct Secured {
    floe: Floe,
    plaintext: SocketAddr,
    ssl: SocketAddr,
    sasl_plaintext: SocketAddr,
    sasl_ssl: SocketAddr,
    certs: Certificates,
}

fn start(dir: &Path, issuer: &TokenIssuer, extra: &[&str]) -> Secured {
    let certs = certificates(dir);
    let users = dir.join("plain.users");
    std::fs::write(
        &users,
        "# PLAIN users\nalice:alice-secret\nadmin:admin-secret\n",
    )
    .expect("users");
    let jwks = dir.join("jwks.json");
    std::fs::write(&jwks, issuer.jwks()).expect("jwks");
    let (plaintext, ssl, sasl_plaintext, sasl_ssl) =
        (free_addr(), free_addr(), free_addr(), free_addr());
    let listeners = format!(
        "PLAINTEXT://{plaintext},SSL://{ssl},SASL_PLAINTEXT://{sasl_plaintext},SASL_SSL://{sasl_ssl}"
    );
    let mut flags: Vec<String> = [
        "--listeners",
        &listeners,
        "--ssl-certificate-file",
        &certs.server_cert.display().to_string(),
        "--ssl-key-file",
        &certs.server_key.display().to_string(),
        "--ssl-truststore-file",
        &certs.ca.display().to_string(),
        "--ssl-client-auth",
        "requested",
        "--sasl-plain-users-file",
        &users.display().to_string(),
        "--sasl-oauthbearer-jwks-file",
        &jwks.display().to_string(),
        "--sasl-oauthbearer-expected-issuer",
        ISSUER,
        "--sasl-oauthbearer-expected-audience",
        AUDIENCE,
        "--default-partitions",
        "2",
        "--group-initial-rebalance-delay",
        "0s",
    ]
    .map(String::from)
    .to_vec();
    flags.extend(extra.iter().map(|s| s.to_string()));
    let floe = Floe::start_at(&dir.join("data"), plaintext, free_addr(), &flags);
    Secured {
        floe,
        plaintext,
        ssl,
        sasl_plaintext,
        sasl_ssl,
        certs,
    }
}

fn client(settings: Value) -> Value {
    let out = run_client(
        "python3",
        &["tests/clients/security_client.py", &settings.to_string()],
    );
    serde_json::from_str(out.lines().last().expect("a JSON line")).expect("JSON")
}

fn assert_ok(result: &Value, what: &str) {
    assert_eq!(result["ok"], true, "{what}: {result}");
}

#[test]
fn clients_authenticate_over_every_security_protocol_and_bad_credentials_are_refused() {
    let dir = temp_dir();
    let issuer = TokenIssuer::new();
    // Sessions of 3 s: every round trip below outlives several and re-authenticates.
    let s = start(dir.path(), &issuer, &["--connections-max-reauth", "3s"]);
    let ca = s.certs.ca.display().to_string();

    // SCRAM users are made through the Kafka API (AlterUserScramCredentials).
    for (user, mechanism) in [("bob", "SCRAM-SHA-256"), ("carol", "SCRAM-SHA-512")] {
        let made = client(json!({
            "client": "confluent", "bootstrap": s.plaintext.to_string(), "protocol": "PLAINTEXT",
            "topic": "-", "action": "scram", "scram_user": user,
            "scram_mechanism": mechanism, "scram_password": format!("{user}-secret"),
        }));
        assert_ok(&made, "AlterUserScramCredentials");
    }

    let token = issuer.token("dave", 600);
    let mut case = 0;
    for library in ["confluent", "kafka-python"] {
        let logins: Vec<(&str, SocketAddr, Value)> = vec![
            ("SSL", s.ssl, json!({})),
            (
                "SSL",
                s.ssl,
                json!({"cert": s.certs.client_cert, "key": s.certs.client_key}),
            ),
            (
                "SASL_SSL",
                s.sasl_ssl,
                json!({"mechanism": "PLAIN", "user": "alice", "password": "alice-secret"}),
            ),
            (
                "SASL_SSL",
                s.sasl_ssl,
                json!({"mechanism": "SCRAM-SHA-256", "user": "bob", "password": "bob-secret"}),
            ),
            (
                "SASL_SSL",
                s.sasl_ssl,
                json!({"mechanism": "SCRAM-SHA-512", "user": "carol", "password": "carol-secret"}),
            ),
            (
                "SASL_SSL",
                s.sasl_ssl,
                json!({"mechanism": "OAUTHBEARER", "token": token}),
            ),
            (
                "SASL_PLAINTEXT",
                s.sasl_plaintext,
                json!({"mechanism": "SCRAM-SHA-512", "user": "carol", "password": "carol-secret"}),
            ),
            (
                "SASL_PLAINTEXT",
                s.sasl_plaintext,
                json!({"mechanism": "PLAIN", "user": "bob", "password": "bob-secret"}),
            ),
        ];
        for (protocol, addr, login) in logins {
            case += 1;
            let mut settings = json!({
                "client": library, "bootstrap": addr.to_string(), "protocol": protocol,
                "ca": ca, "topic": format!("secure-{case}"), "group": format!("g-{case}"),
                "records": 20, "action": "roundtrip",
            });
            for (k, v) in login.as_object().expect("object") {
                settings[k] = v.clone();
            }
            let result = client(settings.clone());
            assert_ok(&result, &format!("{library} {protocol} {login}"));
            assert_eq!(result["consumed"], 20, "{library} {protocol} {login}");
        }
    }

    // kcat (librdkafka's command line) over SSL.
    let bootstrap = s.ssl.to_string();
    let kcat = |args: &[&str], input: &str| {
        use std::io::Write;
        // Cargo points LD_LIBRARY_PATH at the build's own librdkafka (built without TLS for the
        // rdkafka crate); kcat must load the system's.
        let mut child = std::process::Command::new("kcat")
            .env_remove("LD_LIBRARY_PATH")
            .args(["-b", &bootstrap, "-X", "security.protocol=SSL", "-X"])
            .arg(format!("ssl.ca.location={ca}"))
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("kcat (the README test command installs it)");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
            .expect("write");
        let out = child.wait_with_output().expect("kcat");
        assert!(
            out.status.success(),
            "kcat {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    kcat(&["-P", "-t", "kcat-ssl"], "one\ntwo\nthree\n");
    let read = kcat(
        &["-C", "-t", "kcat-ssl", "-o", "beginning", "-e", "-c", "3"],
        "",
    );
    let mut lines: Vec<&str> = read.lines().collect();
    lines.sort_unstable();
    assert_eq!(lines, ["one", "three", "two"]);

    // Refusals: a wrong password, an unknown user, an expired token.
    let expired = issuer.token("dave", -600);
    for (library, login) in [
        (
            "confluent",
            json!({"mechanism": "PLAIN", "user": "alice", "password": "wrong-password"}),
        ),
        (
            "confluent",
            json!({"mechanism": "SCRAM-SHA-256", "user": "nobody", "password": "nobody-password"}),
        ),
        (
            "confluent",
            json!({"mechanism": "OAUTHBEARER", "token": expired}),
        ),
        (
            "kafka-python",
            json!({"mechanism": "SCRAM-SHA-512", "user": "carol", "password": "wrong-password"}),
        ),
    ] {
        let mut settings = json!({
            "client": library, "bootstrap": s.sasl_ssl.to_string(), "protocol": "SASL_SSL",
            "ca": ca, "topic": "refused", "records": 1, "action": "produce",
        });
        for (k, v) in login.as_object().expect("object") {
            settings[k] = v.clone();
        }
        let result = client(settings);
        assert_eq!(result["ok"], false, "{library} {login} was accepted");
        // kafka-python reports a refused login as a bootstrap timeout; librdkafka names it.
        let said = format!("{} {}", result["error"], result["message"]).to_lowercase();
        assert!(
            library == "kafka-python" || said.contains("authentication"),
            "{library} {login}: not an authentication failure: {result}"
        );
    }
    let failures: f64 = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"]
        .iter()
        .filter_map(|m| {
            support::metric(
                s.floe.admin,
                &format!("floe_sasl_authentications_total{{mechanism=\"{m}\",result=\"failure\"}}"),
            )
        })
        .sum();
    assert!(failures >= 4.0, "failed logins counted: {failures}");
    let successes = support::metric(
        s.floe.admin,
        "floe_sasl_authentications_total{mechanism=\"SCRAM-SHA-256\",result=\"success\"}",
    )
    .unwrap_or(0.0);
    assert!(successes >= 2.0, "SCRAM logins counted: {successes}");
    let log = s.floe.log();
    for secret in [
        "alice-secret",
        "bob-secret",
        "carol-secret",
        "wrong-password",
        &token,
        &expired,
    ] {
        assert!(!log.contains(secret), "a secret is in the log");
    }
}

/// One ACL binding for the client script (confluent-kafka's enum names).
fn acl(
    resource: &str,
    name: &str,
    pattern: &str,
    principal: &str,
    operation: &str,
    permission: &str,
) -> Value {
    json!({"resource": resource, "name": name, "pattern": pattern, "principal": principal,
           "operation": operation, "permission": permission})
}

/// Each group's error and, in order, each topic's partitions with their errors, as an
/// OffsetFetch answers them.
type OffsetFetchAnswer = Vec<(String, i16, Vec<(String, i16)>)>;

/// OffsetFetch at `version` for `groups` (one below v8) of partition 0 of each of `topics`
/// (`None`: all the group committed), as `user` over SASL/PLAIN, straight on the wire: a
/// client looks the coordinator up first, which the same group ACL refuses, so only a raw
/// request reaches OffsetFetch's own checks.
fn offset_fetch_as(
    addr: SocketAddr,
    user: &str,
    version: i16,
    groups: &[&str],
    topics: Option<&[&str]>,
) -> OffsetFetchAnswer {
    use floe::protocol::messages::offset_fetch_request::{
        OffsetFetchRequestGroup, OffsetFetchRequestTopic, OffsetFetchRequestTopics,
    };
    use floe::protocol::messages::*;
    let request = if version < 8 {
        OffsetFetchRequest {
            group_id: groups[0].into(),
            topics: topics.map(|topics| {
                topics
                    .iter()
                    .map(|&name| OffsetFetchRequestTopic {
                        name: name.into(),
                        partition_indexes: vec![0],
                        ..Default::default()
                    })
                    .collect()
            }),
            ..Default::default()
        }
    } else {
        OffsetFetchRequest {
            groups: groups
                .iter()
                .map(|&group_id| OffsetFetchRequestGroup {
                    group_id: group_id.into(),
                    member_epoch: -1,
                    topics: topics.map(|topics| {
                        topics
                            .iter()
                            .map(|&name| OffsetFetchRequestTopics {
                                name: name.into(),
                                partition_indexes: vec![0],
                                ..Default::default()
                            })
                            .collect()
                    }),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    };
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let response = runtime.block_on(async {
        use floe::client::{call, connect};
        let (mut tx, mut rx) = connect(&addr.to_string()).await.expect("connect");
        let handshake = SaslHandshakeRequest {
            mechanism: "PLAIN".into(),
        };
        call(&mut tx, &mut rx, 1, RequestBody::SaslHandshake(handshake))
            .await
            .expect("handshake");
        let authenticate = SaslAuthenticateRequest {
            auth_bytes: format!("\0{user}\0{user}-secret").into_bytes().into(),
            ..Default::default()
        };
        match call(
            &mut tx,
            &mut rx,
            2,
            RequestBody::SaslAuthenticate(authenticate),
        )
        .await
        {
            Ok(ResponseBody::SaslAuthenticate(r)) => assert_eq!(r.error_code, 0, "{r:?}"),
            other => panic!("authentication: {other:?}"),
        }
        // A connection closed here is the failure this checks for.
        call(&mut tx, &mut rx, version, RequestBody::OffsetFetch(request))
            .await
            .expect("an OffsetFetch answer, not a closed connection")
    });
    let ResponseBody::OffsetFetch(response) = response else {
        panic!("not an OffsetFetch response: {response:?}");
    };
    if version < 8 {
        let partitions = response
            .topics
            .iter()
            .flat_map(|t| t.partitions.iter().map(|p| (t.name.clone(), p.error_code)))
            .collect();
        return vec![(groups[0].into(), response.error_code, partitions)];
    }
    response
        .groups
        .into_iter()
        .map(|g| {
            let partitions = g
                .topics
                .iter()
                .flat_map(|t| t.partitions.iter().map(|p| (t.name.clone(), p.error_code)))
                .collect();
            (g.group_id, g.error_code, partitions)
        })
        .collect()
}

#[test]
fn acls_decide_what_each_principal_may_do_and_survive_a_restart() {
    let dir = temp_dir();
    let issuer = TokenIssuer::new();
    let flags = ["--authorizer", "acl", "--super-users", "User:admin"];
    let s = start(dir.path(), &issuer, &flags);
    let login = |user: &str| {
        json!({
            "client": "confluent", "bootstrap": s.sasl_plaintext.to_string(),
            "protocol": "SASL_PLAINTEXT", "mechanism": "PLAIN", "user": user,
            "password": format!("{user}-secret"), "records": 5,
        })
    };
    let with = |base: &Value, extra: Value| {
        let mut v = base.clone();
        for (k, x) in extra.as_object().expect("object") {
            v[k] = x.clone();
        }
        v
    };
    let admin = login("admin");
    let alice = login("alice");

    // The super user needs no ACL: it creates the topics and the ACLs, and writes.
    let made = client(with(
        &admin,
        json!({
            "action": "admin", "topic": "-",
            "create_topics": ["orders", "payments-eu", "secret", "hidden"],
            "acls": [
                acl("TOPIC", "payments-", "PREFIXED", "User:alice", "READ", "ALLOW"),
                acl("TOPIC", "orders", "LITERAL", "User:alice", "WRITE", "ALLOW"),
                acl("GROUP", "alice-", "PREFIXED", "User:alice", "READ", "ALLOW"),
                acl("TOPIC", "secret", "LITERAL", "User:alice", "READ", "ALLOW"),
                acl("TOPIC", "secret", "LITERAL", "User:*", "READ", "DENY"),
            ],
        }),
    ));
    assert_ok(&made, "the super user's set-up");
    for topic in ["orders", "payments-eu", "secret", "hidden"] {
        let wrote = client(with(&admin, json!({"action": "produce", "topic": topic})));
        assert_ok(&wrote, &format!("the super user writes {topic}"));
    }
    // The super user reads "hidden" in alice's group: its offsets are the group's.
    let read = client(with(
        &admin,
        json!({"action": "consume", "topic": "hidden", "group": "alice-1"}),
    ));
    assert_ok(&read, "the super user reads hidden in alice-1");

    let checks = |when: &str| {
        // Metadata shows alice what she may describe (READ and WRITE imply DESCRIBE).
        let seen = client(with(&alice, json!({"action": "admin", "topic": "-"})));
        assert_ok(&seen, "alice lists topics");
        assert_eq!(
            seen["topics"],
            json!(["orders", "payments-eu", "secret"]),
            "{when}"
        );
        // A prefixed READ and a prefixed group: allowed.
        let read = client(with(
            &alice,
            json!({"action": "consume", "topic": "payments-eu", "group": "alice-1"}),
        ));
        assert_ok(&read, &format!("{when}: alice reads payments-eu"));
        // WRITE without READ: TOPIC_AUTHORIZATION_FAILED on Fetch.
        let fetch = client(with(
            &alice,
            json!({"action": "consume", "topic": "orders", "group": "alice-2"}),
        ));
        assert_eq!(
            fetch["error"], "TOPIC_AUTHORIZATION_FAILED",
            "{when}: {fetch}"
        );
        // A group without READ: GROUP_AUTHORIZATION_FAILED on JoinGroup.
        let join = client(with(
            &alice,
            json!({"action": "consume", "topic": "payments-eu", "group": "bob-group"}),
        ));
        assert_eq!(
            join["error"], "GROUP_AUTHORIZATION_FAILED",
            "{when}: {join}"
        );
        // OffsetFetch of a group without DESCRIBE: GROUP_AUTHORIZATION_FAILED where each
        // version carries it, as Kafka's getErrorResponse answers (v0 and v1 in each
        // partition, v2 to v7 on top alone, from v8 in each group refused, beside the groups
        // allowed).
        let alice_fetches = |version, groups: &[&str], topics: Option<&[&str]>| {
            let mut answer = offset_fetch_as(s.sasl_plaintext, "alice", version, groups, topics);
            answer.sort();
            answer
        };
        let named = Some(&["payments-eu"][..]);
        let tp = |topic: &str, code| (topic.to_string(), code);
        assert_eq!(
            alice_fetches(1, &["bob-group"], named),
            [("bob-group".into(), 0, vec![tp("payments-eu", 30)])],
            "{when}: v1"
        );
        assert_eq!(
            alice_fetches(5, &["bob-group"], named),
            [("bob-group".into(), 30, vec![])],
            "{when}: v5"
        );
        assert_eq!(
            alice_fetches(8, &["alice-1", "bob-group"], named),
            [
                ("alice-1".into(), 0, vec![tp("payments-eu", 0)]),
                ("bob-group".into(), 30, vec![])
            ],
            "{when}: v8"
        );
        // Offsets of a topic alice may not describe: 29 when she names it, left out when she
        // asks for all the group committed (the super user committed some on "hidden" for
        // alice-1), as Kafka does.
        for version in [5, 8] {
            assert_eq!(
                alice_fetches(version, &["alice-1"], Some(&["payments-eu", "hidden"])),
                [(
                    "alice-1".into(),
                    0,
                    vec![tp("payments-eu", 0), tp("hidden", 29)]
                )],
                "{when}: v{version}, named"
            );
            assert_eq!(
                alice_fetches(version, &["alice-1"], None),
                [("alice-1".into(), 0, vec![tp("payments-eu", 0)])],
                "{when}: v{version}, all"
            );
            let everything =
                offset_fetch_as(s.sasl_plaintext, "admin", version, &["alice-1"], None);
            assert!(
                everything[0].2.contains(&tp("hidden", 0)),
                "{when}: v{version}, the super user sees every offset: {everything:?}"
            );
        }
        // Deny beats allow.
        let denied = client(with(
            &alice,
            json!({"action": "consume", "topic": "secret", "group": "alice-3"}),
        ));
        assert_eq!(
            denied["error"], "TOPIC_AUTHORIZATION_FAILED",
            "{when}: {denied}"
        );
        // WRITE allows an idempotent producer; a topic without WRITE refuses it.
        let wrote = client(with(
            &alice,
            json!({"action": "produce", "topic": "orders"}),
        ));
        assert_ok(&wrote, &format!("{when}: alice writes orders"));
        let refused = client(with(
            &alice,
            json!({"action": "produce", "topic": "payments-eu"}),
        ));
        assert_eq!(
            refused["error"], "TOPIC_AUTHORIZATION_FAILED",
            "{when}: {refused}"
        );
    };
    checks("before a restart");
    let denials = support::metric(s.floe.admin, "floe_authorization_denied_total").unwrap_or(0.0);
    assert!(denials >= 4.0, "denials counted: {denials}");

    // The ACLs are in the replicated state: a restarted node enforces the same.
    let Secured {
        mut floe,
        plaintext,
        ..
    } = s;
    let data = floe.data_dir.clone();
    let (addr, admin_addr) = (floe.addr, floe.admin);
    floe.stop();
    let _ = (data, addr, admin_addr, plaintext);
    let s = start(dir.path(), &issuer, &flags);
    let alice = json!({
        "client": "confluent", "bootstrap": s.sasl_plaintext.to_string(),
        "protocol": "SASL_PLAINTEXT", "mechanism": "PLAIN", "user": "alice",
        "password": "alice-secret", "records": 5,
    });
    let read = client(with(
        &alice,
        json!({"action": "consume", "topic": "payments-eu", "group": "alice-9"}),
    ));
    assert_ok(&read, "after a restart: alice reads payments-eu");
    let fetch = client(with(
        &alice,
        json!({"action": "consume", "topic": "orders", "group": "alice-8"}),
    ));
    assert_eq!(
        fetch["error"], "TOPIC_AUTHORIZATION_FAILED",
        "after a restart: {fetch}"
    );
}
