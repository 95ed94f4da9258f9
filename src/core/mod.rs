//! The napi-free core: everything here is plain Rust, covered by `cargo test`.

pub mod body;
pub mod budget;
pub mod decode;
pub mod digest;
pub mod encoding;
pub mod error;
pub mod ledger;
pub mod memory;
pub mod multipart;
pub mod pool;
mod state;
pub mod stream;
pub mod text;

#[cfg(test)]
mod error_table;
#[cfg(test)]
mod props;
#[cfg(test)]
mod tests;

pub use body::{Body, BodyOptions, FinishError, Misuse};
pub use error::{BodyError, Invalid};
pub use memory::{stats, AllocError, Block, MemoryStats};
pub use stream::{BodyStream, Read};
