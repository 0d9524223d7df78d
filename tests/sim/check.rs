//! The simulation's invariants, checked after every step:
//!
//! - at most one leader per term;
//! - committed entries never change: every voter's log agrees with what was committed at an
//!   index (state machine safety), and applying it gives every voter the same outcome;
//! - voters that have applied the same index hold equal states (compared at every 16th
//!   index and at the end);
//! - in every voter's state each partition's offsets are contiguous and unique (the index
//!   runs from the log start to the high watermark without gap or overlap), and the high
//!   watermark counts exactly the batches the log appended;
//! - every batch is appended at most once: an idempotent producer's (id, partition,
//!   sequence) once, any object's batch once however often its commit was retried (a
//!   commit applied again answers its first outcomes);
//! - an acknowledgement names the offset its batch was appended at;
//! - voters that have applied the same index list the same agents live (compared wherever
//!   two stop at one index);
//!
//! and at the end of a run (every voter at the same index), whatever the wall clocks say:
//!
//! - the state's time moved on at between `SLOWEST_RATE` and `FASTEST_RATE` of the sim's time
//!   from its first tick to its last;
//! - every agent that is up is listed live by every voter; an agent that is down is listed by
//!   none once the state's time has moved a lease past its last renewal, nor once the sim's
//!   time has moved so far past it that even the state's slowest rate covers a lease.

use super::clients::{AGENT_LEASE_MS, Ack, Agent};
use super::raft::{Entry, Role, TICK_EVERY_MS, Voter};
use floe::ids::{ObjectKey, ProducerId, TopicPartition};
use floe::metadata::state::{
    AgentCommand, BatchOutcome, Command, CommitObject, LogCommand, LogOutcome, MetadataState,
    Outcome, RenewAgent,
};
use std::collections::BTreeMap;

/// How often (in log indexes) voters' whole states are compared.
const STATE_SAMPLE: usize = 16;

/// The slowest the state's time may run against the sim's over a run. A leader moves it on
/// at 0.9 of real time at least (`ticks::proposal`), but elections and a leader cut off from
/// its followers stop it for a while (a new leader's first tick makes up one interval only).
const SLOWEST_RATE: f64 = 0.5;
/// The fastest: a leader moves it on at 1.25 of real time at most. A new leader's first tick
/// counts one interval whatever the time since the last tick (at least the election timeout,
/// three quarters of an interval here), so an election may add a little on top; elections
/// are rarely that quick, and the stop before them takes it back.
const FASTEST_RATE: f64 = 1.3;

/// The state's clock as the voters applied it (sim ms, state ms): its first tick, and when it
/// last moved on, to what.
#[derive(Clone, Copy)]
struct StateClock {
    first: (u64, i64),
    latest: (u64, i64),
}

#[derive(Default)]
pub struct Checker {
    leaders: BTreeMap<u64, usize>,
    committed: Vec<Entry>,
    outcomes: Vec<Option<Outcome>>,
    states: BTreeMap<usize, MetadataState>,
    /// (partition, producer id, base sequence) → base offset, idempotent batches.
    by_sequence: BTreeMap<(TopicPartition, ProducerId, i32), i64>,
    /// (partition, base offset) → (producer id, offsets) of every appended batch.
    by_offset: BTreeMap<(TopicPartition, i64), (ProducerId, i64)>,
    /// The outcomes of each object's first commit.
    by_key: BTreeMap<ObjectKey, Vec<Vec<BatchOutcome>>>,
    /// Offsets appended per partition.
    appended: BTreeMap<TopicPartition, i64>,
    acks: Vec<Ack>,
    /// Per voter: its life (crashes so far), and the commit index and applied count
    /// checked so far in it.
    seen: BTreeMap<usize, (u64, usize, usize)>,
    /// How often two voters' whole states were compared.
    pub states_compared: usize,
    /// Applied index → the agents listed live there (ids), as the first voter seen there
    /// listed them.
    live: BTreeMap<usize, Vec<i32>>,
    /// How often two voters' lists of live agents were compared.
    pub live_lists_compared: usize,
    /// Agent id → when (sim ms) its latest renewal in the log was first applied, and the
    /// state's time then (at least: that voter may have applied more in the step).
    renewed: BTreeMap<i32, (u64, i64)>,
    clock: Option<StateClock>,
}

