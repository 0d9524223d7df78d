//! The read cache: an object's bytes from the nearest place that holds them (a memory tier,
//! a disk tier), in front of the object store. Not Kafka's tiered storage: every byte lives in
//! the object store; this only keeps copies near the reader.
//!
//! Every read of object bytes by a fetch goes through here, in blocks (`block.rs`): a
//! segment in aligned blocks of `block_bytes`, a produce object whole (it is about
//! `object_bytes_max` and shared by many partitions, so one GET serves all their consumers).
//! First the memory tier (moka, bounded by bytes, least recently used out
//! first), then the hot tier on local disk (`disk.rs`), then one ranged GET of the whole
//! block. Concurrent misses of one block wait for a single GET (moka runs one initializer
//! per key). What a GET or the disk returns is kept in memory, and what a GET returns is also
//! written to disk. Objects this agent uploads are put in both before their commit makes them
//! visible, so a consumer at the tail of a partition written through this agent never waits on
//! the object store. A reader that reaches the second half of a block gets the next one
//! fetched ahead of it.
//!
//! Objects never change once written, so no tier can hold stale bytes: eviction is by size
//! only, and a cached block is always right or (on disk) detected as damaged and read again.

pub mod block;
pub mod disk;
pub mod metrics;

use crate::ids::ObjectKey;
use crate::store::{ObjectClient, ObjectStoreError};
use block::{Block, BlockId, WHOLE_OBJECT, block_range, blocks_covering, read_ahead, slice_blocks};
use bytes::Bytes;
use disk::DiskTier;
use metrics::{GetReason, TierMetrics};
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::Semaphore;

/// Blocks fetched ahead at once; a read-ahead beyond it is skipped.
const READ_AHEAD_IN_FLIGHT_MAX: usize = 4;
/// GETs of blocks in flight at once, across all reads: a block is at most a produce object
/// (about `object_bytes_max`) or `block_bytes`, so this bounds the memory GETs hold before
/// the fetch budget (which counts the bytes a fetch returns, not the blocks it loads) sees it.
const GETS_IN_FLIGHT_MAX: usize = 32;
/// Memory charged per block besides its bytes.
const ENTRY_OVERHEAD_BYTES: usize = 512;

/// The tiers' sizes.
#[derive(Debug, Clone)]
pub struct TierSettings {
    /// The unit of caching and of GETs.
    pub block_bytes: u64,
    /// Memory for blocks (0 keeps none; concurrent misses still share a GET).
    pub memory_bytes_max: u64,
    /// The disk tier's directory and size; `None` (or 0 bytes) runs without one.
    pub disk: Option<(std::path::PathBuf, u64)>,
    pub read_ahead: bool,
}

#[derive(Clone)]
pub struct ReadCache {
    store: Arc<ObjectClient>,
    block_bytes: u64,
    memory: moka::future::Cache<BlockId, Block>,
    disk: Option<Arc<DiskTier>>,
    read_ahead: Option<Arc<Semaphore>>,
    gets: Arc<Semaphore>,
    metrics: Arc<TierMetrics>,
}

impl ReadCache {
    pub fn open(store: Arc<ObjectClient>, settings: &TierSettings) -> std::io::Result<ReadCache> {
        let metrics = Arc::new(TierMetrics::default());
        let memory = moka::future::Cache::builder()
            .max_capacity(settings.memory_bytes_max)
            .eviction_policy(moka::policy::EvictionPolicy::lru())
            .weigher(|_id: &BlockId, block: &Block| {
                // What an entry holds besides its bytes (key, moka's node), so that a tier of
                // many tiny objects stays within its memory too.
                u32::try_from(block.bytes.len() + ENTRY_OVERHEAD_BYTES).unwrap_or(u32::MAX)
            })
            .build();
        let disk = match &settings.disk {
            Some((dir, bytes_max)) if *bytes_max > 0 => {
                Some(Arc::new(DiskTier::open(dir, *bytes_max, metrics.clone())?))
            }
            _ => None,
        };
        // A block fetched ahead must be kept somewhere until its reader comes.
        let read_ahead = settings.read_ahead && (settings.memory_bytes_max > 0 || disk.is_some());
        Ok(ReadCache {
            store,
            block_bytes: settings.block_bytes.max(1),
            memory,
            disk,
            read_ahead: read_ahead.then(|| Arc::new(Semaphore::new(READ_AHEAD_IN_FLIGHT_MAX))),
            gets: Arc::new(Semaphore::new(GETS_IN_FLIGHT_MAX)),
            metrics,
        })
    }

    pub fn metrics(&self) -> &Arc<TierMetrics> {
        &self.metrics
    }

    /// Blocks and bytes in memory, and files and bytes on disk (for metrics).
    pub fn usage(&self) -> ((u64, u64), Option<(u64, u64)>) {
        let memory = (self.memory.entry_count(), self.memory.weighted_size());
        (memory, self.disk.as_ref().map(|d| d.usage()))
    }

    /// How object `key` is cut: a segment (one partition, up to `segment.bytes`) in blocks, a
    /// produce object (many partitions, about `object_bytes_max`) whole, so that every
    /// consumer of any of its partitions shares one GET of it.
    fn unit_of(&self, key: &ObjectKey) -> u64 {
        if crate::object::key::is_segment(key.as_str()) {
            self.block_bytes
        } else {
            WHOLE_OBJECT
        }
    }

