//! A voter of the simulated quorum: Raft as the paper states it (elections, log replication,
//! commit by majority in the leader's term), with floe's real state machine
//! (`MetadataState::apply`) applying what is committed. Its log and vote are durable; a
//! crash loses everything else, and a crash in the middle of an append loses a torn tail of
//! it (the log store drops a record whose checksum does not match).
//!
//! This models the protocol floe gets from openraft so that the commit path above it can be
//! driven through elections, lost and reordered messages and crashes one seeded step at a
//! time; openraft itself runs in the chaos test.
//!
//! Every voter runs the state's tick loop as `metadata::ticks::tick_while_leading` does: a
//! timer firing every `TICK_EVERY_MS` from the voter's start, which proposes a `Tick` while
//! the voter leads, by the real `ticks::proposal` from its own (skewed) wall clock.

use super::{Addr, Msg, Outbox, WALL_CLOCK_BASE_MS};
use floe::metadata::state::{Command, MetadataState, Outcome, Tick};
use floe::metadata::ticks;
use floe::random::SplitMix64;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

pub const HEARTBEAT_MS: u64 = 30;
const ELECTION_MIN_MS: u64 = 150;
const ELECTION_SPREAD_MS: u64 = 150;
/// Entries one AppendEntries carries at most.
const BATCH: usize = 8;
/// How often a voter's tick timer fires. The real interval (`ticks::TICK_EVERY`) is 1 s; a
/// fifth of it here gives a short run many ticks, and elections between them. `proposal`
/// scales with the interval, so the state's time runs at the same rates.
pub const TICK_EVERY_MS: u64 = 200;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub term: u64,
    /// `None`: the no-op a new leader appends to commit its predecessors' entries.
    pub command: Option<Command>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Follower,
    Candidate,
    Leader,
}

pub struct Voter {
    pub id: Addr,
    pub peers: Vec<Addr>,
    pub up: bool,
    // Durable.
    pub term: u64,
    voted_for: Option<Addr>,
    pub log: Vec<Entry>,
    // Volatile.
    pub role: Role,
    pub commit: usize,
    pub applied: usize,
    pub state: MetadataState,
    /// Outcome of each applied entry (index - 1), for the checker.
    pub outcomes: Vec<Option<Outcome>>,
    election_at: u64,
    heartbeat_at: u64,
    votes: BTreeSet<Addr>,
    next: BTreeMap<Addr, usize>,
    matched: BTreeMap<Addr, usize>,
    /// Writes this leader appended and must answer once applied: index → (agent, request).
    waiting: BTreeMap<usize, (Addr, u64)>,
    pub leader_hint: Option<Addr>,
    /// Where this voter's wall clock is off (ms): the `Tick`s it proposes while it leads start
    /// from that clock.
    pub clock_skew_ms: i64,
    /// When its tick timer next fires (it runs whether the voter leads or not).
    tick_at: u64,
    /// When it last proposed a tick, while it leads; `None` from the first firing at which it
    /// does not lead, and after a crash (the real loop keeps this in memory).
    previous_tick: Option<u64>,
    /// Crashes so far: the checker starts over with a voter that crashed.
    pub lives: u64,
    /// What this voter saw that Raft rules out (another leader of its term, a committed
    /// entry overwritten), for the checker.
    pub violation: Option<String>,
    /// Whether a leader appends `Tick`s (stopped at the end, so voters can agree on a last
    /// index; its tick loop still runs).
    pub ticking: bool,
}

impl Voter {
    /// A voter whose log starts with `bootstrap`, committed (the cluster as set up).
    pub fn new(id: Addr, peers: Vec<Addr>, bootstrap: &[Command], rng: &mut SplitMix64) -> Voter {
        let mut voter = Voter {
            id,
            peers,
            up: true,
            term: 0,
            voted_for: None,
            log: bootstrap
                .iter()
                .map(|c| Entry {
                    term: 0,
                    command: Some(c.clone()),
                })
                .collect(),
            role: Role::Follower,
            commit: bootstrap.len(),
            applied: 0,
            state: MetadataState::default(),
            outcomes: Vec::new(),
            election_at: 0,
            heartbeat_at: 0,
            votes: BTreeSet::new(),
            next: BTreeMap::new(),
            matched: BTreeMap::new(),
            waiting: BTreeMap::new(),
            leader_hint: None,
            clock_skew_ms: 0,
            // Voters start at different moments: their timers fire out of step.
            tick_at: 1 + rng.next_u64() % TICK_EVERY_MS,
            previous_tick: None,
            ticking: true,
            lives: 0,
            violation: None,
        };
        voter.reset_election(0, rng);
        voter
    }

    fn last_term(&self) -> u64 {
        self.log.last().map_or(0, |e| e.term)
    }

    fn reset_election(&mut self, now: u64, rng: &mut SplitMix64) {
        self.election_at = now + ELECTION_MIN_MS + rng.next_u64() % ELECTION_SPREAD_MS;
    }

