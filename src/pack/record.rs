//! One object as it lies in a pack file: a header, its key, its bytes, then zeros to the next
//! 4 KiB boundary.
//!
//! ```text
//! ┌ header 32 B: "FLPK" | version u8 = 1 | 0 u8 | key_len u16 | payload_len u64 |
//! │              written_ms i64 | payload crc32c u32 | header crc32c u32 (of the 28 B before
//! │              it and the key)
//! │ key (UTF-8) · payload · zeros to the next multiple of 4 KiB
//! └
//! ```
//! All integers are big-endian. Every record starts on a 4 KiB boundary, so a pack can be
//! written with direct I/O, a deleted record's blocks can be given back to the filesystem
//! (a hole reads as zeros, which no header starts with), and a reader that lost its place
//! finds the next record by trying each boundary.

/// Records start and end on this boundary: the block size direct I/O and hole punching need.
pub const ALIGN: u64 = 4096;
pub const HEADER_BYTES: usize = 32;
/// Keys are object-store paths; floe's own are under a hundred bytes.
pub const KEY_BYTES_MAX: usize = 1024;
/// No object is larger (S3's own limit is 5 TiB); a header claiming more is not a record, and
/// the offsets computed from one that is cannot overflow.
pub const PAYLOAD_BYTES_MAX: u64 = 1 << 42;
const MAGIC: &[u8; 4] = b"FLPK";
const VERSION: u8 = 1;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordHeader {
    pub key: String,
    pub payload_len: u64,
    pub written_ms: i64,
    pub payload_crc: u32,
}

/// Why the bytes at a boundary are not a record's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NotARecord {
    #[error("zeros: a hole or padding")]
    Zeros,
    #[error("too short for a header")]
    Short,
    #[error("no record magic")]
    BadMagic,
    #[error("unknown record version {0}")]
    BadVersion(u8),
    #[error("the header's checksum does not match")]
    BadChecksum,
    #[error("the key is not UTF-8")]
    BadKey,
    #[error("the payload length is absurd")]
    BadLength,
}

impl RecordHeader {
    pub fn new(key: &str, payload: &[&[u8]], written_ms: i64) -> RecordHeader {
        let mut crc = 0;
        let mut payload_len = 0;
        for part in payload {
            crc = crc32c::crc32c_append(crc, part);
            payload_len += part.len() as u64;
        }
        RecordHeader {
            key: key.to_string(),
            payload_len,
            written_ms,
            payload_crc: crc,
        }
    }

    /// Header and key: what precedes the payload.
    pub fn prefix_len(&self) -> u64 {
        (HEADER_BYTES + self.key.len()) as u64
    }

    /// The whole record with its padding: where the next one starts.
    pub fn padded_len(&self) -> u64 {
        padded(self.prefix_len() + self.payload_len)
    }

    /// Header and key, `prefix_len` bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.prefix_len() as usize);
        out.extend_from_slice(MAGIC);
        out.push(VERSION);
        out.push(0);
        out.extend_from_slice(&(self.key.len() as u16).to_be_bytes());
        out.extend_from_slice(&self.payload_len.to_be_bytes());
        out.extend_from_slice(&self.written_ms.to_be_bytes());
        out.extend_from_slice(&self.payload_crc.to_be_bytes());
        let crc = crc32c::crc32c_append(crc32c::crc32c(&out), self.key.as_bytes());
        out.extend_from_slice(&crc.to_be_bytes());
        out.extend_from_slice(self.key.as_bytes());
        out
    }

    /// Reads a header and its key from the start of `bytes` (which may hold more).
    pub fn decode(bytes: &[u8]) -> Result<RecordHeader, NotARecord> {
        if bytes.len() < HEADER_BYTES {
            return Err(NotARecord::Short);
        }
        if bytes[..HEADER_BYTES].iter().all(|b| *b == 0) {
            return Err(NotARecord::Zeros);
        }
        if &bytes[..4] != MAGIC {
            return Err(NotARecord::BadMagic);
        }
        if bytes[4] != VERSION {
            return Err(NotARecord::BadVersion(bytes[4]));
        }
        let be_u32 = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().expect("4"));
        let be_u64 = |at: usize| u64::from_be_bytes(bytes[at..at + 8].try_into().expect("8"));
        let key_len = u16::from_be_bytes([bytes[6], bytes[7]]) as usize;
        let key_end = HEADER_BYTES + key_len;
        if key_len > KEY_BYTES_MAX || bytes.len() < key_end {
            return Err(NotARecord::Short);
        }
        let key = &bytes[HEADER_BYTES..key_end];
        let crc = crc32c::crc32c_append(crc32c::crc32c(&bytes[..28]), key);
        if crc != be_u32(28) {
            return Err(NotARecord::BadChecksum);
        }
        let key = std::str::from_utf8(key).map_err(|_| NotARecord::BadKey)?;
        if be_u64(8) > PAYLOAD_BYTES_MAX {
            return Err(NotARecord::BadLength);
        }
        Ok(RecordHeader {
            key: key.to_string(),
            payload_len: be_u64(8),
            written_ms: be_u64(16) as i64,
            payload_crc: be_u32(24),
        })
    }
}

/// `len` rounded up to the next boundary.
pub fn padded(len: u64) -> u64 {
    len.div_ceil(ALIGN) * ALIGN
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_reads_back_and_pads_to_the_boundary() {
        let header = RecordHeader::new("objects/a/b", &[b"hello ", b"world"], 1_700_000_000_000);
        let bytes = header.encode();
        assert_eq!(bytes.len() as u64, header.prefix_len());
        assert_eq!(RecordHeader::decode(&bytes), Ok(header.clone()));
        assert_eq!(header.payload_crc, crc32c::crc32c(b"hello world"));
        assert_eq!(header.padded_len(), ALIGN);
        let big = RecordHeader::new("k", &[&[7u8; 4096]], 0);
        assert_eq!(big.padded_len(), 2 * ALIGN);
    }

    #[test]
    fn zeros_garbage_and_torn_headers_are_told_apart() {
        assert_eq!(RecordHeader::decode(&[0; 64]), Err(NotARecord::Zeros));
        assert_eq!(RecordHeader::decode(&[1; 8]), Err(NotARecord::Short));
        assert_eq!(RecordHeader::decode(&[1; 64]), Err(NotARecord::BadMagic));
        let bytes = RecordHeader::new("objects/k", &[b"x"], 5).encode();
        for at in 4..bytes.len() {
            let mut torn = bytes.clone();
            torn[at] ^= 0x40;
            assert!(RecordHeader::decode(&torn).is_err(), "flipped byte {at}");
        }
        assert_eq!(
            RecordHeader::decode(&bytes[..bytes.len() - 1]),
            Err(NotARecord::Short)
        );
        // A checksum-correct header claiming an absurd length (a bug, or a disk's) is refused.
        let mut absurd = RecordHeader::new("objects/k", &[b"x"], 5);
        absurd.payload_len = u64::MAX;
        assert_eq!(
            RecordHeader::decode(&absurd.encode()),
            Err(NotARecord::BadLength)
        );
    }
}
