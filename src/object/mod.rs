//! Objects in the object store: the multi-partition format and the key schema (pure code).

pub mod format;
pub mod key;