impl Checker {
    /// Checks the voters after the step at `now`.
    pub fn voters(&mut self, now: u64, voters: &[Voter]) -> Result<(), String> {
        for v in voters.iter() {
            if let Some(violation) = &v.violation {
                return Err(violation.clone());
            }
        }
        for v in voters.iter().filter(|v| v.up && v.role == Role::Leader) {
            match self.leaders.insert(v.term, v.id) {
                Some(other) if other != v.id => {
                    return Err(format!(
                        "two leaders in term {}: {other} and {}",
                        v.term, v.id
                    ));
                }
                Some(_) => {}
                // A new leader holds every committed entry (leader completeness).
                None => {
                    let holds = v.log.len() >= self.committed.len()
                        && v.log[..self.committed.len()] == self.committed[..];
                    if !holds {
                        return Err(format!(
                            "voter {} leads term {} without every committed entry ({} committed, {} in its log)",
                            v.id,
                            v.term,
                            self.committed.len(),
                            v.log.len()
                        ));
                    }
                }
            }
        }
        for v in voters.iter().filter(|v| v.up) {
            // A crash forgets the commit index and the applied state: check again from 0.
            let (life, mut commit_seen, mut applied_seen) =
                self.seen.get(&v.id).copied().unwrap_or_default();
            if life != v.lives {
                (commit_seen, applied_seen) = (0, 0);
            }
            for index in commit_seen + 1..=v.commit {
                let Some(entry) = v.log.get(index - 1) else {
                    return Err(format!(
                        "voter {} has committed index {index} beyond its log of {}",
                        v.id,
                        v.log.len()
                    ));
                };
                match self.committed.get(index - 1) {
                    Some(known) if known != entry => {
                        return Err(format!(
                            "voter {} holds at committed index {index} an entry of term {} where term {} was committed",
                            v.id, entry.term, known.term
                        ));
                    }
                    Some(_) => {}
                    None => self.committed.push(entry.clone()),
                }
            }
            let applied_before = applied_seen;
            for (i, outcome) in v.outcomes.iter().enumerate().skip(applied_seen) {
                match self.outcomes.get(i) {
                    Some(known) if known != outcome => {
                        return Err(format!(
                            "voter {} applied index {} with outcome {outcome:?}, another with {known:?}",
                            v.id,
                            i + 1
                        ));
                    }
                    Some(_) => {}
                    None => {
                        self.outcomes.push(outcome.clone());
                        self.record(i)?;
                        if let Some(Command::Agent(AgentCommand::RenewAgent(RenewAgent {
                            agent,
                            ..
                        }))) = &self.committed[i].command
                        {
                            self.renewed.insert(agent.id, (now, v.state.now_ms()));
                        }
                    }
                }
                if (i + 1).is_multiple_of(STATE_SAMPLE) && i + 1 == v.applied {
                    self.same_state(v)?;
                }
            }
            self.seen
                .insert(v.id, (v.lives, v.commit, v.outcomes.len()));
            if v.outcomes.len() != applied_before {
                self.partitions(v)?;
                self.same_live_agents(v)?;
            }
            self.clock_seen(now, v.state.now_ms());
        }
        Ok(())
    }

    /// Compares the agents `v` lists live with those another voter listed at its applied
    /// index: the same log prefix, the same answer, whatever any clock says.
    fn same_live_agents(&mut self, v: &Voter) -> Result<(), String> {
        let listed: Vec<i32> = v.state.live_agents().map(|a| a.id).collect();
        match self.live.get(&v.applied) {
            Some(known) if *known != listed => Err(format!(
                "voter {} lists agents {listed:?} live at applied index {}, another voter {known:?}",
                v.id, v.applied
            )),
            Some(_) => {
                self.live_lists_compared += 1;
                Ok(())
            }
            None => {
                self.live.insert(v.applied, listed);
                Ok(())
            }
        }
    }

    /// Notes the state's time `state_ms` a voter holds after the step at `now`.
    fn clock_seen(&mut self, now: u64, state_ms: i64) {
        if state_ms == 0 {
            return; // not started
        }
        match &mut self.clock {
            None => {
                self.clock = Some(StateClock {
                    first: (now, state_ms),
                    latest: (now, state_ms),
                })
            }
            Some(clock) if state_ms > clock.latest.1 => clock.latest = (now, state_ms),
            Some(_) => {}
        }
    }

