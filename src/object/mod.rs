//! The object format, pure: the multi-partition object layout (`format`), the segment layout
//! (`segment`) and the key schema (`key`). Reading and writing objects is `store`'s; the
//! embedded engine that keeps them in a few local files is `pack`'s.

pub mod format;
pub mod key;
pub mod segment;
