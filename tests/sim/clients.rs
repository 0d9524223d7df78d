//! Simulated agents and producers: the commit path above the quorum.
//!
//! An agent gathers produced batches into an object, PUTs it (which may fail, or succeed
//! with its answer lost — either way the batches fail and their producers retry), then
//! commits `CommitObject` through whichever voter leads, retrying the same command when an
//! answer does not come (the leader may have died after appending it: the log can then hold
//! the command twice) until its deadline; then its batches fail too, though the commit may
//! still land. This is what `produce::pipeline` and `Quorum::write` do.
//!
//! An agent also keeps itself registered as `node::registration` does: a `RenewAgent` for
//! `AGENT_LEASE_MS` every third of the lease, through the same writes (retried alike, given
//! up at the same deadline), from its start and again from every restart; a crashed agent
//! renews nothing. Its wall clock is off (`clock_skew_ms`), and it writes its own idea of its
//! expiry into the record as agents before `RenewAgent` did: the state must take neither into
//! account, and the checker would see it if it did.
//!
//! A producer keeps one batch in flight per partition and retries it, with the same sequence
//! numbers when it is idempotent, until it is acknowledged. It sends each attempt to one of
//! the agents a Metadata answer would name (those the state lists live).

use super::{Addr, Msg, Outbox, WALL_CLOCK_BASE_MS};
use floe::ids::{ObjectKey, ProducerEpoch, ProducerId, TopicPartition};
use floe::metadata::state::{
    Agent as AgentRecord, AgentOutcome, BatchOutcome, Command, CommitObject, CommittedBatch,
    LogOutcome, Outcome, PartitionBatches, RenewAgent,
};
use floe::random::SplitMix64;

/// How long an agent retries a write (a commit, a renewal) before giving it up; a commit's
/// batches then fail.
const COMMIT_DEADLINE_MS: u64 = 1_000;
const COMMIT_RETRY_MS: u64 = 100;
const PRODUCE_TIMEOUT_MS: u64 = 1_500;
/// The lease an agent renews for (state time), as `config::agent_lease` has it by default.
pub const AGENT_LEASE_MS: i64 = 4_000;
/// How often an agent renews: a third of its lease, as `node::registration` does.
const RENEW_EVERY_MS: u64 = AGENT_LEASE_MS as u64 / 3;

struct Pending {
    producer: Addr,
    request: u64,
    partition: TopicPartition,
    batch: CommittedBatch,
    since: u64,
}

enum Stage {
    Uploading { done_at: u64, fails: bool },
    Committing { retry_at: u64, requests: Vec<u64> },
}

/// A registration renewal on its way to the quorum: the same command until it is applied or
/// its deadline passes.
struct Renewal {
    command: Command,
    requests: Vec<u64>,
    retry_at: u64,
    deadline: u64,
}

struct Object {
    key: ObjectKey,
    /// By partition, in the order the command lists them.
    partitions: Vec<(TopicPartition, Vec<Pending>)>,
    stage: Stage,
    deadline: u64,
}

pub struct Agent {
    pub id: Addr,
    pub up: bool,
    voters: Vec<Addr>,
    queue: Vec<Pending>,
    object: Option<Object>,
    /// Object keys never repeat (real keys are random), across restarts too.
    objects_made: u64,
    requests: u64,
    leader_hint: Option<Addr>,
    pub put_fail: f64,
    /// Until when this agent cannot reach the object store: every PUT ending before then fails.
    pub store_cut_until: u64,
    /// Where this agent's wall clock is off (ms). Nothing the state decides may depend on it.
    pub clock_skew_ms: i64,
    renewal: Option<Renewal>,
    /// When the next renewal starts (none is under way).
    renew_at: u64,
    /// Whether it still renews (stopped at the end of a run, so voters can agree on a last
    /// index).
    pub renewing: bool,
}

impl Agent {
    pub fn new(id: Addr, voters: Vec<Addr>, put_fail: f64) -> Agent {
        Agent {
            id,
            up: true,
            voters,
            queue: Vec::new(),
            object: None,
            objects_made: 0,
            requests: 0,
            leader_hint: None,
            put_fail,
            store_cut_until: 0,
            clock_skew_ms: 0,
            renewal: None,
            renew_at: 0,
            renewing: true,
        }
    }

    /// A crash: accepted batches are gone; their producers time out and retry. Its
    /// registration is renewed no more; its lease runs out.
    pub fn crash(&mut self) {
        self.up = false;
        self.queue.clear();
        self.object = None;
        self.renewal = None;
        self.leader_hint = None;
    }

    /// Back up: it registers again at once, as a starting agent does.
    pub fn restart(&mut self, now: u64) {
        self.up = true;
        self.renew_at = now;
    }

