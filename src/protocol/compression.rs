//! Decompression of a batch's records, for the few places the broker must look inside a
//! compressed batch (a record's timestamp for ListOffsets, a record's key on a compacted
//! topic), and compression for the one place it rewrites a batch: the cleaner of a compacted
//! topic keeps a batch's codec (`compress`). Otherwise batches are stored and served byte for
//! byte.
//!
//! Kafka's framings: gzip is a gzip stream; snappy is either raw snappy or the xerial
//! framing the Java client writes (a magic header, then length-prefixed raw blocks); lz4 is
//! the LZ4 frame format; zstd is a zstd frame. Output is bounded: a small batch cannot
//! expand into an unbounded buffer (a "zip bomb" answers an error).

use super::record_batch::Compression;
use std::io::Read;

/// The xerial snappy stream header: magic, then a version and a compatible version (i32 each).
const XERIAL_MAGIC: &[u8] = b"\x82SNAPPY\x00";
const XERIAL_HEADER_BYTES: usize = XERIAL_MAGIC.len() + 8;

/// Records decompress to at most this many bytes per compressed byte, and at least
/// `DECOMPRESSED_MIN`, at most `DECOMPRESSED_MAX` in all: a small batch cannot claim a huge
/// output (snappy states its output size up front; the others stop at the bound).
const EXPANSION_MAX: usize = 1024;
const DECOMPRESSED_MIN: usize = 1 << 20;
const DECOMPRESSED_MAX: usize = 64 << 20;