    /// `len` bytes of object `key` from `start`, through the tiers.
    pub async fn read(
        &self,
        key: &ObjectKey,
        start: u64,
        len: u64,
    ) -> Result<Bytes, ObjectStoreError> {
        if len == 0 {
            return Ok(Bytes::new());
        }
        let unit = self.unit_of(key);
        let id = |index| BlockId {
            key: key.clone(),
            unit,
            index,
        };
        let range = start..start.saturating_add(len);
        let needed = blocks_covering(&range, unit);
        // The first block says where the object ends: a read past it fails here, rather than
        // sending GETs for blocks that do not exist (which the store answers with an error
        // that looks transient). The rest are fetched together.
        let first = self.block(id(needed.start), GetReason::Miss).await?;
        let object_size = first.object_size;
        let past_the_end = || ObjectStoreError::PastTheEnd {
            key: key.to_string(),
            size: object_size,
            wanted_end: range.end,
        };
        if range.end > object_size {
            return Err(past_the_end());
        }
        let rest =
            (needed.start + 1..needed.end).map(|index| self.block(id(index), GetReason::Miss));
        let mut blocks = vec![first];
        blocks.extend(futures::future::try_join_all(rest).await?);
        if let Some(next) = read_ahead(&range, unit, object_size) {
            self.fetch_ahead(id(next));
        }
        slice_blocks(&blocks, needed.start, &range, unit).ok_or_else(past_the_end)
    }

    /// The range if the memory tier holds all of it; never fetches or fills (for background
    /// jobs, whose old data should not push out what consumers read; a block found counts as
    /// used, which moka offers no way around).
    pub async fn peek(&self, key: &ObjectKey, range: Range<u64>) -> Option<Bytes> {
        let unit = self.unit_of(key);
        let needed = blocks_covering(&range, unit);
        let mut blocks = Vec::with_capacity((needed.end - needed.start) as usize);
        for index in needed.clone() {
            let id = BlockId {
                key: key.clone(),
                unit,
                index,
            };
            blocks.push(self.memory.get(&id).await?);
        }
        slice_blocks(&blocks, needed.start, &range, unit)
    }

    /// Puts a freshly uploaded object into memory (and onto disk), before its commit: the
    /// fetches of its data that follow find it here.
    pub async fn admit_upload(&self, key: &ObjectKey, object: &Bytes) {
        let unit = self.unit_of(key);
        for (index, block) in block::split_into_blocks(object, unit) {
            let id = BlockId {
                key: key.clone(),
                unit,
                index,
            };
            TierMetrics::filled(&self.metrics.memory, block.bytes.len() as u64);
            if let Some(disk) = &self.disk {
                disk.fill(id.clone(), block.clone());
            }
            self.memory.insert(id, block).await;
        }
    }

    /// One block: from memory, else (one reader for all who want it) from disk or a GET.
    async fn block(&self, id: BlockId, reason: GetReason) -> Result<Block, ObjectStoreError> {
        if let Some(block) = self.memory.get(&id).await {
            TierMetrics::hit(&self.metrics.memory, block.bytes.len() as u64);
            return Ok(block);
        }
        TierMetrics::add(&self.metrics.memory.misses, 1);
        let loaded_here = AtomicBool::new(false);
        let load = async {
            loaded_here.store(true, Ordering::Relaxed);
            self.load(&id, reason).await
        };
        let result = self
            .memory
            .try_get_with(id.clone(), load)
            .await
            .map_err(ObjectStoreError::Shared);
        match (&result, loaded_here.load(Ordering::Relaxed)) {
            (Ok(block), true) => {
                TierMetrics::filled(&self.metrics.memory, block.bytes.len() as u64)
            }
            (_, false) => TierMetrics::add(&self.metrics.coalesced, 1),
            _ => {}
        }
        result
    }

    /// A block no memory holds: from the disk tier, else a GET (whose result goes to disk).
    async fn load(&self, id: &BlockId, reason: GetReason) -> Result<Block, ObjectStoreError> {
        if let Some(disk) = &self.disk
            && let Some(block) = disk.get(id).await
        {
            return Ok(block);
        }
        let (bytes, object_size) = {
            let _in_flight = self.gets.acquire().await;
            self.store
                .get_block(id.key.as_str(), block_range(id.index, id.unit))
                .await?
        };
        self.metrics.got(reason, bytes.len() as u64);
        let block = Block { bytes, object_size };
        if let Some(disk) = &self.disk {
            disk.fill(id.clone(), block.clone());
        }
        Ok(block)
    }

    /// Fetches a block in the background unless it is held or too many are in flight.
    fn fetch_ahead(&self, id: BlockId) {
        let Some(permits) = &self.read_ahead else {
            return;
        };
        if self.memory.contains_key(&id) {
            return;
        }
        let Ok(permit) = permits.clone().try_acquire_owned() else {
            return;
        };
        let read_cache = self.clone();
        tokio::spawn(async move {
            let _permit = permit;
            if let Err(e) = read_cache.block(id, GetReason::ReadAhead).await {
                tracing::debug!(error = %crate::telemetry::ErrorChain(&e), "read-ahead failed");
            }
        });
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
