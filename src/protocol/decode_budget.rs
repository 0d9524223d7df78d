//! What decoding one message may allocate: `DECODED_PER_WIRE_BYTE` times its bytes on the
//! wire, plus `DECODE_SLACK_BYTES`.
//!
//! Every length on the wire is checked against the bytes remaining, but that alone bounds
//! nothing useful: one byte can decode to a struct of a hundred (an empty compact array
//! element, an empty string), so a 100 MiB frame could decode to gigabytes. Instead every
//! allocation the decoder makes is charged here before it is made (array elements at their
//! size in memory, string bytes, tagged fields), and a message that would exceed its budget
//! fails to decode; the connection is then closed like for any undecodable frame.
//!
//! Real requests stay far below it: their bulk is records (zero-copy slices of the frame) or
//! fixed-width fields that decode to their own size. The densest legitimate shape, a list of
//! short names (a Metadata request for topics of 20 characters: 22 bytes on the wire, 84 in
//! memory), needs about 3.8× — covered by the slack up to more topics than a cluster may hold.
//!
//! The budget lives in a thread-local for the duration of `Message::decode`: decoding is
//! synchronous (it never awaits), so the thread is the decode. A nested `decode` shares the
//! outer budget.

use std::cell::Cell;

/// An allocation the message's budget cannot pay for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetExceeded {
    pub bytes: usize,
    pub available: usize,
}

/// Bytes of decoded memory each wire byte of a message may pay for.
pub const DECODED_PER_WIRE_BYTE: usize = 3;
/// Decoded memory any message may take regardless of its size.
pub const DECODE_SLACK_BYTES: usize = 4 << 20;

thread_local! {
    /// Bytes the message being decoded on this thread may still allocate; `None` outside a
    /// decode.
    static LEFT: Cell<Option<usize>> = const { Cell::new(None) };
}

/// Runs `decode` with the budget of a message of `wire_bytes`, unless one is already running.
pub fn within_budget<T>(wire_bytes: usize, decode: impl FnOnce() -> T) -> T {
    if LEFT.with(Cell::get).is_some() {
        return decode();
    }
    let budget = wire_bytes
        .saturating_mul(DECODED_PER_WIRE_BYTE)
        .saturating_add(DECODE_SLACK_BYTES);
    // Clears the budget however `decode` ends, so the next decode on this thread starts anew.
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            LEFT.with(|left| left.set(None));
        }
    }
    LEFT.with(|left| left.set(Some(budget)));
    let _reset = Reset;
    decode()
}

/// Charges an allocation of `bytes` about to be made; outside a decode, nothing is counted.
pub fn charge(bytes: usize) -> Result<(), BudgetExceeded> {
    LEFT.with(|left| match left.get() {
        None => Ok(()),
        Some(available) => match available.checked_sub(bytes) {
            Some(rest) => {
                left.set(Some(rest));
                Ok(())
            }
            None => Err(BudgetExceeded { bytes, available }),
        },
    })
}

/// Charges `count` values of `T`.
pub fn charge_elements<T>(count: usize) -> Result<(), BudgetExceeded> {
    charge(count.saturating_mul(std::mem::size_of::<T>()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_may_allocate_its_budget_and_no_more() {
        within_budget(100, || {
            assert_eq!(charge(300 + DECODE_SLACK_BYTES), Ok(()));
            assert_eq!(
                charge(1),
                Err(BudgetExceeded {
                    bytes: 1,
                    available: 0
                })
            );
        });
        // The next message starts with a budget of its own, and nothing is counted outside.
        within_budget(0, || assert_eq!(charge(DECODE_SLACK_BYTES), Ok(())));
        assert_eq!(charge(usize::MAX), Ok(()));
    }

    #[test]
    fn a_nested_decode_shares_the_outer_budget() {
        within_budget(0, || {
            within_budget(1 << 30, || assert_eq!(charge(DECODE_SLACK_BYTES), Ok(())));
            assert!(charge(1).is_err());
        });
    }
}