    /// A crash: what was not durable is gone. `torn` entries at the log's end were being
    /// written and are lost too.
    pub fn crash(&mut self, torn: usize) {
        self.up = false;
        self.lives += 1;
        let keep = self.log.len().saturating_sub(torn);
        self.log.truncate(keep);
        self.role = Role::Follower;
        self.commit = 0;
        self.applied = 0;
        self.state = MetadataState::default();
        self.outcomes.clear();
        self.votes.clear();
        self.next.clear();
        self.matched.clear();
        self.waiting.clear();
        self.leader_hint = None;
        self.previous_tick = None;
    }

    pub fn restart(&mut self, now: u64, rng: &mut SplitMix64) {
        self.up = true;
        self.reset_election(now, rng);
        // The tick loop starts with the process, and first sleeps an interval.
        self.tick_at = now + TICK_EVERY_MS;
    }

    /// A higher term, or a leader of this one: follow. (The election timer is reset only by
    /// a granted vote or the leader's messages, as the paper has it: a candidate with a
    /// stale log must not hold everyone's elections off.)
    fn step_down(&mut self, term: u64) {
        if term > self.term {
            self.term = term;
            self.voted_for = None;
            self.leader_hint = None;
        }
        if self.role != Role::Follower {
            self.role = Role::Follower;
            self.waiting.clear();
        }
    }

    /// Timers: the tick loop, elections and heartbeats.
    pub fn on_timer(&mut self, now: u64, rng: &mut SplitMix64, out: &mut Outbox) {
        if now >= self.tick_at {
            self.tick_at = now + TICK_EVERY_MS;
            self.tick(now);
        }
        if self.role == Role::Leader {
            if now >= self.heartbeat_at {
                self.heartbeat_at = now + HEARTBEAT_MS;
                for peer in self.peers.clone() {
                    self.send_append(peer, out);
                }
            }
            return;
        }
        if now >= self.election_at {
            self.term += 1;
            self.role = Role::Candidate;
            self.voted_for = Some(self.id);
            self.votes = BTreeSet::from([self.id]);
            self.leader_hint = None;
            self.reset_election(now, rng);
            for &peer in &self.peers {
                out.push((
                    peer,
                    Msg::Vote {
                        term: self.term,
                        last_index: self.log.len(),
                        last_term: self.last_term(),
                    },
                ));
            }
        }
    }

    /// A firing of the tick loop (`ticks::tick_while_leading`): while leading, proposes its
    /// wall clock held near the state's time moved on by the time since its previous tick
    /// (one interval for a term's first), exactly as a real leader does.
    fn tick(&mut self, now: u64) {
        if self.role != Role::Leader {
            self.previous_tick = None;
            return;
        }
        let elapsed_ms = self.previous_tick.map_or(TICK_EVERY_MS, |at| now - at);
        self.previous_tick = Some(now);
        if !self.ticking {
            return;
        }
        let wall_ms = WALL_CLOCK_BASE_MS + now as i64 + self.clock_skew_ms;
        let now_ms = ticks::proposal(
            wall_ms,
            self.state.now_ms(),
            Duration::from_millis(elapsed_ms),
        );
        self.append(Some(Tick { now_ms }.into()));
    }

    fn append(&mut self, command: Option<Command>) -> usize {
        self.log.push(Entry {
            term: self.term,
            command,
        });
        self.matched.insert(self.id, self.log.len());
        self.log.len()
    }

    fn send_append(&self, peer: Addr, out: &mut Outbox) {
        let next = self.next.get(&peer).copied().unwrap_or(self.log.len() + 1);
        let prev_index = next - 1;
        let prev_term = if prev_index == 0 {
            0
        } else {
            self.log[prev_index - 1].term
        };
        let entries = self.log[prev_index..].iter().take(BATCH).cloned().collect();
        out.push((
            peer,
            Msg::Append {
                term: self.term,
                prev_index,
                prev_term,
                entries,
                commit: self.commit,
            },
        ));
    }

    fn become_leader(&mut self, out: &mut Outbox) {
        self.role = Role::Leader;
        self.leader_hint = Some(self.id);
        for &peer in &self.peers {
            self.next.insert(peer, self.log.len() + 1);
            self.matched.insert(peer, 0);
        }
        self.append(None);
        self.heartbeat_at = 0;
        for peer in self.peers.clone() {
            self.send_append(peer, out);
        }
    }

