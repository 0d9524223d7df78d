//! The commands, one file per noun: each file holds its noun's commands as types (`noun!`),
//! and applies each (`Apply`), composing the parts of the state the command touches.
//! A part (`state/*.rs`) keeps its own rules; a noun's file composes them.

#[macro_use]
mod request;
mod agent;
mod client_quota;
mod clock;
mod cluster;
mod group_config;
mod group_offsets;
mod job;
mod log;
mod producer;
mod security;
mod share;
mod topic;
mod transaction;

pub use agent::*;
pub use client_quota::*;
pub use clock::*;
pub use cluster::*;
pub use group_config::*;
pub use group_offsets::*;
pub use job::*;
pub use log::*;
pub use producer::*;
pub(super) use request::Apply;
pub use request::{Noun, NounRequest};
pub use security::*;
pub use share::*;
pub use topic::*;
pub use transaction::*;
