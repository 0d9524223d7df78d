//! Which agents a client is shown, and which one "leads" each partition — pure decisions.
//!
//! Any agent can serve any partition (data is in the object store, the index in every agent's
//! copy of the metadata), so a partition's leader is a routing choice, not a replica role. floe
//! picks, among the live agents of the client's zone, the one with the highest rendezvous hash
//! of (topic, partition, agent): every agent computes the same answer, one partition's
//! producers meet on one agent per zone (bigger objects, warmer caches), and when an agent
//! joins or leaves only its share of partitions moves.
//!
//! Agents behind one load balancer advertise the same address; clients must then see one broker
//! (librdkafka keys connections by broker id), so agents sharing an address collapse into the
//! one with the lowest id.
//!
//! **Lanes.** A client keeps a few requests in flight per connection (librdkafka and Java: 5;
//! librdkafka puts one partition in each ProduceRequest, and its idempotent producer keeps one
//! request in flight per partition), and each produce request waits for a
//! flush interval, an object PUT and a commit: with S3's latencies one connection cannot carry
//! more than a few MB/s. So each shown broker can appear as several broker ids at the same
//! address, its *lanes*: lane 0 is the agent's own id, lane `n` is `id + n × LANE_ID_STRIDE`.
//! Clients open one connection per broker id, so a topic's partitions, spread over the lanes,
//! travel over several connections with their own in-flight requests. Any agent serves any
//! partition, so a lane needs nothing but its id; a partition stays on one lane (its order and
//! its producer's sequence are unaffected), and group coordinators stay agents (lane 0).
//! Each lane has a port of its own (registered as an endpoint named `LISTENER#lane`), so an
//! agent knows which lane a connection was opened for: a client that asks every broker and
//! merges the answers (ListGroups, ListTransactions) gets them from lane 0 only, not once per
//! lane.

use crate::metadata::state::Agent;
use uuid::Uuid;

/// A broker as shown to clients.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    pub id: i32,
    pub host: String,
    pub port: i32,
    pub zone: Option<String>,
}

/// The brokers to show: one per distinct advertised address, lowest id first.
pub fn brokers(agents: &[Agent]) -> Vec<Shown> {
    let mut sorted: Vec<&Agent> = agents.iter().collect();
    sorted.sort_by_key(|a| a.id);
    let mut shown: Vec<Shown> = Vec::new();
    for agent in sorted {
        if !shown
            .iter()
            .any(|s| s.host == agent.host && s.port == agent.port)
        {
            shown.push(Shown {
                id: agent.id,
                host: agent.host.clone(),
                port: agent.port,
                zone: agent.zone.clone(),
            });
        }
    }
    shown
}

/// `shown` with each broker under the lowest id of any agent registered at its address, live
/// or lapsed (`registered`), lowest id first. Agents behind one load balancer are shown as one
/// broker, and its id must not change when the agent whose id it was dies, restarts or
/// drains: librdkafka drops a broker that leaves the list, clears the leaders of its
/// partitions and restarts the offset resets pending on them, and the chaos test's consumer
/// once went back to the log start after reading and committing past it at such a change. An agent at an address another agent had before (a replaced host) is shown under
/// that agent's id too, which is harmless: any agent serves any partition.
pub fn with_lasting_ids<'a>(
    shown: Vec<Shown>,
    registered: impl Iterator<Item = &'a Agent>,
) -> Vec<Shown> {
    let registered: Vec<&Agent> = registered.collect();
    let mut lasting: Vec<Shown> = shown
        .into_iter()
        .map(|s| {
            let lowest = registered
                .iter()
                .filter(|a| a.host == s.host && a.port == s.port)
                .map(|a| a.id)
                .fold(s.id, i32::min);
            Shown { id: lowest, ..s }
        })
        .collect();
    lasting.sort_by_key(|s| s.id);
    lasting
}

/// What separates the ids of one agent's lanes: lane `n` of agent `id` is shown as
/// `id + n × LANE_ID_STRIDE` (agent ids stay below it when lanes are on).
pub const LANE_ID_STRIDE: i32 = 1_000_000;

/// The most lanes an agent may show: each is a registered endpoint of each listener, and an
/// agent registers at most 16 (`ENDPOINTS_PER_AGENT_MAX`); with more listeners, fewer.
pub const LANES_MAX: u16 = 16;

/// The broker id of `agent`'s lane `lane` (lane 0 is the agent itself).
pub fn lane_id(agent: i32, lane: u16) -> i32 {
    agent + i32::from(lane) * LANE_ID_STRIDE
}

/// The agent a shown broker id belongs to (itself unless it is one of its lanes).
pub fn agent_of(broker_id: i32) -> i32 {
    broker_id.rem_euclid(LANE_ID_STRIDE)
}