    /// Handles one message. Returns how many entries it appended to its log (a crash in the
    /// middle of that write may tear them).
    pub fn on_message(
        &mut self,
        now: u64,
        rng: &mut SplitMix64,
        from: Addr,
        msg: Msg,
        out: &mut Outbox,
    ) -> usize {
        match msg {
            Msg::Vote {
                term,
                last_index,
                last_term,
            } => {
                if term > self.term {
                    self.step_down(term);
                }
                let up_to_date = (last_term, last_index) >= (self.last_term(), self.log.len());
                let granted =
                    term == self.term && up_to_date && self.voted_for.is_none_or(|v| v == from);
                if granted {
                    self.voted_for = Some(from);
                    self.reset_election(now, rng);
                }
                out.push((
                    from,
                    Msg::VoteReply {
                        term: self.term,
                        granted,
                    },
                ));
                0
            }
            Msg::VoteReply { term, granted } => {
                if term > self.term {
                    self.step_down(term);
                } else if self.role == Role::Candidate && term == self.term && granted {
                    self.votes.insert(from);
                    if self.votes.len() * 2 > self.peers.len() + 1 {
                        self.become_leader(out);
                    }
                }
                0
            }
            Msg::Append {
                term,
                prev_index,
                prev_term,
                entries,
                commit,
            } => {
                if term < self.term {
                    out.push((
                        from,
                        Msg::AppendReply {
                            term: self.term,
                            ok: false,
                            match_index: 0,
                        },
                    ));
                    return 0;
                }
                if self.role == Role::Leader && term == self.term {
                    self.violation = Some(format!(
                        "voter {} leads term {term} and hears another leader of it, {from}",
                        self.id
                    ));
                }
                self.step_down(term);
                self.reset_election(now, rng);
                self.leader_hint = Some(from);
                let matches = prev_index == 0
                    || (prev_index <= self.log.len() && self.log[prev_index - 1].term == prev_term);
                if !matches {
                    out.push((
                        from,
                        Msg::AppendReply {
                            term: self.term,
                            ok: false,
                            match_index: self.log.len().min(prev_index.saturating_sub(1)),
                        },
                    ));
                    return 0;
                }
                let mut appended = 0;
                for (i, entry) in entries.iter().enumerate() {
                    let index = prev_index + i + 1;
                    if index <= self.log.len() {
                        if self.log[index - 1].term == entry.term {
                            continue;
                        }
                        // A conflict: what follows is not the leader's; never committed.
                        if index <= self.commit.max(self.applied) {
                            self.violation = Some(format!(
                                "voter {} overwrites index {index}, committed or applied here",
                                self.id
                            ));
                        }
                        self.log.truncate(index - 1);
                    }
                    self.log.push(entry.clone());
                    appended += 1;
                }
                let match_index = prev_index + entries.len();
                // Never back: a late, repeated AppendEntries may cover less than is known.
                self.commit = self.commit.max(commit.min(match_index));
                out.push((
                    from,
                    Msg::AppendReply {
                        term: self.term,
                        ok: true,
                        match_index,
                    },
                ));
                appended
            }
            Msg::AppendReply {
                term,
                ok,
                match_index,
            } => {
                if term > self.term {
                    self.step_down(term);
                    return 0;
                }
                if self.role != Role::Leader || term != self.term {
                    return 0;
                }
                if ok {
                    let matched = self.matched.entry(from).or_insert(0);
                    *matched = (*matched).max(match_index);
                    self.next.insert(from, *matched + 1);
                    self.advance_commit();
                    if match_index < self.log.len() {
                        self.send_append(from, out);
                    }
                } else {
                    // A late rejection may name less than the follower holds by now.
                    let matched = self.matched.get(&from).copied().unwrap_or(0);
                    self.next.insert(from, (match_index + 1).max(matched + 1));
                    self.send_append(from, out);
                }
                0
            }
            Msg::Write { request, command } => {
                if self.role != Role::Leader {
                    out.push((
                        from,
                        Msg::WriteReply {
                            request,
                            result: Err(self.leader_hint),
                        },
                    ));
                    return 0;
                }
                let index = self.append(Some(command));
                self.waiting.insert(index, (from, request));
                for peer in self.peers.clone() {
                    self.send_append(peer, out);
                }
                1
            }
            _ => 0,
        }
    }

    fn advance_commit(&mut self) {
        let mut matched: Vec<usize> = self.matched.values().copied().collect();
        matched.sort_unstable_by(|a, b| b.cmp(a));
        let voters = self.peers.len() + 1;
        let majority = voters / 2 + 1;
        if let Some(&n) = matched.get(majority - 1)
            && n > self.commit
            && self.log[n - 1].term == self.term
        {
            self.commit = n;
        }
    }

    /// Applies what is committed; a leader answers the writes it appended.
    pub fn apply_committed(&mut self, out: &mut Outbox) -> bool {
        let advanced = self.applied < self.commit;
        while self.applied < self.commit {
            let entry = &self.log[self.applied];
            let outcome = entry.command.clone().map(|c| self.state.apply(c));
            self.applied += 1;
            if let Some((agent, request)) = self.waiting.remove(&self.applied) {
                out.push((
                    agent,
                    Msg::WriteReply {
                        request,
                        result: Ok(outcome.clone()),
                    },
                ));
            }
            self.outcomes.push(outcome);
        }
        advanced
    }
}
