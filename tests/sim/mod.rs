//! Deterministic simulation of the commit path: producers, agents, an object store and a
//! quorum of three voters running floe's state machine, on one simulated network and one
//! clock, in one thread, every choice drawn from one seeded generator. A run repeats exactly
//! for its seed. Faults: lost, delayed and reordered messages; one- and two-way partitions
//! of a voter; an agent cut off from the quorum or from the object store; voter crashes
//! (with torn log writes) and restarts; agent crashes, and in some runs one agent crashing
//! for good; failed object-store writes. After a heal, a quiet period in which every batch
//! must be acknowledged.
//!
//! Time: the state's own clock (`Tick`) is moved on by whichever voter leads, from
//! its wall clock; agents register with leases of that clock (`RenewAgent`). Every
//! node's wall clock is off, by up to a few seconds, half a minute or minutes in a run (drawn
//! per run, for voters and agents apart), and the state's time must still run at about the
//! sim's rate and judge every agent alike on every voter.

pub mod check;
pub mod clients;
pub mod net;
pub mod raft;

use check::Checker;
use clients::{Agent, Producer};
use floe::ids::{ProducerEpoch, ProducerId, TopicPartition};
use floe::metadata::state::CreateTopic;
use floe::metadata::state::{
    BatchOutcome, Command, CommittedBatch, InitProducerId, Outcome, ProducerOutcome,
};
use floe::random::SplitMix64;
use net::Network;
use raft::{Entry, Voter};
use std::collections::{BTreeMap, VecDeque};

/// A node of the simulation: voters first, then agents, then producers.
pub type Addr = usize;

/// What a true wall clock reads at sim time 0 (ms since the Unix epoch); each node's is off
/// from it by its skew.
pub const WALL_CLOCK_BASE_MS: i64 = 1_700_000_000_000;

/// How far off wall clocks may be in a run (ms), one drawn per run: a few seconds (clocks
/// kept by NTP), half a minute, or minutes (a clock never set).
const SKEW_RANGES_MS: [u64; 3] = [5_000, 30_000, 300_000];

/// A wall clock's error within ±`range_ms`, drawn.
fn skew(rng: &mut SplitMix64, range_ms: u64) -> i64 {
    (rng.next_u64() % (2 * range_ms + 1)) as i64 - range_ms as i64
}

pub enum Msg {
    Vote {
        term: u64,
        last_index: usize,
        last_term: u64,
    },
    VoteReply {
        term: u64,
        granted: bool,
    },
    Append {
        term: u64,
        prev_index: usize,
        prev_term: u64,
        entries: Vec<Entry>,
        commit: usize,
    },
    AppendReply {
        term: u64,
        ok: bool,
        match_index: usize,
    },
    /// An agent's write, to the voter it thinks leads.
    Write {
        request: u64,
        command: Command,
    },
    /// The outcome once applied, or not the leader (and who is, if known).
    WriteReply {
        request: u64,
        result: Result<Option<Outcome>, Option<Addr>>,
    },
    Produce {
        request: u64,
        partition: TopicPartition,
        batch: CommittedBatch,
    },
    ProduceReply {
        request: u64,
        result: Result<BatchOutcome, ()>,
    },
}

/// Messages a node sends in one step: (to, message).
pub type Outbox = Vec<(Addr, Msg)>;

const VOTERS: usize = 3;
const AGENTS: usize = 2;
/// Two idempotent producers and one that is not.
const PRODUCERS: usize = 3;
const PARTITIONS: i32 = 3;

/// How a run went.
#[derive(Debug)]
pub struct Summary {
    pub acknowledged: usize,
    pub committed_entries: usize,
    pub faults: usize,
    /// Comparisons of two voters' whole states at one index.
    pub states_compared: usize,
    /// Comparisons of two voters' lists of live agents at one index.
    pub live_lists_compared: usize,
    /// A digest of every event: equal for two runs of one seed.
    pub digest: u64,
}

