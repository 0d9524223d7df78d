//! The produce pipeline's metrics: batches accepted (light or heavy), objects sealed (by
//! reason) and their sizes, and how long metadata commits take.

use super::batcher::{SealReason, Standing};
use crate::telemetry::histogram::{Histogram, LATENCY_SECONDS, SIZE_BYTES};
use std::sync::atomic::{AtomicU64, Ordering};

pub struct PipelineMetrics {
    pub commit_latency: Histogram,
    pub object_size: Histogram,
    sealed: [AtomicU64; 3],
    accepted: [AtomicU64; 2],
}

impl Default for PipelineMetrics {
    fn default() -> Self {
        PipelineMetrics {
            commit_latency: Histogram::new(LATENCY_SECONDS),
            object_size: Histogram::new(SIZE_BYTES),
            sealed: Default::default(),
            accepted: Default::default(),
        }
    }
}

impl PipelineMetrics {
    pub fn object_sealed(&self, reason: SealReason, bytes: usize) {
        self.sealed[reason as usize].fetch_add(1, Ordering::Relaxed);
        self.object_size.observe(bytes as f64);
    }

    pub fn sealed(&self, reason: SealReason) -> u64 {
        self.sealed[reason as usize].load(Ordering::Relaxed)
    }

    pub fn batch_accepted(&self, standing: Standing) {
        self.accepted[standing as usize].fetch_add(1, Ordering::Relaxed);
    }

    pub fn accepted(&self, standing: Standing) -> u64 {
        self.accepted[standing as usize].load(Ordering::Relaxed)
    }
}
