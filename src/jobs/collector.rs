//! The collector: applies retention, deletes dead objects once their grace period has passed,
//! and sweeps the store for orphans (objects uploaded but never committed: an agent died
//! between its PUT and its commit, or the commit failed).

use super::context::JobContext;
use super::metrics::JobMetrics;
use super::plan::{dead_due, orphans};
use crate::metadata::MetadataError;
use crate::object::key::PREFIX;
use crate::store::ObjectStoreError;

#[derive(Debug, thiserror::Error)]
pub enum CollectionError {
    #[error("the object store failed")]
    Store(#[from] ObjectStoreError),
    #[error("the metadata write failed")]
    Metadata(#[from] MetadataError),
}

/// Dead objects forgotten per metadata write.
const FORGET_PER_WRITE: usize = 1_000;

/// Retention, then the dead objects that are due.
pub async fn collect(ctx: &JobContext) -> Result<(), CollectionError> {
    let moved = ctx
        .metadata
        .write(crate::metadata::state::EnforceRetention)
        .await?;
    JobMetrics::add(&ctx.metrics.retention_moves, moved);
    let grace_ms = ctx.config.dead_object_grace.as_millis() as i64;
    let due = ctx
        .metadata
        .read(|s| dead_due(s.objects(), s.now_ms(), grace_ms));
    for chunk in due.chunks(FORGET_PER_WRITE) {
        let mut deleted = Vec::with_capacity(chunk.len());
        for (id, key) in chunk {
            match ctx.store.delete(key.as_str()).await {
                Ok(()) => deleted.push(*id),
                Err(e) if e.is_not_found() => deleted.push(*id),
                Err(e) => {
                    // Forget what was deleted so far; the rest is tried again next time.
                    forget(ctx, deleted).await?;
                    return Err(e.into());
                }
            }
        }
        forget(ctx, deleted).await?;
    }
    Ok(())
}

async fn forget(
    ctx: &JobContext,
    deleted: Vec<crate::metadata::state::ObjectId>,
) -> Result<(), CollectionError> {
    if deleted.is_empty() {
        return Ok(());
    }
    JobMetrics::add(&ctx.metrics.objects_deleted, deleted.len() as u64);
    ctx.metadata
        .write(crate::metadata::state::ForgetObjects { ids: deleted })
        .await?;
    Ok(())
}

/// Lists the store and deletes the orphans; how many it deleted.
pub async fn sweep_orphans(ctx: &JobContext) -> Result<u64, CollectionError> {
    // This round's lease write returned only once this node had applied it, so the state here
    // holds every commit made before the round began; it is read after the listing, so an
    // object listed and committed before the round is known. What commits later is younger
    // than the grace period.
    let listed = ctx.store.list(PREFIX).await?;
    let grace_ms = ctx.config.orphan_grace.as_millis() as i64;
    // An object's name carries its creation time by its agent's wall clock. It counts as old
    // only if it is by both this node's clock and the state's time, so neither a clock here
    // that runs ahead nor a leader's that did can take an upload still in flight; the grace
    // (an hour by default) is far beyond any skew of the creating agent that matters.
    let now_ms = ctx.clock.now_ms();
    let found: Vec<String> = ctx.metadata.read(|s| {
        orphans(&listed, s.objects(), now_ms.min(s.now_ms()), grace_ms)
            .into_iter()
            .map(str::to_string)
            .collect()
    });
    JobMetrics::add(&ctx.metrics.orphans_found, found.len() as u64);
    let mut deleted = 0;
    for key in found {
        match ctx.store.delete(&key).await {
            Ok(()) => deleted += 1,
            Err(e) if e.is_not_found() => {}
            Err(e) => return Err(e.into()),
        }
        tracing::info!(%key, "deleted an orphaned object");
    }
    JobMetrics::add(&ctx.metrics.orphans_deleted, deleted);
    Ok(deleted)
}
