//! Record bytes that a response sends without copying them into its frame.
//!
//! A fetch answers with batches the read tiers already hold. Copying them into one response
//! buffer cost as much CPU as the socket's own copy; instead a record field holds its bytes as
//! parts ([`Records`]), and while a response is encoded, parts of at least [`SPLICE_MIN`] bytes
//! are noted beside the frame's buffer rather than written into it. The frame then goes out
//! as a list of parts ([`crate::protocol::frame::Frame`]) in vectored writes.
//!
//! The generated encoders write into a `BytesMut`, so the notes ride beside it in a
//! thread-local for the one synchronous encode that [`capture`] runs, and only for that
//! buffer: a record field written anywhere else (a tagged field's scratch buffer, a test's own
//! buffer) is copied as before.

use bytes::{BufMut, Bytes, BytesMut};
use std::cell::RefCell;

/// Parts this long or longer are spliced; shorter ones are cheaper to copy than to send as a
/// separate slice.
pub const SPLICE_MIN: usize = 16 * 1024;

/// A record field's bytes: the concatenation of its parts.
#[derive(Debug, Clone, Default)]
pub struct Records {
    parts: Vec<Bytes>,
    len: usize,
}

impl Records {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends bytes (empty ones are dropped).
    pub fn push(&mut self, part: Bytes) {
        if !part.is_empty() {
            self.len += part.len();
            self.parts.push(part);
        }
    }

    pub fn parts(&self) -> &[Bytes] {
        &self.parts
    }

    /// The bytes in one piece: free when there is one part (as decoded), a copy otherwise.
    pub fn to_bytes(&self) -> Bytes {
        match self.parts.as_slice() {
            [] => Bytes::new(),
            [one] => one.clone(),
            parts => {
                let mut out = BytesMut::with_capacity(self.len);
                for part in parts {
                    out.put_slice(part);
                }
                out.freeze()
            }
        }
    }
}

impl Records {
    pub fn from_parts(parts: impl IntoIterator<Item = Bytes>) -> Records {
        let mut records = Records::default();
        for part in parts {
            records.push(part);
        }
        records
    }
}

impl From<Bytes> for Records {
    fn from(bytes: Bytes) -> Records {
        Records::from_parts([bytes])
    }
}

/// Equal when their bytes are, however they are split.
impl PartialEq for Records {
    fn eq(&self, other: &Records) -> bool {
        self.len == other.len && self.to_bytes() == other.to_bytes()
    }
}

impl Eq for Records {}

/// The buffer being encoded and the parts spliced into it, by the position they belong at.
struct Capture {
    buffer: *const BytesMut,
    splices: Vec<(usize, Bytes)>,
}

thread_local! {
    static CAPTURE: RefCell<Option<Capture>> = const { RefCell::new(None) };
}

/// Runs `encode` on `buf`, collecting the parts it splices instead of writing them: each with
/// the position in `buf` where its bytes belong, in order.
pub fn capture<R>(
    buf: &mut BytesMut,
    encode: impl FnOnce(&mut BytesMut) -> R,
) -> (R, Vec<(usize, Bytes)>) {
    let previous = CAPTURE.with(|c| {
        c.borrow_mut().replace(Capture {
            buffer: buf as *const BytesMut,
            splices: Vec::new(),
        })
    });
    // Restored however `encode` ends, a panic included: a capture left behind would take the
    // parts of a later write to a buffer that happens to live at the same address.
    let restore = Restore(previous);
    let result = encode(buf);
    let captured = CAPTURE.with(|c| c.borrow_mut().take());
    drop(restore);
    (result, captured.map(|c| c.splices).unwrap_or_default())
}

/// Puts back, when dropped, the capture that was active before [`capture`].
struct Restore(Option<Capture>);

impl Drop for Restore {
    fn drop(&mut self) {
        let previous = self.0.take();
        let _ = CAPTURE.try_with(|c| *c.borrow_mut() = previous);
    }
}

/// Writes `records`' bytes at the end of `buf`: splices its long parts when `buf` is the one
/// being captured, copies everything else.
pub fn put(buf: &mut BytesMut, records: &Records) {
    for part in records.parts() {
        let spliced = part.len() >= SPLICE_MIN
            && CAPTURE.with(|c| match c.borrow_mut().as_mut() {
                Some(capture) if std::ptr::eq(capture.buffer, buf) => {
                    capture.splices.push((buf.len(), part.clone()));
                    true
                }
                _ => false,
            });
        if !spliced {
            buf.put_slice(part);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(parts: &[&[u8]]) -> Records {
        Records::from_parts(parts.iter().map(|p| Bytes::copy_from_slice(p)))
    }

    #[test]
    fn records_compare_and_join_by_their_bytes() {
        let split = records(&[b"ab", b"", b"cd"]);
        assert_eq!(split.parts().len(), 2);
        assert_eq!(split.len(), 4);
        assert_eq!(split, Records::from(Bytes::from_static(b"abcd")));
        assert_eq!(split.to_bytes(), Bytes::from_static(b"abcd"));
        assert_ne!(split, records(&[b"abce"]));
    }

    #[test]
    fn long_parts_are_spliced_only_into_the_captured_buffer() {
        let long = vec![7u8; SPLICE_MIN];
        let r = records(&[b"head", &long, b"tail"]);
        let mut buf = BytesMut::from(&b"xy"[..]);
        let ((), splices) = capture(&mut buf, |buf| {
            put(buf, &r);
            // Another buffer (a tagged field's scratch) gets a copy.
            let mut scratch = BytesMut::new();
            put(&mut scratch, &r);
            assert_eq!(scratch.len(), r.len());
        });
        assert_eq!(&buf[..], b"xyheadtail");
        assert_eq!(splices.len(), 1);
        assert_eq!(splices[0].0, 6);
        assert_eq!(splices[0].1.len(), SPLICE_MIN);
        // Outside a capture everything is copied.
        let mut plain = BytesMut::new();
        put(&mut plain, &r);
        assert_eq!(plain.len(), r.len());
    }
}
