#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]
//! uws-body: reads HTTP request bodies for uWebSockets.js with one copy per byte.
//!
//! `core` holds the rules and memory and knows nothing of Node; `node` converts between
//! it and JavaScript.

pub mod core;
#[cfg(feature = "node")]
pub mod node;