/// Which of its agent's lanes a shown broker id is (0: the agent itself).
pub fn lane_of(broker_id: i32) -> u16 {
    u16::try_from(broker_id.div_euclid(LANE_ID_STRIDE)).unwrap_or(0)
}

/// The endpoint name a listener's lane is registered under (`PLAINTEXT#2`); lane 0 is the
/// listener itself.
pub fn lane_endpoint(listener: &str, lane: u16) -> String {
    if lane == 0 {
        listener.to_string()
    } else {
        format!("{listener}#{lane}")
    }
}

/// `shown`, each broker followed by its other `lanes - 1` lanes at its address.
pub fn with_lanes(shown: Vec<Shown>, lanes: u16) -> Vec<Shown> {
    let extra: Vec<Shown> = shown
        .iter()
        .flat_map(|s| {
            (1..lanes).map(|lane| Shown {
                id: lane_id(s.id, lane),
                ..s.clone()
            })
        })
        .collect();
    shown.into_iter().chain(extra).collect()
}

/// The broker that leads `partition` of `topic` for a client in `zone`: among the shown
/// brokers of that zone (all of them if the zone has none, or the client names no zone), the
/// agent of the highest rendezvous score; then one of its `lanes`, the topic's partitions taking
/// the lanes in turn (so a topic with as many partitions as lanes has one connection each).
pub fn leader(
    shown: &[Shown],
    zone: Option<&str>,
    topic: &Uuid,
    partition: i32,
    lanes: u16,
) -> Option<i32> {
    let in_zone = |s: &&Shown| zone.is_some() && s.zone.as_deref() == zone;
    let local = shown.iter().filter(in_zone).count() > 0;
    let agent = shown
        .iter()
        .filter(|s| !local || in_zone(s))
        .max_by_key(|s| (score(topic, partition, s.id), s.id))
        .map(|s| s.id)?;
    // The topic's hash offsets the turn, so partition 0 of every topic is not on lane 0.
    let lanes = u64::from(lanes.max(1));
    let offset = score(topic, -1, -1) % lanes;
    let lane = (u64::from(partition as u32) + offset) % lanes;
    Some(lane_id(agent, lane as u16))
}

/// The agent that coordinates `group`: the highest rendezvous score among the live agents,
/// so every agent names the same one and a lost agent moves only its own groups. (All agents,
/// not the shown brokers: behind a load balancer the group still has one home.)
pub fn coordinator(agents: &[Agent], group: &str) -> Option<i32> {
    // FNV-1a folds the group id into the topic slot of the score.
    let hash = group.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    let key = Uuid::from_u64_pair(hash, !hash);
    agents
        .iter()
        .max_by_key(|a| (score(&key, -1, a.id), a.id))
        .map(|a| a.id)
}

/// KIP-392's preferred read replica: the agent of `zone` that leads the partition there, when
/// the zone has agents at all.
pub fn zone_agent(shown: &[Shown], zone: &str, topic: &Uuid, partition: i32) -> Option<i32> {
    shown
        .iter()
        .any(|s| s.zone.as_deref() == Some(zone))
        .then(|| leader(shown, Some(zone), topic, partition, 1))
        .flatten()
}