/// A failed run: its seed, what broke, and the events leading to it.
#[derive(Debug)]
pub struct Violation {
    pub seed: u64,
    pub at_ms: u64,
    pub what: String,
    pub trace: Vec<String>,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "seed {} failed at {} ms: {}",
            self.seed, self.at_ms, self.what
        )?;
        writeln!(
            f,
            "reproduce: FLOE_SIM_SEED={} cargo test --test simulation",
            self.seed
        )?;
        writeln!(f, "last events:")?;
        for line in &self.trace {
            writeln!(f, "  {line}")?;
        }
        Ok(())
    }
}

struct World {
    rng: SplitMix64,
    now: u64,
    net: Network,
    voters: Vec<Voter>,
    agents: Vec<Agent>,
    producers: Vec<Producer>,
    checker: Checker,
    /// When each crashed node or cut network comes back.
    restarts: BTreeMap<Addr, u64>,
    /// The agent (index) that crashes for good, and when: its lease must run out.
    retire: Option<(usize, u64)>,
    heal_at: Option<u64>,
    faults: usize,
    trace: VecDeque<String>,
    /// Print every event as it happens (`FLOE_SIM_TRACE`).
    print_trace: bool,
    /// A digest of every event of the run.
    digest: u64,
}

const TRACE_LINES: usize = 40;
/// The end of a run during which leaders append nothing, so every voter reaches the same
/// last index.
const SETTLE_MS: u64 = 500;

impl World {
    fn new(seed: u64) -> World {
        let mut rng = SplitMix64::new(seed);
        let topic_id = uuid::Uuid::from_u64_pair(seed, 7);
        let partitions: Vec<TopicPartition> = (0..PARTITIONS)
            .map(|partition| TopicPartition {
                topic_id,
                partition,
            })
            .collect();
        let mut bootstrap: Vec<Command> = vec![
            CreateTopic {
                name: "sim".into(),
                id: topic_id,
                partitions: PARTITIONS,
                configs: BTreeMap::new(),
            }
            .into(),
        ];
        let idempotent = PRODUCERS - 1;
        bootstrap.extend((0..idempotent).map(|_| InitProducerId { existing: None }.into()));
        // The producer ids the bootstrap hands out, as any voter applying it computes them.
        let mut scratch = floe::metadata::state::MetadataState::default();
        let mut ids = Vec::new();
        for command in &bootstrap {
            if let Outcome::Producer(ProducerOutcome::InitProducerId(Ok(id))) =
                scratch.apply(command.clone())
            {
                ids.push(id);
            }
        }
        let voter_addrs: Vec<Addr> = (0..VOTERS).collect();
        let agent_addrs: Vec<Addr> = (VOTERS..VOTERS + AGENTS).collect();
        let mut voters: Vec<Voter> = voter_addrs
            .iter()
            .map(|&id| {
                let peers = voter_addrs.iter().copied().filter(|&p| p != id).collect();
                Voter::new(id, peers, &bootstrap, &mut rng)
            })
            .collect();
        let voter_skew_ms = SKEW_RANGES_MS[(rng.next_u64() % SKEW_RANGES_MS.len() as u64) as usize];
        for v in &mut voters {
            v.clock_skew_ms = skew(&mut rng, voter_skew_ms);
        }
        let put_fail = rng.uniform() * 0.1;
        let agent_skew_ms = SKEW_RANGES_MS[(rng.next_u64() % SKEW_RANGES_MS.len() as u64) as usize];
        let agents = agent_addrs
            .iter()
            .map(|&id| {
                let mut agent = Agent::new(id, voter_addrs.clone(), put_fail);
                agent.clock_skew_ms = skew(&mut rng, agent_skew_ms);
                agent
            })
            .collect();
        // Early enough that its lease runs out, and Metadata stops naming it, well before the
        // end: producers retry on the other agent meanwhile.
        let retire = (rng.uniform() < 1.0 / 3.0).then(|| {
            (
                (rng.next_u64() % AGENTS as u64) as usize,
                500 + rng.next_u64() % 2_500,
            )
        });
        let producers = (0..PRODUCERS)
            .map(|i| {
                let id = VOTERS + AGENTS + i;
                let (pid, epoch) = ids
                    .get(i)
                    .copied()
                    .unwrap_or((ProducerId(-1), ProducerEpoch(-1)));
                Producer::new(id, pid, epoch, agent_addrs.clone(), &partitions)
            })
            .collect();
        let loss = rng.uniform() * 0.05;
        World {
            rng,
            now: 0,
            net: Network::new(loss),
            voters,
            agents,
            producers,
            checker: Checker::default(),
            restarts: BTreeMap::new(),
            retire,
            heal_at: None,
            faults: 0,
            trace: VecDeque::new(),
            print_trace: std::env::var_os("FLOE_SIM_TRACE").is_some(),
            digest: 0xcbf2_9ce4_8422_2325,
        }
    }

