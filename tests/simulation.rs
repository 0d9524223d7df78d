//! Deterministic simulation of the commit path (`sim`): many seeds, each a whole run of
//! producers, agents and a three-voter quorum through faults and skewed clocks, checked after
//! every step and at the end (the agents listed live, the rate of the state's time).
//!
//! `FLOE_SIM_SEEDS=n` runs n seeds (the README test command runs 300) from `FLOE_SIM_FROM`
//! (0) on;
//! `FLOE_SIM_SEED=s` runs one seed, printing its summary: a failing seed reproduces exactly.

mod sim;

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|s| s.parse().ok())
}

/// How long each run's faults last and how long the quiet period after them is (ms).
const CHAOS_MS: u64 = 10_000;
const QUIET_MS: u64 = 5_000;

#[test]
fn every_seed_keeps_the_commit_path_invariants() {
    let seeds: Vec<u64> = match env_u64("FLOE_SIM_SEED") {
        Some(seed) => vec![seed],
        None => {
            let from = env_u64("FLOE_SIM_FROM").unwrap_or(0);
            (from..from + env_u64("FLOE_SIM_SEEDS").unwrap_or(300)).collect()
        }
    };
    let (mut acknowledged, mut entries, mut faults, mut compared) = (0, 0, 0, 0);
    let mut live_compared = 0;
    for &seed in &seeds {
        match sim::run(seed, CHAOS_MS, QUIET_MS) {
            Ok(summary) => {
                if seeds.len() == 1 {
                    eprintln!("seed {seed}: {summary:?}");
                }
                acknowledged += summary.acknowledged;
                entries += summary.committed_entries;
                faults += summary.faults;
                compared += summary.states_compared;
                live_compared += summary.live_lists_compared;
            }
            Err(violation) => panic!("{violation}"),
        }
    }
    eprintln!(
        "{} seeds: {acknowledged} batches acknowledged, {entries} log entries committed, {faults} faults, {compared} state comparisons, {live_compared} live agent list comparisons",
        seeds.len()
    );
    assert!(acknowledged > 0, "nothing was acknowledged");
    assert!(compared > 0, "no two voters' states were compared");
    assert!(
        live_compared > 0,
        "no two voters' lists of live agents were compared"
    );
}

/// The same seed gives the same run: every event (its digest) and every count.
#[test]
fn a_seed_repeats_exactly() {
    let first = sim::run(7, CHAOS_MS, QUIET_MS).expect("seed 7");
    let second = sim::run(7, CHAOS_MS, QUIET_MS).expect("seed 7");
    assert_eq!(first.digest, second.digest, "the events differ");
    assert_eq!(format!("{first:?}"), format!("{second:?}"));
}