/// The client's zone from a `floe_az=<zone>` hint in its client.id (Kafka has no other way
/// for a client to say where it is in a Metadata request).
pub fn client_zone(client_id: Option<&str>) -> Option<&str> {
    let id = client_id?;
    let at = id.find("floe_az=")?;
    let rest = &id[at + "floe_az=".len()..];
    let end = rest.find([',', ';', ' ', '&']).unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

/// A well-mixed 64-bit score (SplitMix64 finaliser over the inputs).
fn score(topic: &Uuid, partition: i32, agent: i32) -> u64 {
    let (hi, lo) = topic.as_u64_pair();
    let mut x = hi ^ lo.rotate_left(17) ^ (u64::from(partition as u32) << 32) ^ agent as u32 as u64;
    for _ in 0..2 {
        x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        x ^= x >> 31;
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(id: i32, port: i32, zone: &str) -> Agent {
        Agent {
            id,
            host: "127.0.0.1".into(),
            port,
            zone: Some(zone.into()),
            internal_addr: None,
            lease_expires_ms: 0,
        }
    }

    #[test]
    fn agents_behind_one_address_show_as_one_broker() {
        let shown = brokers(&[
            agent(3, 9092, "a"),
            agent(1, 9092, "b"),
            agent(2, 9093, "a"),
        ]);
        let ids: Vec<i32> = shown.iter().map(|s| s.id).collect();
        assert_eq!(ids, vec![1, 2]);
    }

    #[test]
    fn agents_behind_one_address_keep_its_id_when_the_lowest_dies() {
        let mut lapsed = agent(1, 9092, "a");
        lapsed.lease_expires_ms = -1;
        let registered = [lapsed, agent(2, 9092, "b"), agent(3, 9093, "a")];
        let live = &registered[1..];
        let shown = with_lasting_ids(brokers(live), registered.iter());
        let ids: Vec<(i32, i32)> = shown.iter().map(|s| (s.id, s.port)).collect();
        assert_eq!(
            ids,
            vec![(1, 9092), (3, 9093)],
            "agent 2 is shown as 1, agent 3 as itself"
        );
        // An address no live agent has is not shown, whoever was registered there.
        let none = with_lasting_ids(brokers(&registered[2..]), registered.iter());
        assert_eq!(none.iter().map(|s| s.id).collect::<Vec<_>>(), vec![3]);
    }

    #[test]
    fn leaders_stay_in_the_client_zone_and_spread_over_its_agents() {
        let shown = brokers(&[
            agent(1, 1, "a"),
            agent(2, 2, "a"),
            agent(3, 3, "b"),
            agent(4, 4, "b"),
        ]);
        let topic = Uuid::from_u128(42);
        let mut per_agent = [0; 5];
        for p in 0..400 {
            let l = leader(&shown, Some("a"), &topic, p, 1).unwrap();
            assert!(l == 1 || l == 2, "partition {p} left zone a: {l}");
            per_agent[l as usize] += 1;
            // Same inputs, same answer (every agent computes it alone).
            assert_eq!(leader(&shown, Some("a"), &topic, p, 1), Some(l));
        }
        assert!(per_agent[1] > 150 && per_agent[2] > 150, "{per_agent:?}");
        // An unknown zone, or none, uses every agent.
        let any: std::collections::BTreeSet<i32> = (0..100)
            .filter_map(|p| leader(&shown, Some("z"), &topic, p, 1))
            .collect();
        assert_eq!(any.len(), 4);
    }

    #[test]
    fn losing_an_agent_moves_only_its_partitions() {
        let all = brokers(&[agent(1, 1, "a"), agent(2, 2, "a"), agent(3, 3, "a")]);
        let without_3: Vec<Shown> = all.iter().filter(|s| s.id != 3).cloned().collect();
        let topic = Uuid::from_u128(7);
        for p in 0..300 {
            let before = leader(&all, None, &topic, p, 1).unwrap();
            let after = leader(&without_3, None, &topic, p, 1).unwrap();
            if before != 3 {
                assert_eq!(before, after, "partition {p} moved needlessly");
            }
        }
    }

    #[test]
    fn preferred_read_replica_only_names_agents_of_the_rack() {
        let shown = brokers(&[agent(1, 1, "a"), agent(2, 2, "b")]);
        let topic = Uuid::from_u128(3);
        assert_eq!(zone_agent(&shown, "b", &topic, 0), Some(2));
        assert_eq!(zone_agent(&shown, "c", &topic, 0), None);
    }

    #[test]
    fn lanes_spread_a_topic_over_connections_and_keep_partitions_on_their_agent() {
        let agents = [agent(1, 1, "a"), agent(2, 2, "a")];
        let shown = brokers(&agents);
        let listed = with_lanes(shown.clone(), 4);
        assert_eq!(listed.len(), 8);
        assert_eq!(
            listed.iter().map(|s| s.id).collect::<Vec<_>>(),
            vec![
                1, 2, 1_000_001, 2_000_001, 3_000_001, 1_000_002, 2_000_002, 3_000_002
            ]
        );
        assert!(listed.iter().all(|s| s.port == agent_of(s.id)));
        let topic = Uuid::from_u128(11);
        for p in 0..200 {
            let lane = leader(&shown, None, &topic, p, 4).unwrap();
            // The same agent as without lanes: lanes change connections, not placement.
            assert_eq!(agent_of(lane), leader(&shown, None, &topic, p, 1).unwrap());
            assert!(listed.iter().any(|s| s.id == lane), "{lane} is not listed");
        }
        // One agent, as many partitions as lanes: every partition on its own lane.
        let one = brokers(&agents[..1]);
        let lanes: std::collections::BTreeSet<i32> = (0..4)
            .map(|p| leader(&one, None, &topic, p, 4).unwrap())
            .collect();
        assert_eq!(lanes.len(), 4);
        assert_eq!(agent_of(lane_id(7, 63)), 7);
        assert_eq!(lane_of(lane_id(7, 63)), 63);
        assert_eq!(lane_of(7), 0);
        assert_eq!(lane_endpoint("SSL", 0), "SSL");
        assert_eq!(lane_endpoint("SSL", 3), "SSL#3");
    }

    #[test]
    fn zone_hint_in_client_id() {
        assert_eq!(
            client_zone(Some("app-1,floe_az=us-east-1a")),
            Some("us-east-1a")
        );
        assert_eq!(client_zone(Some("floe_az=eu-west-1b")), Some("eu-west-1b"));
        assert_eq!(client_zone(Some("rdkafka")), None);
        assert_eq!(client_zone(Some("floe_az=")), None);
        assert_eq!(client_zone(None), None);
    }
}
