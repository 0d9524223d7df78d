//! Server-side assignors of KIP-848 consumer groups (pure): given each member's subscribed
//! topics and current partitions, and each topic's partition count, decide which member owns
//! which partition.
//!
//! - `uniform` (the default, as in Kafka): balanced to within one partition per member and
//!   sticky — a member keeps what it owns as long as the balance allows, so a join or a leave
//!   moves only the partitions it must.
//! - `range`: per topic, members subscribed to it (by member id) take contiguous ranges, so
//!   co-partitioned topics land together.

use std::collections::{BTreeMap, BTreeSet};
use uuid::Uuid;

/// Partitions by topic id.
pub type Partitions = BTreeMap<Uuid, BTreeSet<i32>>;

/// The assignors floe offers, by the name a client asks for (`group.remote.assignor`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Assignor {
    Uniform,
    Range,
}

impl Assignor {
    /// In preference order: the group uses the first when its members do not say.
    pub const ALL: [Assignor; 2] = [Assignor::Uniform, Assignor::Range];

    pub fn name(self) -> &'static str {
        match self {
            Assignor::Uniform => "uniform",
            Assignor::Range => "range",
        }
    }

    pub fn from_name(name: &str) -> Option<Assignor> {
        Assignor::ALL.into_iter().find(|a| a.name() == name)
    }
}

/// What an assignor knows of one member.
#[derive(Debug, Clone)]
pub struct MemberSpec<'a> {
    pub id: &'a str,
    pub subscribed: BTreeSet<Uuid>,
    pub current: &'a Partitions,
}

