//! Share sessions (KIP-932): which partitions a share consumer reads from this agent, and the
//! epoch its next ShareFetch or ShareAcknowledge must carry, after Kafka's `ShareSessionCache`.
//!
//! A session is keyed by group, member and the broker id the client connected to (an agent
//! shows several with `--broker-ids-per-agent`, and clients keep one session per broker).
//! Epoch 0 opens a session (replacing any before it), each request moves it on by one, -1
//! closes it. Sessions are this agent's alone: a client that reaches another agent (or this
//! one after a restart) is told SHARE_SESSION_NOT_FOUND and opens a new one. The records a
//! member holds are in the replicated state, not here, so nothing is lost with a session.

use crate::ids::TopicPartition;
use crate::protocol::ErrorCode;
use std::collections::HashMap;
use std::sync::Mutex;

/// Epoch of a request that opens a session.
pub const INITIAL_EPOCH: i32 = 0;
/// Epoch of a request that closes it.
pub const FINAL_EPOCH: i32 = -1;

/// Kafka's group.share.max.share.sessions default.
pub const SESSIONS_MAX: usize = 2_000;
/// The most partitions one session holds.
pub const SESSION_PARTITIONS_MAX: usize = 10_000;

type Key = (String, String, u16);

#[derive(Debug, Default)]
struct Session {
    /// The epoch the next request must carry.
    epoch: i32,
    /// In the order they joined (the fetch rotates over them).
    partitions: Vec<TopicPartition>,
}

/// What a request may do once its session is checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Context {
    /// Read these partitions (the whole session, not only those the request names).
    Fetch(Vec<TopicPartition>),
    /// The session closed: acknowledge, read nothing, give back the member's records in the
    /// session's partitions (the member's sessions on other brokers keep theirs).
    Final(Vec<TopicPartition>),
    /// Acknowledgements only (ShareAcknowledge).
    Acknowledge,
}

#[derive(Default)]
pub struct ShareSessions {
    sessions: Mutex<HashMap<Key, Session>>,
}

fn next(epoch: i32) -> i32 {
    if epoch == i32::MAX { 1 } else { epoch + 1 }
}

impl ShareSessions {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, Session>> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A ShareFetch's session: opened, moved on (partitions added and forgotten) or closed.
    pub fn fetch(
        &self,
        (group, member, lane): (&str, &str, u16),
        epoch: i32,
        add: &[TopicPartition],
        forget: &[TopicPartition],
    ) -> Result<Context, ErrorCode> {
        let key = (group.to_string(), member.to_string(), lane);
        let mut sessions = self.lock();
        match epoch {
            INITIAL_EPOCH => {
                if !sessions.contains_key(&key) && sessions.len() >= SESSIONS_MAX {
                    return Err(ErrorCode::ShareSessionLimitReached);
                }
                let mut partitions = Vec::new();
                for tp in add {
                    if !partitions.contains(tp) && partitions.len() < SESSION_PARTITIONS_MAX {
                        partitions.push(*tp);
                    }
                }
                let session = Session {
                    epoch: next(INITIAL_EPOCH),
                    partitions: partitions.clone(),
                };
                sessions.insert(key, session);
                Ok(Context::Fetch(partitions))
            }
            FINAL_EPOCH => match sessions.remove(&key) {
                Some(session) => Ok(Context::Final(session.partitions)),
                None => Err(ErrorCode::ShareSessionNotFound),
            },
            _ => {
                let session = sessions
                    .get_mut(&key)
                    .ok_or(ErrorCode::ShareSessionNotFound)?;
                if session.epoch != epoch {
                    return Err(ErrorCode::InvalidShareSessionEpoch);
                }
                session.partitions.retain(|tp| !forget.contains(tp));
                for tp in add {
                    if !session.partitions.contains(tp)
                        && session.partitions.len() < SESSION_PARTITIONS_MAX
                    {
                        session.partitions.push(*tp);
                    }
                }
                session.epoch = next(epoch);
                Ok(Context::Fetch(session.partitions.clone()))
            }
        }
    }

    /// A ShareAcknowledge's session: moved on, or closed.
    pub fn acknowledge(
        &self,
        (group, member, lane): (&str, &str, u16),
        epoch: i32,
    ) -> Result<Context, ErrorCode> {
        let key = (group.to_string(), member.to_string(), lane);
        let mut sessions = self.lock();
        if epoch == INITIAL_EPOCH {
            return Err(ErrorCode::InvalidShareSessionEpoch);
        }
        let session = sessions
            .get_mut(&key)
            .ok_or(ErrorCode::ShareSessionNotFound)?;
        if epoch == FINAL_EPOCH {
            let partitions = std::mem::take(&mut session.partitions);
            sessions.remove(&key);
            return Ok(Context::Final(partitions));
        }
        if session.epoch != epoch {
            return Err(ErrorCode::InvalidShareSessionEpoch);
        }
        session.epoch = next(epoch);
        Ok(Context::Acknowledge)
    }

    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tp(partition: i32) -> TopicPartition {
        TopicPartition {
            topic_id: uuid::Uuid::from_u128(7),
            partition,
        }
    }

    const KEY: (&str, &str, u16) = ("g", "m", 0);

    #[test]
    fn a_session_opens_moves_on_and_closes() {
        let sessions = ShareSessions::default();
        assert_eq!(
            sessions.fetch(KEY, 1, &[], &[]),
            Err(ErrorCode::ShareSessionNotFound)
        );
        assert_eq!(
            sessions.fetch(KEY, 0, &[tp(0), tp(1)], &[]),
            Ok(Context::Fetch(vec![tp(0), tp(1)]))
        );
        // Incremental: the whole session is read, whatever the request names.
        assert_eq!(
            sessions.fetch(KEY, 1, &[tp(2)], &[tp(0)]),
            Ok(Context::Fetch(vec![tp(1), tp(2)]))
        );
        assert_eq!(
            sessions.fetch(KEY, 1, &[], &[]),
            Err(ErrorCode::InvalidShareSessionEpoch)
        );
        // ShareFetch and ShareAcknowledge share one epoch sequence.
        assert_eq!(sessions.acknowledge(KEY, 2), Ok(Context::Acknowledge));
        assert_eq!(
            sessions.fetch(KEY, 3, &[], &[]),
            Ok(Context::Fetch(vec![tp(1), tp(2)]))
        );
        assert_eq!(
            sessions.acknowledge(KEY, -1),
            Ok(Context::Final(vec![tp(1), tp(2)]))
        );
        assert_eq!(
            sessions.acknowledge(KEY, -1),
            Err(ErrorCode::ShareSessionNotFound)
        );
        assert!(sessions.is_empty());
    }

    #[test]
    fn acknowledgements_cannot_open_a_session() {
        let sessions = ShareSessions::default();
        assert_eq!(
            sessions.acknowledge(KEY, 0),
            Err(ErrorCode::InvalidShareSessionEpoch)
        );
    }
}
