//! SaslHandshake (key 17) off a SASL listener.
//!
//! On a `SASL_PLAINTEXT` or `SASL_SSL` listener the exchange is the connection's
//! (`server/sasl_exchange.rs`), which answers SaslHandshake and SaslAuthenticate before
//! routing: they change who the connection speaks for. One that reaches the router came on a
//! listener without SASL (or was forwarded), and is answered ILLEGAL_SASL_STATE, as Kafka does.

use crate::protocol::messages::{SaslHandshakeRequest, SaslHandshakeResponse};
use crate::protocol::{ApiKey, ErrorCode};
use crate::server::api::{Api, Ctx, Reply};
use crate::server::authorize::{Authorized, Gate, Needs};

pub struct SaslHandshake;

impl Api for SaslHandshake {
    type Request = SaslHandshakeRequest;
    type Response = SaslHandshakeResponse;
    const KEY: ApiKey = ApiKey::SaslHandshake;
    const VERSIONS: (i16, i16) = (0, 1);
    const NEEDS: Needs = Needs::Nothing("the login itself");

    fn coordinator(_: &SaslHandshakeRequest) -> Option<&str> {
        None
    }

    fn authorize(
        _: &Gate<'_>,
        _: &mut SaslHandshakeRequest,
        _: i16,
    ) -> Authorized<SaslHandshakeResponse> {
        Authorized::run()
    }

    async fn handle(_: Ctx<'_>, _: SaslHandshakeRequest) -> Reply<SaslHandshakeResponse> {
        Reply::Now(SaslHandshakeResponse {
            error_code: ErrorCode::IllegalSaslState.code(),
            mechanisms: Vec::new(),
        })
    }
}