/// The target assignment: every member (even one that gets nothing) → its partitions.
pub fn assign(
    assignor: Assignor,
    members: &[MemberSpec<'_>],
    topics: &BTreeMap<Uuid, i32>,
) -> BTreeMap<String, Partitions> {
    let mut members: Vec<&MemberSpec<'_>> = members.iter().collect();
    members.sort_by_key(|m| m.id);
    match assignor {
        Assignor::Uniform => uniform(&members, topics),
        Assignor::Range => range(&members, topics),
    }
}

fn uniform(
    members: &[&MemberSpec<'_>],
    topics: &BTreeMap<Uuid, i32>,
) -> BTreeMap<String, Partitions> {
    let mut result: BTreeMap<String, Partitions> = members
        .iter()
        .map(|m| (m.id.to_string(), Partitions::new()))
        .collect();
    let mut counts: BTreeMap<&str, usize> = members.iter().map(|m| (m.id, 0)).collect();
    // Partitions whose topic has the fewest subscribers are placed first, so that members
    // with narrow subscriptions are filled from their own topics before shared ones.
    let subscribers = |topic: &Uuid| {
        members
            .iter()
            .filter(|m| m.subscribed.contains(topic))
            .count()
    };
    let mut wanted: Vec<(usize, Uuid, i32)> = topics
        .iter()
        .map(|(id, &n)| (subscribers(id), *id, n))
        .filter(|(count, _, _)| *count > 0)
        .flat_map(|(count, id, n)| (0..n.max(0)).map(move |p| (count, id, p)))
        .collect();
    wanted.sort();
    let wanted: Vec<(Uuid, i32)> = wanted.into_iter().map(|(_, id, p)| (id, p)).collect();
    if members.is_empty() {
        return result;
    }
    let floor = wanted.len() / members.len();
    let mut one_more = wanted.len() % members.len();
    let mut taken: BTreeSet<(Uuid, i32)> = BTreeSet::new();
    let valid = |m: &MemberSpec<'_>, topic: &Uuid, p: i32| {
        m.subscribed.contains(topic) && topics.get(topic).is_some_and(|&n| p < n)
    };
    // Stickiness: each member keeps up to its fair share of what it owns...
    let mut leftovers: Vec<(&str, (Uuid, i32))> = Vec::new();
    for m in members {
        for (topic, partitions) in m.current {
            for &p in partitions {
                if !valid(m, topic, p) || taken.contains(&(*topic, p)) {
                    continue;
                }
                if counts[m.id] < floor {
                    taken.insert((*topic, p));
                    *counts.entry(m.id).or_default() += 1;
                    give(&mut result, m.id, *topic, p);
                } else {
                    leftovers.push((m.id, (*topic, p)));
                }
            }
        }
    }
    // ...and a member that owned more keeps one more while the division leaves spares.
    for (id, (topic, p)) in leftovers {
        if one_more > 0 && counts[id] == floor && !taken.contains(&(topic, p)) {
            one_more -= 1;
            taken.insert((topic, p));
            *counts.entry(id).or_default() += 1;
            give(&mut result, id, topic, p);
        }
    }
    // Whatever is left goes to the least loaded member that subscribes to its topic.
    for (topic, p) in wanted {
        if taken.contains(&(topic, p)) {
            continue;
        }
        let least = members
            .iter()
            .filter(|m| m.subscribed.contains(&topic))
            .min_by_key(|m| (counts[m.id], m.id));
        if let Some(m) = least {
            *counts.entry(m.id).or_default() += 1;
            give(&mut result, m.id, topic, p);
        }
    }
    result
}

fn range(
    members: &[&MemberSpec<'_>],
    topics: &BTreeMap<Uuid, i32>,
) -> BTreeMap<String, Partitions> {
    let mut result: BTreeMap<String, Partitions> = members
        .iter()
        .map(|m| (m.id.to_string(), Partitions::new()))
        .collect();
    for (topic, &count) in topics {
        let subscribers: Vec<&str> = members
            .iter()
            .filter(|m| m.subscribed.contains(topic))
            .map(|m| m.id)
            .collect();
        if subscribers.is_empty() {
            continue;
        }
        let count = count.max(0) as usize;
        let (each, extra) = (count / subscribers.len(), count % subscribers.len());
        let mut next = 0;
        for (i, id) in subscribers.iter().enumerate() {
            let len = each + usize::from(i < extra);
            for p in next..next + len {
                give(&mut result, id, *topic, p as i32);
            }
            next += len;
        }
    }
    result
}

fn give(result: &mut BTreeMap<String, Partitions>, member: &str, topic: Uuid, partition: i32) {
    result
        .entry(member.to_string())
        .or_default()
        .entry(topic)
        .or_default()
        .insert(partition);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topic(n: u128) -> Uuid {
        Uuid::from_u128(n)
    }

    fn spec<'a>(id: &'a str, subscribed: &[Uuid], current: &'a Partitions) -> MemberSpec<'a> {
        MemberSpec {
            id,
            subscribed: subscribed.iter().copied().collect(),
            current,
        }
    }

    fn counts(result: &BTreeMap<String, Partitions>) -> Vec<usize> {
        result
            .values()
            .map(|p| p.values().map(BTreeSet::len).sum())
            .collect()
    }

    fn all(result: &BTreeMap<String, Partitions>) -> BTreeSet<(Uuid, i32)> {
        let mut seen = BTreeSet::new();
        for partitions in result.values() {
            for (t, ps) in partitions {
                for p in ps {
                    assert!(seen.insert((*t, *p)), "{t}/{p} assigned twice");
                }
            }
        }
        seen
    }

    #[test]
    fn uniform_balances_every_partition_once() {
        let none = Partitions::new();
        let topics = BTreeMap::from([(topic(1), 7), (topic(2), 5)]);
        let both = [topic(1), topic(2)];
        let members = [
            spec("a", &both, &none),
            spec("b", &both, &none),
            spec("c", &both, &none),
        ];
        let result = assign(Assignor::Uniform, &members, &topics);
        assert_eq!(all(&result).len(), 12);
        assert_eq!(counts(&result), vec![4, 4, 4]);
    }

    #[test]
    fn uniform_moves_only_what_a_join_requires() {
        let none = Partitions::new();
        let topics = BTreeMap::from([(topic(1), 12)]);
        let t = [topic(1)];
        let first = assign(
            Assignor::Uniform,
            &[spec("a", &t, &none), spec("b", &t, &none)],
            &topics,
        );
        let second = assign(
            Assignor::Uniform,
            &[
                spec("a", &t, &first["a"]),
                spec("b", &t, &first["b"]),
                spec("c", &t, &none),
            ],
            &topics,
        );
        assert_eq!(counts(&second), vec![4, 4, 4]);
        for m in ["a", "b"] {
            let kept = second[m][&topic(1)].is_subset(&first[m][&topic(1)]);
            assert!(kept, "{m} lost a partition it could keep: {second:?}");
        }
    }

    #[test]
    fn uniform_keeps_an_owners_partitions_when_another_member_leaves() {
        let none = Partitions::new();
        let topics = BTreeMap::from([(topic(1), 10)]);
        let t = [topic(1)];
        let first = assign(
            Assignor::Uniform,
            &[
                spec("a", &t, &none),
                spec("b", &t, &none),
                spec("c", &t, &none),
            ],
            &topics,
        );
        let second = assign(
            Assignor::Uniform,
            &[spec("a", &t, &first["a"]), spec("c", &t, &first["c"])],
            &topics,
        );
        assert_eq!(counts(&second), vec![5, 5]);
        assert!(first["a"][&topic(1)].is_subset(&second["a"][&topic(1)]));
        assert!(first["c"][&topic(1)].is_subset(&second["c"][&topic(1)]));
    }

    #[test]
    fn uniform_gives_a_topic_only_to_its_subscribers() {
        let none = Partitions::new();
        let topics = BTreeMap::from([(topic(1), 4), (topic(2), 4)]);
        let result = assign(
            Assignor::Uniform,
            &[
                spec("a", &[topic(1)], &none),
                spec("b", &[topic(1), topic(2)], &none),
            ],
            &topics,
        );
        assert_eq!(all(&result).len(), 8);
        assert!(!result["a"].contains_key(&topic(2)));
        // b alone reads topic 2, so a takes all of topic 1: four each.
        assert_eq!(counts(&result), vec![4, 4]);
    }

    #[test]
    fn range_gives_contiguous_ranges_in_member_order() {
        let none = Partitions::new();
        let topics = BTreeMap::from([(topic(1), 5)]);
        let t = [topic(1)];
        let result = assign(
            Assignor::Range,
            &[spec("b", &t, &none), spec("a", &t, &none)],
            &topics,
        );
        assert_eq!(result["a"][&topic(1)], BTreeSet::from([0, 1, 2]));
        assert_eq!(result["b"][&topic(1)], BTreeSet::from([3, 4]));
    }

    #[test]
    fn more_members_than_partitions_leaves_some_empty() {
        let none = Partitions::new();
        let topics = BTreeMap::from([(topic(1), 1)]);
        let t = [topic(1)];
        for assignor in Assignor::ALL {
            let result = assign(
                assignor,
                &[spec("a", &t, &none), spec("b", &t, &none)],
                &topics,
            );
            assert_eq!(all(&result).len(), 1, "{assignor:?}");
            assert_eq!(result.len(), 2);
        }
    }
}