    fn log(&mut self, line: String) {
        // FNV-1a over every event: two runs of a seed must agree on all of them.
        for byte in self.now.to_le_bytes().iter().chain(line.as_bytes()) {
            self.digest = (self.digest ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3);
        }
        if self.print_trace {
            eprintln!("{} ms: {line}", self.now);
        }
        if self.trace.len() == TRACE_LINES {
            self.trace.pop_front();
        }
        self.trace.push_back(format!("{} ms: {line}", self.now));
    }

    fn up(&self, addr: Addr) -> bool {
        if addr < VOTERS {
            self.voters[addr].up
        } else if addr < VOTERS + AGENTS {
            self.agents[addr - VOTERS].up
        } else {
            true
        }
    }

    fn send(&mut self, from: Addr, out: Outbox) {
        for (to, msg) in out {
            self.net.send(&mut self.rng, self.now, from, to, msg);
        }
    }

    /// One of `n` nodes, drawn.
    fn pick(&mut self, n: usize) -> usize {
        (self.rng.next_u64() % n as u64) as usize
    }

    /// How long a cut lasts (ms), drawn.
    fn cut_span(&mut self) -> u64 {
        50 + self.rng.next_u64() % 700
    }

    /// Draws this millisecond's faults.
    fn faults(&mut self, chaos: bool) {
        let now = self.now;
        let restarts: Vec<Addr> = self
            .restarts
            .iter()
            .filter(|&(_, &at)| at <= now)
            .map(|(&a, _)| a)
            .collect();
        for addr in restarts {
            self.restarts.remove(&addr);
            if addr < VOTERS {
                self.voters[addr].restart(now, &mut self.rng);
            } else {
                self.agents[addr - VOTERS].restart(now);
            }
            self.log(format!("node {addr} restarts"));
        }
        if let Some((a, at)) = self.retire
            && at <= now
        {
            self.retire = None;
            self.restarts.remove(&(VOTERS + a));
            self.agents[a].crash();
            self.faults += 1;
            self.log(format!("agent {} crashes for good", VOTERS + a));
        }
        if self.heal_at.is_some_and(|at| at <= now) {
            self.heal_at = None;
            self.net.heal();
            self.log("the network heals".into());
        }
        if !chaos {
            return;
        }
        let roll = self.rng.uniform();
        if roll < 0.002 {
            let v = self.pick(VOTERS);
            if self.voters[v].up {
                self.voters[v].crash(0);
                let down = 20 + self.rng.next_u64() % 400;
                self.restarts.insert(v, now + down);
                self.faults += 1;
                self.log(format!("voter {v} crashes for {down} ms"));
            }
        } else if roll < 0.003 {
            if self.net.is_cut() {
                return; // one partition at a time
            }
            let v = self.pick(VOTERS);
            let both = self.rng.uniform() < 0.5;
            self.net.isolate(v, 0..VOTERS + AGENTS, both);
            let span = self.cut_span();
            self.heal_at = Some(now + span);
            self.faults += 1;
            self.log(format!(
                "voter {v} cut off (both ways: {both}) for {span} ms"
            ));
        } else if roll < 0.0035 {
            if self.net.is_cut() {
                return;
            }
            let a = self.pick(AGENTS);
            self.net.isolate(VOTERS + a, 0..VOTERS, true);
            let span = self.cut_span();
            self.heal_at = Some(now + span);
            self.faults += 1;
            self.log(format!(
                "agent {} cut off from the quorum for {span} ms",
                VOTERS + a
            ));
        } else if roll < 0.004 {
            let a = self.pick(AGENTS);
            let span = self.cut_span();
            self.agents[a].store_cut_until = now + span;
            self.faults += 1;
            self.log(format!(
                "agent {} cut off from the object store for {span} ms",
                VOTERS + a
            ));
        } else if roll < 0.0045 {
            let a = self.pick(AGENTS);
            if self.agents[a].up {
                self.agents[a].crash();
                let down = 20 + self.rng.next_u64() % 300;
                self.restarts.insert(VOTERS + a, now + down);
                self.faults += 1;
                self.log(format!("agent {} crashes for {down} ms", VOTERS + a));
            }
        }
    }