    /// At the end: the state's time ran at near the sim's rate, however far off the leaders'
    /// wall clocks were.
    pub fn clock_rate(&self) -> Result<(), String> {
        let Some(StateClock { first, latest }) = self.clock else {
            return Err("the state's clock never started".into());
        };
        let (real_ms, moved_ms) = (latest.0 - first.0, latest.1 - first.1);
        // The faults stop well before the end; a run ticks for most of it.
        if real_ms < 1_000 {
            return Err(format!(
                "the state's clock moved for only {real_ms} ms of the run"
            ));
        }
        let rate = moved_ms as f64 / real_ms as f64;
        if !(SLOWEST_RATE..=FASTEST_RATE).contains(&rate) {
            return Err(format!(
                "the state's time moved {moved_ms} ms in {real_ms} ms of the run ({rate:.3}x; between {SLOWEST_RATE}x and {FASTEST_RATE}x expected)"
            ));
        }
        Ok(())
    }

    /// At the end, every voter at the same index: who is listed live. The agents' wall clocks
    /// are not consulted; if the state read the expiry an agent's record claims by its own
    /// clock, an agent minutes behind would be missing here and one minutes ahead listed long
    /// after it crashed.
    pub fn liveness(&self, voters: &[Voter], agents: &[Agent]) -> Result<(), String> {
        let Some(clock) = self.clock else {
            return Err("the state's clock never started".into());
        };
        for agent in agents {
            let id = agent.id as i32;
            for v in voters {
                let listed = v.state.live_agents().any(|a| a.id == id);
                if agent.up && !listed {
                    return Err(format!(
                        "agent {} is up and renews, and voter {} does not list it live (its registration: {:?})",
                        agent.id,
                        v.id,
                        self.renewed.get(&id)
                    ));
                }
                if agent.up || !listed {
                    continue;
                }
                let Some(&(renewed_at, renewed_ms)) = self.renewed.get(&id) else {
                    return Err(format!(
                        "voter {} lists agent {} live, which never registered",
                        v.id, agent.id
                    ));
                };
                // A lease granted before the clock started runs from its first tick.
                let past_lease_ms = v.state.now_ms() - renewed_ms.max(clock.first.1);
                if past_lease_ms >= AGENT_LEASE_MS {
                    return Err(format!(
                        "voter {} lists agent {} live, down and last renewed {past_lease_ms} ms of the state's time ago (lease {AGENT_LEASE_MS} ms)",
                        v.id, agent.id
                    ));
                }
                // Judged by the sim's time: the state's time has covered at least the slowest
                // rate of it since (the last tick only counts: ticks stop before the end).
                let ticking_ms = clock.latest.0.saturating_sub(renewed_at.max(clock.first.0));
                let lapsed = ticking_ms as f64 * SLOWEST_RATE
                    >= (AGENT_LEASE_MS as u64 + TICK_EVERY_MS) as f64;
                if lapsed {
                    return Err(format!(
                        "voter {} lists agent {} live, down and last renewed {ticking_ms} ms of the run's ticking ago; the state's time moved only {past_lease_ms} ms since (lease {AGENT_LEASE_MS} ms)",
                        v.id, agent.id
                    ));
                }
            }
        }
        Ok(())
    }

    /// Compares `v`'s state with the first one seen at its applied index.
    pub fn same_state(&mut self, v: &Voter) -> Result<(), String> {
        match self.states.get(&v.applied) {
            Some(state) if *state != v.state => Err(format!(
                "voter {} differs at applied index {} from another voter there",
                v.id, v.applied
            )),
            Some(_) => {
                self.states_compared += 1;
                Ok(())
            }
            None => {
                self.states.insert(v.applied, v.state.clone());
                Ok(())
            }
        }
    }

