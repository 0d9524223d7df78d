//! What the rest of floe reads from the state: every accessor, none of which changes it.

use super::parts::MetadataState;
use super::{
    ActiveProducer, Agent, GroupOffset, Job, Lease, Limits, Objects, PartitionState, Topic,
    Transactions, security,
};
use crate::ids::{Offset, TopicPartition};
use uuid::Uuid;

impl MetadataState {
    pub fn applied(&self) -> u64 {
        self.applied
    }

    /// The state's time (see `Tick`); 0 before the first tick.
    pub fn now_ms(&self) -> i64 {
        self.now_ms
    }

    /// Producer ids held, and object commits remembered for retries (for metrics).
    /// The producers with recent batches on each of `partitions`.
    pub fn active_producers(
        &self,
        partitions: &[TopicPartition],
    ) -> std::collections::BTreeMap<TopicPartition, Vec<ActiveProducer>> {
        self.producers.active_on(partitions)
    }

    pub fn producer_count(&self) -> usize {
        self.producers.len()
    }

    pub fn remembered_commits(&self) -> usize {
        self.recent_commits.len()
    }

    pub fn topics(&self) -> impl Iterator<Item = &Topic> {
        self.topics.iter()
    }

    /// The groups that have committed offsets.
    pub fn groups(&self) -> impl Iterator<Item = &str> {
        self.group_offsets.groups()
    }

    pub fn group_offset(&self, group: &str, topic: &str, partition: i32) -> Option<&GroupOffset> {
        self.group_offsets.get(group, topic, partition)
    }

    pub fn group_offsets(
        &self,
        group: &str,
    ) -> impl Iterator<Item = (&(String, i32), &GroupOffset)> {
        self.group_offsets.of(group)
    }

    /// See `Topics::version`.
    pub fn topics_version(&self) -> u64 {
        self.topics.version()
    }

    /// Partitions of all topics together (what `Limits::partitions_max` bounds).
    pub fn partition_count(&self) -> u64 {
        self.topics.partition_count()
    }

    pub fn topic(&self, name: &str) -> Option<&Topic> {
        self.topics.get(name)
    }

    pub fn topic_by_id(&self, id: &Uuid) -> Option<&Topic> {
        self.topics.by_id(id)
    }

    pub fn partition(&self, tp: &TopicPartition) -> Option<&PartitionState> {
        self.topics.partition(tp)
    }

    /// A partition's high watermark, by topic name.
    pub fn high_watermark(&self, topic: &str, partition: i32) -> Option<Offset> {
        let partition = usize::try_from(partition).ok()?;
        Some(self.topic(topic)?.partitions.get(partition)?.high_watermark)
    }

    /// A group's lag: records between its committed offsets and the high watermarks
    /// (offsets of partitions that no longer exist count nothing).
    pub fn group_lag(&self, group: &str) -> i64 {
        self.group_offsets
            .of(group)
            .filter_map(|((topic, partition), committed)| {
                Some(committed.lag(self.high_watermark(topic, *partition)?))
            })
            .sum()
    }

    /// The objects the indexes point into, and the dead ones awaiting deletion.
    pub fn objects(&self) -> &Objects {
        &self.objects
    }

    /// Transactional ids, their producers and open transactions.
    pub fn transactions(&self) -> &Transactions {
        &self.transactions
    }

    /// Kafka's last stable offset: the first offset of the partition's earliest open
    /// transaction, or its high watermark. A read_committed consumer reads below it.
    pub fn last_stable_offset(&self, tp: &TopicPartition) -> Option<Offset> {
        let partition = self.topics.partition(tp)?;
        Some(
            self.transactions
                .first_unstable(tp)
                .map_or(partition.high_watermark, |first| {
                    first
                        .max(partition.log_start_offset)
                        .min(partition.high_watermark)
                }),
        )
    }

    pub fn lease(&self, job: &Job) -> Option<&Lease> {
        self.leases.get(job)
    }

    pub fn leases(&self) -> impl Iterator<Item = (&Job, &Lease)> {
        self.leases.iter()
    }

    pub fn cluster_id(&self) -> Option<&str> {
        self.registry.cluster_id()
    }

    /// The limits handlers check requests against: those in force, or the defaults before
    /// the `SetLimits` entry is applied (a request refused there never reaches the log).
    /// A group's configs (GROUP config resources), by name.
    pub fn client_quotas(&self) -> &super::client_quotas::ClientQuotas {
        &self.client_quotas
    }

    pub fn group_configs(&self, group: &str) -> Option<&imbl::OrdMap<String, String>> {
        self.group_configs.of(group)
    }

    /// Share groups' records.
    pub fn share(&self) -> &super::share::SharePartitions {
        &self.share
    }

    pub fn limits(&self) -> Limits {
        self.limits.clone().unwrap_or_default()
    }

    /// ACLs, SCRAM credentials, listener endpoints.
    pub fn security(&self) -> &security::SecurityState {
        &self.security
    }

    /// Whether the `SetLimits` entry has been applied.
    pub fn limits_set(&self) -> bool {
        self.limits.is_some()
    }

    /// Every agent in the registry, live or lapsed.
    pub fn registered_agents(&self) -> impl Iterator<Item = &Agent> {
        self.registry.agents.values()
    }

    /// Agents whose lease has not expired at the state's time: the same answer on every node
    /// that has applied the same entries, whatever its wall clock says.
    pub fn live_agents(&self) -> impl Iterator<Item = &Agent> {
        self.registry.live_agents(self.now_ms)
    }
}