    /// Sends `command` to the voter it thinks leads (any, if it knows none); the request's id.
    fn write(&mut self, rng: &mut SplitMix64, command: Command, out: &mut Outbox) -> u64 {
        let to = self
            .leader_hint
            .unwrap_or_else(|| self.voters[(rng.next_u64() % self.voters.len() as u64) as usize]);
        self.requests += 1;
        out.push((
            to,
            Msg::Write {
                request: self.requests,
                command,
            },
        ));
        self.requests
    }

    /// This agent's renewal: `AGENT_LEASE_MS` of the state's time from the entry that applies
    /// it. The record also claims an expiry by the agent's own wall clock, as agents before
    /// `RenewAgent` did: the state must ignore it, or an agent whose clock is minutes behind
    /// would be dropped at once and one minutes ahead listed long after it died.
    fn registration(&self, now: u64) -> Command {
        let wall_ms = WALL_CLOCK_BASE_MS + now as i64 + self.clock_skew_ms;
        RenewAgent {
            agent: AgentRecord {
                id: self.id as i32,
                host: format!("agent-{}", self.id),
                port: 9092,
                zone: None,
                internal_addr: None,
                lease_expires_ms: wall_ms + AGENT_LEASE_MS,
            },
            lease_ms: AGENT_LEASE_MS,
        }
        .into()
    }

    fn send_renewal(&mut self, now: u64, rng: &mut SplitMix64, out: &mut Outbox) {
        let Some(command) = self.renewal.as_ref().map(|r| r.command.clone()) else {
            return;
        };
        if !self.renewing {
            return;
        }
        let request = self.write(rng, command, out);
        if let Some(renewal) = &mut self.renewal {
            renewal.retry_at = now + COMMIT_RETRY_MS;
            renewal.requests.push(request);
        }
    }

    /// Starts a renewal when one is due; retries one that is not answered, until its deadline.
    fn renew(&mut self, now: u64, rng: &mut SplitMix64, out: &mut Outbox) {
        if !self.renewing {
            return;
        }
        match self.renewal.as_ref().map(|r| (r.retry_at, r.deadline)) {
            None if now >= self.renew_at => {
                self.renewal = Some(Renewal {
                    command: self.registration(now),
                    requests: Vec::new(),
                    retry_at: now,
                    deadline: now + COMMIT_DEADLINE_MS,
                });
                self.send_renewal(now, rng, out);
            }
            Some((retry_at, deadline)) if now >= retry_at => {
                if now >= deadline {
                    // Given up; the next one comes a third of a lease on, as after a success.
                    self.renewal = None;
                    self.renew_at = now + RENEW_EVERY_MS;
                } else {
                    self.leader_hint = None;
                    self.send_renewal(now, rng, out);
                }
            }
            _ => {}
        }
    }

    /// The answer to a renewal.
    fn renewal_answered(
        &mut self,
        now: u64,
        rng: &mut SplitMix64,
        result: Result<Option<Outcome>, Option<Addr>>,
        out: &mut Outbox,
    ) -> Option<String> {
        match result {
            Ok(Some(Outcome::Agent(AgentOutcome::RenewAgent(Ok(()))))) => {
                self.renewal = None;
                self.renew_at = now + RENEW_EVERY_MS;
                None
            }
            Ok(other) => Some(format!("a RenewAgent answered {other:?}")),
            Err(hint) => {
                if hint.is_some() && hint != self.leader_hint {
                    self.leader_hint = hint;
                    self.send_renewal(now, rng, out);
                }
                None
            }
        }
    }

    fn command(object: &Object) -> Command {
        CommitObject {
            object_key: object.key.clone(),
            partitions: object
                .partitions
                .iter()
                .map(|(tp, batches)| PartitionBatches {
                    partition: *tp,
                    batches: batches.iter().map(|p| p.batch.clone()).collect(),
                })
                .collect(),
        }
        .into()
    }

    fn send_commit(&mut self, now: u64, rng: &mut SplitMix64, out: &mut Outbox) {
        let Some(command) = self.object.as_ref().map(Agent::command) else {
            return;
        };
        let request = self.write(rng, command, out);
        if let Some(object) = &mut self.object
            && let Stage::Committing { retry_at, requests } = &mut object.stage
        {
            *retry_at = now + COMMIT_RETRY_MS;
            requests.push(request);
        }
    }

    fn fail_all(&mut self, out: &mut Outbox) {
        if let Some(object) = self.object.take() {
            for (_, batches) in object.partitions {
                for p in batches {
                    out.push((
                        p.producer,
                        Msg::ProduceReply {
                            request: p.request,
                            result: Err(()),
                        },
                    ));
                }
            }
        }
    }