    /// What the outcome at index `i` (0-based) appended.
    fn record(&mut self, i: usize) -> Result<(), String> {
        let Some(Command::Log(LogCommand::CommitObject(CommitObject {
            object_key,
            partitions,
        }))) = &self.committed[i].command
        else {
            return Ok(());
        };
        let Some(Outcome::Log(LogOutcome::CommitObject(per_partition))) = &self.outcomes[i] else {
            return Err(format!(
                "CommitObject at index {} answered {:?}",
                i + 1,
                self.outcomes[i]
            ));
        };
        // A commit retried after its answer was lost is in the log again: it must be answered
        // as the first time and append nothing (the high watermark check sees an append).
        if let Some(first) = self.by_key.get(object_key) {
            if first != per_partition {
                return Err(format!(
                    "{object_key} committed again at index {} answered {per_partition:?}, first {first:?}",
                    i + 1
                ));
            }
            return Ok(());
        }
        self.by_key
            .insert(object_key.clone(), per_partition.clone());
        for (part, outcomes) in partitions.iter().zip(per_partition) {
            for (b, (batch, outcome)) in part.batches.iter().zip(outcomes).enumerate() {
                let sequence = (part.partition, batch.producer_id, batch.base_sequence);
                match *outcome {
                    BatchOutcome::Appended { base_offset } => {
                        self.by_offset.insert(
                            (part.partition, base_offset.0),
                            (batch.producer_id, batch.offset_count),
                        );
                        if batch.producer_id.0 >= 0
                            && let Some(first) = self.by_sequence.insert(sequence, base_offset.0)
                        {
                            return Err(format!(
                                "producer {} sequence {} on partition {} appended twice: at {first} and at {}",
                                batch.producer_id.0,
                                batch.base_sequence,
                                part.partition.partition,
                                base_offset.0
                            ));
                        }
                        let end = self.appended.entry(part.partition).or_insert(0);
                        if base_offset.0 != *end {
                            return Err(format!(
                                "partition {} appended at {} where its log ended at {end}",
                                part.partition.partition, base_offset.0
                            ));
                        }
                        *end += batch.offset_count;
                    }
                    BatchOutcome::Duplicate { base_offset } => {
                        let first = self.by_sequence.get(&sequence);
                        if first != Some(&base_offset.0) {
                            return Err(format!(
                                "a duplicate of producer {} sequence {} answered offset {}, first appended at {first:?}",
                                batch.producer_id.0, batch.base_sequence, base_offset.0
                            ));
                        }
                    }
                    // A stale copy of a batch appended long ago (an agent held it while its
                    // producer retried elsewhere and moved on): older than the window of
                    // recent sequences, it is refused as Kafka refuses it, and appends
                    // nothing; the producer no longer waits for that answer.
                    BatchOutcome::OutOfOrderSequence
                        if self.by_sequence.contains_key(&sequence) => {}
                    other => {
                        return Err(format!(
                            "batch {b} of {object_key} (producer {}, sequence {}) answered {other:?}",
                            batch.producer_id.0, batch.base_sequence
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// Offsets contiguous and unique in `v`'s state, its high watermark what was appended.
    fn partitions(&self, v: &Voter) -> Result<(), String> {
        for (&tp, &appended) in &self.appended {
            let Some(p) = v.state.partition(&tp) else {
                continue;
            };
            let mut at = p.log_start_offset.0;
            for run in p.index.iter() {
                if run.base_offset.0 != at || run.end_offset.0 <= run.base_offset.0 {
                    return Err(format!(
                        "voter {}: partition {} has a run {}..{} after offset {at}",
                        v.id, tp.partition, run.base_offset.0, run.end_offset.0
                    ));
                }
                at = run.end_offset.0;
            }
            if at != p.high_watermark.0 {
                return Err(format!(
                    "voter {}: partition {} index ends at {at}, high watermark {}",
                    v.id, tp.partition, p.high_watermark.0
                ));
            }
            // A voter that has applied everything the checker knows of.
            if v.applied == self.outcomes.len() && p.high_watermark.0 != appended {
                return Err(format!(
                    "voter {}: partition {} high watermark {} but {appended} offsets were appended",
                    v.id, tp.partition, p.high_watermark.0
                ));
            }
        }
        Ok(())
    }

    /// An acknowledgement: its offset must be where its batch was appended.
    pub fn ack(&mut self, ack: Ack) -> Result<(), String> {
        if ack.producer_id.0 >= 0 {
            let key = (ack.partition, ack.producer_id, ack.base_sequence);
            if self.by_sequence.get(&key) != Some(&ack.base_offset) {
                return Err(format!(
                    "producer {} acknowledged at {} for sequence {}, appended at {:?}",
                    ack.producer,
                    ack.base_offset,
                    ack.base_sequence,
                    self.by_sequence.get(&key)
                ));
            }
        } else {
            let appended = self.by_offset.get(&(ack.partition, ack.base_offset));
            if appended != Some(&(ack.producer_id, ack.offset_count)) {
                return Err(format!(
                    "producer {} acknowledged {} offsets at {} on partition {}, where {appended:?} was appended",
                    ack.producer, ack.offset_count, ack.base_offset, ack.partition.partition
                ));
            }
        }
        self.acks.push(ack);
        Ok(())
    }

    pub fn acknowledged(&self) -> usize {
        self.acks.len()
    }

    pub fn committed(&self) -> usize {
        self.committed.len()
    }
}
