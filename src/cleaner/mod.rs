//! Kafka's log cleaner, for topics with `cleanup.policy=compact`: which records of a
//! partition survive a cleaning pass, and the batches rewritten without the others. Pure: the
//! job that reads a partition's objects, runs a pass and swaps the result in is elsewhere.
//!
//! A pass is Kafka's two passes over the log (`Cleaner.cleanSegments`):
//! 1. `KeyMap::build` reads the dirty section (what no pass has cleaned yet) and keeps the
//!    latest offset of each key, in a map of bounded memory; a section with more keys than fit
//!    is cleaned up to the first key that did not, and the next pass goes on from there.
//! 2. `Filter::batch` goes over the partition from its start and keeps a record when it is the
//!    latest of its key (or lies beyond what the map covers); tombstones are kept until their
//!    batch's delete horizon; records of aborted transactions go, and transaction markers stay
//!    while a consumer may still need them (`transactions`).
//!
//! Offsets never change: a batch keeps its base offset and last offset delta, and a dropped
//! record leaves a gap (`rewrite::rebuild`).

pub mod filter;
pub mod key_map;
pub mod rewrite;
pub mod transactions;

#[cfg(test)]
mod tests;

pub use filter::{Cleaned, Filter, Kept, Settings};
pub use key_map::KeyMap;
pub use transactions::AbortedTxn;