    /// One millisecond: faults, deliveries, timers, applies; then the invariants.
    fn step(&mut self, chaos: bool) -> Result<(), String> {
        self.faults(chaos);
        let now = self.now;
        for m in self.net.due(now) {
            if !self.up(m.to) {
                continue;
            }
            let mut out = Outbox::new();
            if m.to < VOTERS {
                let appended =
                    self.voters[m.to].on_message(now, &mut self.rng, m.from, m.msg, &mut out);
                // A crash while the append is being written: a torn tail is lost, and what
                // the voter would have answered is never sent.
                if appended > 0 && chaos && self.rng.uniform() < 0.01 {
                    let torn = 1 + (self.rng.next_u64() % appended as u64) as usize;
                    self.voters[m.to].crash(torn);
                    let down = 20 + self.rng.next_u64() % 300;
                    self.restarts.insert(m.to, now + down);
                    self.faults += 1;
                    self.log(format!(
                        "voter {} crashes writing {appended} entries, {torn} torn, for {down} ms",
                        m.to
                    ));
                    continue;
                }
            } else if m.to < VOTERS + AGENTS {
                let agent = &mut self.agents[m.to - VOTERS];
                if let Some(unexpected) =
                    agent.on_message(now, &mut self.rng, m.from, m.msg, &mut out)
                {
                    return Err(unexpected);
                }
            } else {
                let producer = &mut self.producers[m.to - VOTERS - AGENTS];
                match producer.on_message(now, m.msg)? {
                    Some(Ok(ack)) => {
                        self.log(format!(
                            "producer {} acknowledged: partition {} offset {} ({} records)",
                            ack.producer,
                            ack.partition.partition,
                            ack.base_offset,
                            ack.offset_count
                        ));
                        self.checker.ack(ack)?;
                    }
                    Some(Err(failed)) => self.log(failed),
                    None => {}
                }
            }
            self.send(m.to, out);
        }
        for v in 0..VOTERS {
            if !self.voters[v].up {
                continue;
            }
            let mut out = Outbox::new();
            let was_leader = self.voters[v].role == raft::Role::Leader;
            self.voters[v].on_timer(now, &mut self.rng, &mut out);
            self.voters[v].apply_committed(&mut out);
            if !was_leader && self.voters[v].role == raft::Role::Candidate && !out.is_empty() {
                let term = self.voters[v].term;
                if out.iter().any(|(_, m)| matches!(m, Msg::Vote { .. })) {
                    self.log(format!("voter {v} stands for term {term}"));
                }
            }
            self.send(v, out);
        }
        for a in 0..AGENTS {
            if self.agents[a].up {
                let mut out = Outbox::new();
                self.agents[a].on_timer(now, &mut self.rng, &mut out);
                self.send(VOTERS + a, out);
            }
        }
        let listed = self.listed_agents();
        for p in 0..PRODUCERS {
            let mut out = Outbox::new();
            self.producers[p].on_timer(now, &mut self.rng, &listed, &mut out);
            let id = self.producers[p].id;
            self.send(id, out);
        }
        self.checker.voters(now, &self.voters)
    }

