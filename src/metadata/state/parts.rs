//! `MetadataState`: the parts of the state, composed. Each part (`topics`, `objects`,
//! `producers`, ...) keeps its own rules; the commands (`commands/`) compose them.

use super::agents::Registry;
use super::client_quotas::ClientQuotas;
use super::group_configs::GroupConfigs;
use super::groups::GroupOffsets;
use super::jobs::Leases;
use super::limits::Limits;
use super::objects::Objects;
use super::producers::Producers;
use super::recent_commits::RecentCommits;
use super::security::SecurityState;
use super::share::SharePartitions;
use super::topics::Topics;
use super::transactions::Transactions;

/// Snapshots hold it by section, one per part (`snapshot`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MetadataState {
    pub(super) topics: Topics,
    pub(super) producers: Producers,
    pub(super) group_offsets: GroupOffsets,
    pub(super) registry: Registry,
    pub(super) recent_commits: RecentCommits,
    /// `None` until the `SetLimits` entry (see `limits`).
    pub(super) limits: Option<Limits>,
    /// Commands applied so far; a snapshot records it so replay knows where to resume.
    pub(super) applied: u64,
    /// The state's time: the latest `Tick` (0 before the first).
    pub(super) now_ms: i64,
    /// When (state time) idle producers were last looked for.
    pub(super) producers_checked_ms: i64,
    pub(super) objects: Objects,
    pub(super) leases: Leases,
    pub(super) transactions: Transactions,
    pub(super) security: SecurityState,
    /// Share groups' records (KIP-932).
    pub(super) share: SharePartitions,
    pub(super) group_configs: GroupConfigs,
    /// Client quotas (Kafka's `ClientQuotaRecord`s).
    pub(super) client_quotas: ClientQuotas,
}

/// The limits `apply` checks commands against.
pub(super) fn in_force(limits: &Option<Limits>) -> &Limits {
    limits.as_ref().unwrap_or(&Limits::BEFORE_SET)
}
