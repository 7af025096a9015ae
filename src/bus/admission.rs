//! The daemon's bound on the requests it holds, shared by every way in (NATS and `/mcp`).
//!
//! At most `max_in_flight` requests are worked on at once and at most `max_queued` more wait
//! for a turn; a request past that is refused at once, so the caller hears `overloaded` in
//! milliseconds instead of timing out behind a queue that cannot drain in time.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::wire::{ErrorCode, ErrorResponse};

/// The bound. Cheap to clone; clones share it.
#[derive(Clone)]
pub struct Admission {
    working: Arc<Semaphore>,
    admitted: Arc<Semaphore>,
    in_hand: usize,
    refused: Arc<AtomicU64>,
}

/// A request admitted: it holds its place until dropped.
pub struct Admitted {
    _place: OwnedSemaphorePermit,
    working: Arc<Semaphore>,
}

/// A request being worked on: one of the `max_in_flight` turns, and its place.
pub struct Working {
    _turn: OwnedSemaphorePermit,
    _place: Admitted,
}

impl Admission {
    pub fn new(max_in_flight: usize, max_queued: usize) -> Self {
        let max_in_flight = max_in_flight.max(1);
        Self {
            working: Arc::new(Semaphore::new(max_in_flight)),
            admitted: Arc::new(Semaphore::new(max_in_flight + max_queued)),
            in_hand: max_in_flight + max_queued,
            refused: Arc::new(AtomicU64::new(0)),
        }
    }

    /// A place for one more request, or `None` (already logged) when the daemon is full.
    pub fn try_admit(&self) -> Option<Admitted> {
        match Arc::clone(&self.admitted).try_acquire_owned() {
            Ok(place) => Some(Admitted {
                _place: place,
                working: Arc::clone(&self.working),
            }),
            Err(_) => {
                let refused = self.refused.fetch_add(1, Ordering::Relaxed) + 1;
                if refused.is_power_of_two() {
                    tracing::warn!(
                        refused,
                        in_hand = self.in_hand,
                        "overloaded: answering `overloaded` to requests past the bound"
                    );
                }
                None
            }
        }
    }

    /// The reply to a request refused by [`Admission::try_admit`].
    pub fn overloaded(&self) -> ErrorResponse {
        ErrorResponse::new(
            ErrorCode::Overloaded,
            format!(
                "the daemon has {} requests in hand; retry after a short pause",
                self.in_hand
            ),
        )
    }
}

impl Admitted {
    /// Waits for a turn to work. `None` only if the bound was torn down.
    pub async fn start(self) -> Option<Working> {
        let turn = Arc::clone(&self.working).acquire_owned().await.ok()?;
        Some(Working {
            _turn: turn,
            _place: self,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn past_in_flight_plus_queued_requests_are_refused_until_one_finishes() {
        let admission = Admission::new(1, 1);
        let first = admission.try_admit().expect("first admitted");
        let second = admission.try_admit().expect("second queued");
        assert!(admission.try_admit().is_none(), "third refused");
        let working = first.start().await.expect("a turn");
        // The queued one waits for the turn the first holds.
        let waiting = tokio::spawn(second.start());
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        assert!(admission.try_admit().is_none());
        drop(working);
        let second = waiting.await.expect("join").expect("a turn");
        assert!(admission.try_admit().is_some(), "a place is free again");
        drop(second);
        assert_eq!(
            admission.overloaded().error.code,
            ErrorCode::Overloaded,
            "the refusal's code"
        );
    }
}