    /// The agents a Metadata answer names now: those listed live by the state of the voter
    /// that has applied most (the freshest a client could be told).
    fn listed_agents(&self) -> Vec<Addr> {
        let Some(freshest) = self
            .voters
            .iter()
            .filter(|v| v.up)
            .max_by_key(|v| v.applied)
        else {
            return Vec::new();
        };
        freshest
            .state
            .live_agents()
            .map(|a| a.id as Addr)
            .filter(|a| (VOTERS..VOTERS + AGENTS).contains(a))
            .collect()
    }
}

/// Runs one seed: `chaos_ms` of faults, then a heal and `quiet_ms` in which every batch
/// sent must be acknowledged and the voters must agree.
pub fn run(seed: u64, chaos_ms: u64, quiet_ms: u64) -> Result<Summary, Violation> {
    let mut world = World::new(seed);
    let voter_skews: Vec<i64> = world.voters.iter().map(|v| v.clock_skew_ms).collect();
    let agent_skews: Vec<i64> = world.agents.iter().map(|a| a.clock_skew_ms).collect();
    world.log(format!(
        "wall clocks off by (ms): voters {voter_skews:?}, agents {agent_skews:?}; an agent to crash for good (index, at ms): {:?}",
        world.retire
    ));
    let fail = |world: &World, what: String| Violation {
        seed,
        at_ms: world.now,
        what,
        trace: world.trace.iter().cloned().collect(),
    };
    while world.now < chaos_ms + quiet_ms {
        let chaos = world.now < chaos_ms;
        if world.now == chaos_ms {
            for p in &mut world.producers {
                p.producing = false;
            }
            world.net.loss = 0.0;
            world.log(
                "faults stop (no message is lost any more); producers send nothing new".into(),
            );
        }
        if world.now == chaos_ms + quiet_ms - SETTLE_MS {
            for v in &mut world.voters {
                v.ticking = false;
            }
            for a in &mut world.agents {
                a.renewing = false;
            }
        }
        if let Err(what) = world.step(chaos) {
            return Err(fail(&world, what));
        }
        world.now += 1;
    }
    let stuck: Vec<(Addr, Vec<clients::Unacknowledged>)> = world
        .producers
        .iter()
        .map(|p| (p.id, p.unacknowledged()))
        .filter(|(_, u)| !u.is_empty())
        .collect();
    if !stuck.is_empty() {
        return Err(fail(
            &world,
            format!(
                "batches still unacknowledged {quiet_ms} ms after the faults stopped (producer, [(partition, sequence, attempts)]): {stuck:?}"
            ),
        ));
    }
    // Every voter has applied the same log by now: their states must be equal.
    let applied: Vec<usize> = world.voters.iter().map(|v| v.applied).collect();
    if applied.iter().any(|&a| a != applied[0]) {
        return Err(fail(
            &world,
            format!("voters applied {applied:?} entries after the quiet period"),
        ));
    }
    for v in &world.voters {
        if let Err(what) = world.checker.same_state(v) {
            return Err(fail(&world, what));
        }
    }
    if let Err(what) = world.checker.clock_rate() {
        return Err(fail(&world, what));
    }
    if let Err(what) = world.checker.liveness(&world.voters, &world.agents) {
        return Err(fail(&world, what));
    }
    Ok(Summary {
        acknowledged: world.checker.acknowledged(),
        committed_entries: world.checker.committed(),
        faults: world.faults,
        states_compared: world.checker.states_compared,
        live_lists_compared: world.checker.live_lists_compared,
        digest: world.digest,
    })
}
