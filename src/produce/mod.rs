//! The produce path: a pure batcher deciding when to seal, and the pipeline that uploads
//! sealed objects and commits them to metadata in seal order.

pub mod batcher;
pub mod metrics;
pub mod pipeline;
pub mod settings;
pub mod shares;
pub mod timestamps;
pub mod validate;

pub use pipeline::{BatchResult, ProduceError, ProducePipeline};
