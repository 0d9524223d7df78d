//! Who asks: the connection's caller, and a request's client as handlers and the authorizer
//! see it.

use crate::quotas::meter::Who;
use crate::quotas::resolve::user_name;

/// Who sent a request: the client id from its header, its address as Kafka shows it
/// (`/127.0.0.1`), its principal (`User:alice`), the listener it came in on, and whether
/// another agent forwarded it (such a request is answered here alone, never passed on).
#[derive(Debug, Clone, Copy)]
pub struct Client<'a> {
    pub id: Option<&'a str>,
    pub host: &'a str,
    pub principal: &'a str,
    pub listener: &'a str,
    pub lane: u16,
    pub forwarded: bool,
}

impl<'a> Client<'a> {
    /// Who the client's requests count against, for quotas: its user name and client id.
    pub fn who(&self) -> Who<'a> {
        Who {
            user: user_name(self.principal),
            client_id: self.id.unwrap_or(""),
        }
    }

    /// Who the client is, for a request sent on its behalf (forwarded to another agent).
    pub fn caller(&self) -> Caller {
        Caller {
            host: self.host.to_string(),
            principal: self.principal.to_string(),
            listener: self.listener.to_string(),
            lane: self.lane,
        }
    }
}

/// The principal of a client that did not authenticate (Kafka's `User:ANONYMOUS`).
pub const ANONYMOUS: &str = "User:ANONYMOUS";

/// Who a connection speaks for, as a request is routed: its address as Kafka shows it
/// (`/127.0.0.1`), its principal, the listener it came in on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub host: String,
    pub principal: String,
    pub listener: String,
    /// The lane of the agent the connection was opened for (`placement`; 0: the agent).
    pub lane: u16,
}

impl Caller {
    /// The caller as a request's client (without a client id).
    pub fn client(&self, origin: Origin) -> Client<'_> {
        Client {
            id: None,
            host: &self.host,
            principal: &self.principal,
            listener: &self.listener,
            lane: self.lane,
            forwarded: origin == Origin::Forwarded,
        }
    }

    /// The bare IP, as ACL hosts name it (`host` without Kafka's leading slash).
    pub fn ip(&self) -> &str {
        self.host.trim_start_matches('/')
    }
}

/// Where a request came from: a client connection, or another agent forwarding it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Client,
    Forwarded,
}
