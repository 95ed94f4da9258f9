//! Where a body being read stands, `Body`'s and `BodyStream`'s alike, and what an abort
//! does to it: one implementation, so that both answer an abort the same way.

use super::error::BodyError;

#[derive(Debug)]
pub(super) enum State {
    Open,
    Failed(BodyError),
    Aborted(BodyError),
    /// The end was reached and every rule held.
    Done,
}

impl State {
    /// Aborts an open or failed body: a failed one keeps its error, an open one records
    /// an abort after `received` of `expected` bytes. True when it did, and the caller
    /// then releases what the body holds; false once done or aborted (a no-op).
    pub(super) fn abort(&mut self, expected: Option<u64>, received: u64) -> bool {
        let error = match std::mem::replace(self, State::Done) {
            State::Open => BodyError::Aborted { expected, received },
            State::Failed(error) => error,
            settled => {
                *self = settled;
                return false;
            }
        };
        *self = State::Aborted(error);
        true
    }

    /// The error of a failed or aborted body.
    pub(super) fn error(&self) -> Option<&BodyError> {
        match self {
            State::Failed(error) | State::Aborted(error) => Some(error),
            _ => None,
        }
    }
}