    pub fn on_timer(&mut self, now: u64, rng: &mut SplitMix64, out: &mut Outbox) {
        self.renew(now, rng, out);
        match self.object.as_ref().map(|o| (&o.stage, o.deadline)) {
            None => {
                let ready =
                    self.queue.len() >= 4 || self.queue.first().is_some_and(|p| now >= p.since + 5);
                if ready {
                    self.seal(now, rng);
                }
            }
            Some((Stage::Uploading { done_at, fails }, _)) if now >= *done_at => {
                if *fails || now < self.store_cut_until {
                    self.fail_all(out);
                } else {
                    if let Some(object) = &mut self.object {
                        object.stage = Stage::Committing {
                            retry_at: now,
                            requests: Vec::new(),
                        };
                        object.deadline = now + COMMIT_DEADLINE_MS;
                    }
                    self.send_commit(now, rng, out);
                }
            }
            Some((Stage::Committing { retry_at, .. }, deadline)) if now >= *retry_at => {
                if now >= deadline {
                    // The commit may still land: its producers retry (an idempotent one is
                    // answered DUPLICATE with the original offsets).
                    self.fail_all(out);
                } else {
                    self.leader_hint = None;
                    self.send_commit(now, rng, out);
                }
            }
            Some(_) => {}
        }
    }

    fn seal(&mut self, now: u64, rng: &mut SplitMix64) {
        self.objects_made += 1;
        let key = ObjectKey::new(format!("agent-{}/object-{}", self.id, self.objects_made));
        let mut partitions: Vec<(TopicPartition, Vec<Pending>)> = Vec::new();
        let mut bytes = 0;
        for mut pending in self.queue.drain(..) {
            pending.batch.byte_start = bytes;
            bytes += pending.batch.byte_len;
            match partitions
                .iter_mut()
                .find(|(tp, _)| *tp == pending.partition)
            {
                Some((_, batches)) => batches.push(pending),
                None => partitions.push((pending.partition, vec![pending])),
            }
        }
        self.object = Some(Object {
            key,
            partitions,
            stage: Stage::Uploading {
                done_at: now + 5 + rng.next_u64() % 25,
                fails: rng.uniform() < self.put_fail,
            },
            deadline: u64::MAX,
        });
    }

    /// Returns the outcomes the agent did not expect (the checker's business).
    pub fn on_message(
        &mut self,
        now: u64,
        rng: &mut SplitMix64,
        from: Addr,
        msg: Msg,
        out: &mut Outbox,
    ) -> Option<String> {
        match msg {
            Msg::Produce {
                request,
                partition,
                batch,
            } => {
                self.queue.push(Pending {
                    producer: from,
                    request,
                    partition,
                    batch,
                    since: now,
                });
                None
            }
            Msg::WriteReply { request, result } => {
                if self
                    .renewal
                    .as_ref()
                    .is_some_and(|r| r.requests.contains(&request))
                {
                    return self.renewal_answered(now, rng, result, out);
                }
                let ours = self.object.as_ref().is_some_and(|o| match &o.stage {
                    Stage::Committing { requests, .. } => requests.contains(&request),
                    Stage::Uploading { .. } => false,
                });
                if !ours {
                    return None;
                }
                match result {
                    Ok(Some(Outcome::Log(LogOutcome::CommitObject(per_partition)))) => {
                        let object = self.object.take()?;
                        for ((_, batches), outcomes) in
                            object.partitions.into_iter().zip(per_partition)
                        {
                            for (p, outcome) in batches.into_iter().zip(outcomes) {
                                out.push((
                                    p.producer,
                                    Msg::ProduceReply {
                                        request: p.request,
                                        result: Ok(outcome),
                                    },
                                ));
                            }
                        }
                        None
                    }
                    Ok(other) => Some(format!("a CommitObject answered {other:?}")),
                    Err(hint) => {
                        if hint.is_some() && hint != self.leader_hint {
                            self.leader_hint = hint;
                            self.send_commit(now, rng, out);
                        }
                        None
                    }
                }
            }
            _ => None,
        }
    }
}

/// What a producer was told about one of its batches.
#[derive(Debug, Clone)]
pub struct Ack {
    pub producer: Addr,
    pub partition: TopicPartition,
    pub producer_id: ProducerId,
    pub base_sequence: i32,
    pub offset_count: i64,
    pub base_offset: i64,
}

/// A batch sent and not acknowledged: (partition, base sequence, attempts).
pub type Unacknowledged = (i32, i32, usize);

struct InFlight {
    batch: CommittedBatch,
    requests: Vec<u64>,
    retry_at: u64,
}

