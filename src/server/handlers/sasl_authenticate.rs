//! SaslAuthenticate (key 36) off a SASL listener.
//!
//! On a `SASL_PLAINTEXT` or `SASL_SSL` listener the exchange is the connection's
//! (`server/sasl_exchange.rs`), which answers SaslHandshake and SaslAuthenticate before
//! routing: they change who the connection speaks for. One that reaches the router came on a
//! listener without SASL (or was forwarded), and is answered ILLEGAL_SASL_STATE, as Kafka does.

use crate::protocol::messages::{SaslAuthenticateRequest, SaslAuthenticateResponse};
use crate::protocol::{ApiKey, ErrorCode};
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Authorized, Gate, Needs};

pub struct SaslAuthenticate;

impl Api for SaslAuthenticate {
    type Request = SaslAuthenticateRequest;
    type Response = SaslAuthenticateResponse;
    const KEY: ApiKey = ApiKey::SaslAuthenticate;
    const VERSIONS: (i16, i16) = (0, 2);
    const NEEDS: Needs = Needs::Nothing("the login itself");

    fn coordinator(_: &SaslAuthenticateRequest) -> Option<&str> {
        None
    }

    fn authorize(
        _: &Gate<'_>,
        _: &mut SaslAuthenticateRequest,
        _: i16,
    ) -> Authorized<SaslAuthenticateResponse> {
        Authorized::run()
    }

    async fn handle(_: Ctx<'_>, _: SaslAuthenticateRequest) -> Reply<SaslAuthenticateResponse> {
        Reply::Now(SaslAuthenticateResponse {
            error_code: ErrorCode::IllegalSaslState.code(),
            error_message: Some("SASL is not enabled on this listener".to_string()),
            ..Default::default()
        })
    }
}
