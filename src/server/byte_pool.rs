//! A budget of bytes shared by all connections (Kafka's `queued.max.request.bytes` memory
//! pool, which is not strict either). A reservation succeeds whenever any bytes are free, and
//! may take the budget below zero by its own size: a request announced at 100 MiB neither
//! holds up the small requests of other clients (a first-come-first-served semaphore would
//! queue every one of them behind it, so a few clients announcing large frames would stall
//! the broker) nor waits forever while small ones keep the budget from ever being whole.
//! What is reserved at once is at most the capacity plus one reservation (itself at most the
//! capacity).

use std::sync::{Arc, Mutex};
use tokio::sync::Notify;

pub struct BytePool {
    capacity: usize,
    /// Negative after a reservation larger than what was free.
    free: Mutex<i64>,
    released: Notify,
}

/// Bytes taken from a pool, given back when dropped.
pub struct Reservation {
    pool: Arc<BytePool>,
    bytes: usize,
}

impl BytePool {
    pub fn new(capacity: usize) -> Arc<BytePool> {
        Arc::new(BytePool {
            capacity,
            free: Mutex::new(capacity as i64),
            released: Notify::new(),
        })
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// `bytes` (at most the capacity), if any bytes are free now.
    pub fn try_reserve(self: &Arc<BytePool>, bytes: usize) -> Option<Reservation> {
        let bytes = bytes.min(self.capacity);
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        if *free <= 0 && bytes > 0 {
            return None;
        }
        *free -= bytes as i64;
        Some(Reservation {
            pool: self.clone(),
            bytes,
        })
    }

    /// `bytes` (at most the capacity), once any bytes are free.
    pub async fn reserve(self: &Arc<BytePool>, bytes: usize) -> Reservation {
        loop {
            // Registered before the check, so a release between the two is not missed.
            let released = self.released.notified();
            tokio::pin!(released);
            released.as_mut().enable();
            if let Some(reservation) = self.try_reserve(bytes) {
                return reservation;
            }
            released.await;
        }
    }

    /// Bytes free (negative while a reservation larger than what was free is held).
    pub fn free(&self) -> i64 {
        *self.free.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        *self.pool.free.lock().unwrap_or_else(|p| p.into_inner()) += self.bytes as i64;
        self.pool.released.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn any_free_bytes_grant_a_reservation_and_none_hold_every_one_back() {
        let pool = BytePool::new(100);
        let held = pool.try_reserve(60).expect("free");
        // Larger than what is free, but some is: granted, overshooting by its own size, so it
        // never waits for the whole budget behind a stream of small ones.
        let large = pool.try_reserve(80).expect("some bytes are free");
        assert_eq!(pool.free(), -40);
        assert!(pool.try_reserve(1).is_none(), "nothing is free now");
        let waiter = tokio::spawn({
            let pool = pool.clone();
            async move { pool.reserve(10).await.bytes }
        });
        tokio::task::yield_now().await;
        drop(large);
        assert_eq!(waiter.await.unwrap(), 10, "woken by the release");
        drop(held);
        assert_eq!(pool.free(), 100);
        // More than the capacity is clamped to it; nothing is reserved for zero bytes.
        assert_eq!(pool.reserve(1_000).await.bytes, 100);
        assert_eq!(pool.try_reserve(0).map(|r| r.bytes), Some(0));
    }
}