pub struct Producer {
    pub id: Addr,
    producer_id: ProducerId,
    epoch: ProducerEpoch,
    agents: Vec<Addr>,
    partitions: Vec<(TopicPartition, i32, Option<InFlight>)>,
    requests: u64,
    /// Whether it still starts new batches (not in the final quiet period).
    pub producing: bool,
}

impl Producer {
    /// `producer_id` -1: not idempotent.
    pub fn new(
        id: Addr,
        producer_id: ProducerId,
        epoch: ProducerEpoch,
        agents: Vec<Addr>,
        partitions: &[TopicPartition],
    ) -> Producer {
        Producer {
            id,
            producer_id,
            epoch,
            agents,
            partitions: partitions.iter().map(|&tp| (tp, 0, None)).collect(),
            requests: 0,
            producing: true,
        }
    }

    pub fn idempotent(&self) -> bool {
        self.producer_id.0 >= 0
    }

    /// Batches sent and not yet acknowledged.
    pub fn unacknowledged(&self) -> Vec<Unacknowledged> {
        self.partitions
            .iter()
            .filter_map(|(tp, _, f)| {
                f.as_ref()
                    .map(|f| (tp.partition, f.batch.base_sequence, f.requests.len()))
            })
            .collect()
    }

    /// Starts and retries batches. Each attempt goes to one of `listed`, the agents a
    /// Metadata answer names now (any agent while it names none).
    pub fn on_timer(&mut self, now: u64, rng: &mut SplitMix64, listed: &[Addr], out: &mut Outbox) {
        let agents: &[Addr] = if listed.is_empty() {
            &self.agents
        } else {
            listed
        };
        let idempotent = self.idempotent();
        for i in 0..self.partitions.len() {
            let (tp, next_sequence, in_flight) = &mut self.partitions[i];
            let send = match in_flight {
                Some(f) => now >= f.retry_at,
                None if self.producing && rng.uniform() < 0.2 => {
                    let count = 1 + (rng.next_u64() % 4) as i64;
                    *in_flight = Some(InFlight {
                        batch: CommittedBatch {
                            byte_start: 0,
                            byte_len: 10 * count as u64,
                            offset_count: count,
                            max_timestamp: now as i64,
                            producer_id: self.producer_id,
                            producer_epoch: self.epoch,
                            base_sequence: if idempotent { *next_sequence } else { -1 },
                            last_sequence: if idempotent {
                                *next_sequence + count as i32 - 1
                            } else {
                                -1
                            },
                        },
                        requests: Vec::new(),
                        retry_at: 0,
                    });
                    true
                }
                None => false,
            };
            if send && let Some(f) = in_flight {
                self.requests += 1;
                f.requests.push(self.requests);
                f.retry_at = now + PRODUCE_TIMEOUT_MS;
                let agent = agents[(rng.next_u64() % agents.len() as u64) as usize];
                out.push((
                    agent,
                    Msg::Produce {
                        request: self.requests,
                        partition: *tp,
                        batch: f.batch.clone(),
                    },
                ));
            }
        }
    }

    /// An acknowledgement, or an answer that breaks the producer's contract.
    /// `Some(Ok)`: acknowledged; `Some(Err)`: failed (retried), for the trace.
    pub fn on_message(
        &mut self,
        now: u64,
        msg: Msg,
    ) -> Result<Option<Result<Ack, String>>, String> {
        let Msg::ProduceReply { request, result } = msg else {
            return Ok(None);
        };
        let producer = self.id;
        let idempotent = self.idempotent();
        let Some((tp, next_sequence, in_flight)) = self
            .partitions
            .iter_mut()
            .find(|p| p.2.as_ref().is_some_and(|f| f.requests.contains(&request)))
        else {
            return Ok(None); // an answer to a batch already acknowledged
        };
        let Some(f) = in_flight else {
            return Ok(None);
        };
        match result {
            Err(()) => {
                f.retry_at = now;
                Ok(Some(Err(format!(
                    "producer {producer}: partition {} sequence {} failed; retrying",
                    tp.partition, f.batch.base_sequence
                ))))
            }
            Ok(
                BatchOutcome::Appended { base_offset } | BatchOutcome::Duplicate { base_offset },
            ) => {
                let ack = Ack {
                    producer,
                    partition: *tp,
                    producer_id: f.batch.producer_id,
                    base_sequence: f.batch.base_sequence,
                    offset_count: f.batch.offset_count,
                    base_offset: base_offset.0,
                };
                if idempotent {
                    *next_sequence += f.batch.offset_count as i32;
                }
                *in_flight = None;
                Ok(Some(Ok(ack)))
            }
            Ok(other) => Err(format!(
                "producer {producer} (idempotent: {idempotent}) was answered {other:?} for {:?} sequence {}",
                tp.partition, f.batch.base_sequence
            )),
        }
    }
}
