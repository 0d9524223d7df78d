//! The read path: a pure planner over the partition index, and a reader that fetches byte
//! ranges and patches batch headers; `runs` turns index entries (segments through their
//! footers, kept in the index cache) into the byte ranges to read. Long polling lives in the Fetch handler, woken by commits.

pub mod by_time;
pub mod planner;
pub mod reader;
pub mod runs;