/// What decompressing a batch of `compressed` bytes may produce.
pub fn decompressed_limit(compressed: usize) -> usize {
    compressed
        .saturating_mul(EXPANSION_MAX)
        .clamp(DECOMPRESSED_MIN, DECOMPRESSED_MAX)
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecompressError {
    #[error("unknown compression codec {0}")]
    UnknownCodec(u8),
    #[error("{codec} data is corrupt: {reason}")]
    Corrupt { codec: &'static str, reason: String },
    #[error("decompressed records exceed {limit} bytes")]
    TooLarge { limit: usize },
}

/// The records of a batch whose payload is `data`, decompressed, at most `limit` bytes.
pub fn decompress(
    codec: Compression,
    data: &[u8],
    limit: usize,
) -> Result<Vec<u8>, DecompressError> {
    match codec {
        Compression::None => bounded(data, limit, "none"),
        Compression::Gzip => bounded(flate2::read::GzDecoder::new(data), limit, "gzip"),
        Compression::Snappy => snappy(data, limit),
        Compression::Lz4 => bounded(lz4_flex::frame::FrameDecoder::new(data), limit, "lz4"),
        Compression::Zstd => {
            let decoder = ruzstd::decoding::StreamingDecoder::new(data).map_err(|e| {
                DecompressError::Corrupt {
                    codec: "zstd",
                    reason: e.to_string(),
                }
            })?;
            bounded(decoder, limit, "zstd")
        }
        Compression::Unknown(code) => Err(DecompressError::UnknownCodec(code)),
    }
}

/// `records` compressed with `codec`, framed as Kafka's Java client frames it: a gzip stream,
/// xerial-framed snappy, an LZ4 frame of independent 64 KiB blocks (what Kafka's
/// `KafkaLZ4BlockInputStream` reads), a zstd frame. `None` for a codec Kafka does not define.
pub fn compress(codec: Compression, records: &[u8]) -> Option<Vec<u8>> {
    use std::io::Write;
    let written = |result: std::io::Result<Vec<u8>>| {
        // Writing into a Vec cannot fail.
        result.ok()
    };
    match codec {
        Compression::None => Some(records.to_vec()),
        Compression::Gzip => {
            let mut gzip =
                flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            written(gzip.write_all(records).and_then(|()| gzip.finish()))
        }
        Compression::Snappy => {
            // xerial: the header, then blocks of at most 32 KiB, each compressed alone.
            let mut out = XERIAL_MAGIC.to_vec();
            out.extend([0, 0, 0, 1, 0, 0, 0, 1]);
            let mut encoder = snap::raw::Encoder::new();
            for block in records.chunks(XERIAL_BLOCK_BYTES) {
                let compressed = encoder.compress_vec(block).ok()?;
                out.extend((compressed.len() as u32).to_be_bytes());
                out.extend(compressed);
            }
            Some(out)
        }
        Compression::Lz4 => {
            let info = lz4_flex::frame::FrameInfo::new()
                .block_size(lz4_flex::frame::BlockSize::Max64KB)
                .block_mode(lz4_flex::frame::BlockMode::Independent);
            let mut lz4 = lz4_flex::frame::FrameEncoder::with_frame_info(info, Vec::new());
            written(
                lz4.write_all(records)
                    .and_then(|()| lz4.finish().map_err(std::io::Error::other)),
            )
        }
        Compression::Zstd => Some(ruzstd::encoding::compress_to_vec(
            records,
            ruzstd::encoding::CompressionLevel::Fastest,
        )),
        Compression::Unknown(_) => None,
    }
}

/// The block size of the xerial snappy framing the Java client writes.
const XERIAL_BLOCK_BYTES: usize = 32 << 10;

/// Reads all of `reader`, failing once more than `limit` bytes come out.
fn bounded(
    reader: impl Read,
    limit: usize,
    codec: &'static str,
) -> Result<Vec<u8>, DecompressError> {
    let mut out = Vec::new();
    reader
        .take(limit as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| DecompressError::Corrupt {
            codec,
            reason: e.to_string(),
        })?;
    if out.len() > limit {
        return Err(DecompressError::TooLarge { limit });
    }
    Ok(out)
}

fn snappy(data: &[u8], limit: usize) -> Result<Vec<u8>, DecompressError> {
    let corrupt = |reason: String| DecompressError::Corrupt {
        codec: "snappy",
        reason,
    };
    let raw_block = |block: &[u8], out: &mut Vec<u8>| {
        let length = snap::raw::decompress_len(block).map_err(|e| corrupt(e.to_string()))?;
        if out.len() + length > limit {
            return Err(DecompressError::TooLarge { limit });
        }
        let start = out.len();
        out.resize(start + length, 0);
        snap::raw::Decoder::new()
            .decompress(block, &mut out[start..])
            .map_err(|e| corrupt(e.to_string()))?;
        Ok(())
    };
    let mut out = Vec::new();
    if !data.starts_with(XERIAL_MAGIC) {
        raw_block(data, &mut out)?;
        return Ok(out);
    }
    let mut rest = data
        .get(XERIAL_HEADER_BYTES..)
        .ok_or_else(|| corrupt("xerial header truncated".to_string()))?;
    while !rest.is_empty() {
        let (length, tail) = rest
            .split_first_chunk::<4>()
            .ok_or_else(|| corrupt("xerial block length truncated".to_string()))?;
        let length = u32::from_be_bytes(*length) as usize;
        let block = tail
            .get(..length)
            .ok_or_else(|| corrupt(format!("xerial block of {length} bytes truncated")))?;
        raw_block(block, &mut out)?;
        rest = &tail[length..];
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const TEXT: &[u8] = b"floe floe floe floe floe floe floe floe records records records";

    #[test]
    fn every_codec_round_trips() {
        let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gzip.write_all(TEXT).unwrap();
        let gzip = gzip.finish().unwrap();
        let snappy = snap::raw::Encoder::new().compress_vec(TEXT).unwrap();
        let mut xerial = XERIAL_MAGIC.to_vec();
        xerial.extend([0, 0, 0, 1, 0, 0, 0, 1]);
        xerial.extend((snappy.len() as u32).to_be_bytes());
        xerial.extend(&snappy);
        xerial.extend((snappy.len() as u32).to_be_bytes());
        xerial.extend(&snappy);
        let mut lz4 = lz4_flex::frame::FrameEncoder::new(Vec::new());
        lz4.write_all(TEXT).unwrap();
        let lz4 = lz4.finish().unwrap();
        // ruzstd encodes too; the end-to-end tests decode librdkafka's zstd batches.
        let zstd =
            ruzstd::encoding::compress_to_vec(TEXT, ruzstd::encoding::CompressionLevel::Fastest);
        for (codec, data) in [
            (Compression::Gzip, gzip),
            (Compression::Snappy, snappy),
            (Compression::Lz4, lz4),
            (Compression::Zstd, zstd),
        ] {
            assert_eq!(
                decompress(codec, &data, 1 << 20).unwrap(),
                TEXT,
                "{codec:?}"
            );
        }
        assert_eq!(
            decompress(Compression::Snappy, &xerial, 1 << 20).unwrap(),
            [TEXT, TEXT].concat()
        );
    }

    #[test]
    fn what_compress_writes_decompresses_to_the_same_records() {
        let large: Vec<u8> = (0..200_000u32)
            .flat_map(|i| (i % 251).to_be_bytes())
            .collect();
        for records in [&b""[..], TEXT, &large] {
            for codec in [
                Compression::None,
                Compression::Gzip,
                Compression::Snappy,
                Compression::Lz4,
                Compression::Zstd,
            ] {
                let compressed = compress(codec, records).unwrap();
                assert_eq!(
                    decompress(codec, &compressed, 64 << 20).unwrap(),
                    records,
                    "{codec:?}"
                );
            }
        }
        assert_eq!(compress(Compression::Unknown(7), TEXT), None);
    }

    #[test]
    fn output_is_bounded_and_garbage_is_an_error() {
        let zeros = vec![0u8; 1 << 16];
        let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gzip.write_all(&zeros).unwrap();
        let gzip = gzip.finish().unwrap();
        assert_eq!(
            decompress(Compression::Gzip, &gzip, 1000),
            Err(DecompressError::TooLarge { limit: 1000 })
        );
        for codec in [
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
            assert!(
                decompress(codec, b"not compressed at all", 1 << 20).is_err(),
                "{codec:?}"
            );
        }
        assert!(decompress(Compression::Unknown(6), b"", 10).is_err());
        assert_eq!(decompressed_limit(10), 1 << 20);
        assert_eq!(decompressed_limit(usize::MAX), 64 << 20);
    }
}
