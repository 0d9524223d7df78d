//! The hot tier on local disk: blocks of objects as files under the data directory.
//!
//! It is a cache, never the source of truth. Objects never change once written, so a block
//! file can only be right, torn or damaged — never out of date: each file names its object and
//! block in its header and ends with a CRC over everything before it, and a file that fails
//! either check is deleted and read again from the object store. Files are written to a
//! temporary name and renamed, so a crash leaves at worst a temporary file (removed at start).
//! Nothing is fsync'd: a lost file is a miss.
//!
//! Which files exist, and their sizes, is kept in memory (moka, bounded by bytes); a file
//! evicted from it is deleted. At start the directory is scanned and its files are taken back
//! oldest first, so the most recently written are the last to go.

use super::block::{Block, BlockId};
use super::metrics::TierMetrics;
use crate::ids::ObjectKey;
use bytes::{BufMut, Bytes, BytesMut};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::Semaphore;

const MAGIC: &[u8; 4] = b"FLHT";
const VERSION: u8 = 1;
/// Bytes of the header after the key: block size, block index, object size, data length.
const FIXED_BYTES: usize = 8 + 8 + 8 + 4;
const SUFFIX: &str = ".blk";
const TEMP_MARK: &str = ".tmp";
/// Block files being written at once; a fill beyond it is skipped (the disk is behind).
const WRITES_IN_FLIGHT_MAX: usize = 8;
/// The least a file is charged: bounds the number of files (and the memory that lists them)
/// when objects are tiny, as at low ingest rates.
const FILE_CHARGE_MIN: u64 = 64 * 1024;

fn charge(file_bytes: u64) -> u32 {
    u32::try_from(file_bytes.max(FILE_CHARGE_MIN)).unwrap_or(u32::MAX)
}

/// A file's identity: its name says the object and block index; the block size (which a
/// start with another `--read-block-bytes` changes) is in its header.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct FileId {
    key: ObjectKey,
    index: u64,
}

impl FileId {
    fn of(id: &BlockId) -> FileId {
        FileId {
            key: id.key.clone(),
            index: id.index,
        }
    }
}

pub struct DiskTier {
    dir: PathBuf,
    files: moka::sync::Cache<FileId, u32>,
    writes: Arc<Semaphore>,
    temp_names: AtomicU64,
    metrics: Arc<TierMetrics>,
}

impl DiskTier {
    /// The tier in `dir`, holding at most `bytes_max` bytes of files, with the files a previous
    /// run left there.
    pub fn open(dir: &Path, bytes_max: u64, metrics: Arc<TierMetrics>) -> std::io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        let owned = dir.to_path_buf();
        let files = moka::sync::Cache::builder()
            .max_capacity(bytes_max)
            .eviction_policy(moka::policy::EvictionPolicy::lru())
            .weigher(|_id: &FileId, bytes: &u32| *bytes)
            .eviction_listener(move |id: Arc<FileId>, _, cause| {
                // A replaced entry's file is the new one, already in place.
                if cause != moka::notification::RemovalCause::Replaced {
                    let _ = std::fs::remove_file(owned.join(file_name(&id)));
                }
            })
            .build();
        let tier = DiskTier {
            dir: dir.to_path_buf(),
            files,
            writes: Arc::new(Semaphore::new(WRITES_IN_FLIGHT_MAX)),
            temp_names: AtomicU64::new(0),
            metrics,
        };
        tier.take_back_files()?;
        Ok(tier)
    }

    fn take_back_files(&self) -> std::io::Result<()> {
        let mut found = Vec::new();
        for entry in std::fs::read_dir(&self.dir)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.contains(TEMP_MARK) {
                let _ = std::fs::remove_file(entry.path());
                continue;
            }
            let (Some(id), Ok(meta)) = (parse_file_name(&name), entry.metadata()) else {
                continue;
            };
            let modified = meta.modified().unwrap_or(std::time::UNIX_EPOCH);
            found.push((modified, id, meta.len()));
        }
        found.sort_by_key(|(modified, _, _)| *modified);
        for (_, id, len) in found {
            self.files.insert(id, charge(len));
        }
        self.files.run_pending_tasks();
        Ok(())
    }

    /// Files and bytes held (for metrics).
    pub fn usage(&self) -> (u64, u64) {
        self.files.run_pending_tasks();
        (self.files.entry_count(), self.files.weighted_size())
    }

    /// The block, if a sound file holds it; a file that fails its checks is deleted.
    pub async fn get(&self, id: &BlockId) -> Option<Block> {
        let file = FileId::of(id);
        // A read, so that the most recently read files are the last to go.
        if self.files.get(&file).is_none() {
            TierMetrics::add(&self.metrics.disk.misses, 1);
            return None;
        }
        let path = self.dir.join(file_name(&file));
        let read = tokio::task::spawn_blocking(move || std::fs::read(path)).await;
        let block = match read {
            Ok(Ok(raw)) => decode(&raw, id),
            _ => None,
        };
        match &block {
            Some(block) => TierMetrics::hit(&self.metrics.disk, block.bytes.len() as u64),
            None => {
                // Torn, damaged, or gone: forget it (which deletes what is left).
                tracing::warn!(object = %id.key, block = id.index, "discarding a hot-tier file that failed its checks");
                TierMetrics::add(&self.metrics.disk_corrupt, 1);
                TierMetrics::add(&self.metrics.disk.misses, 1);
                self.files.invalidate(&file);
            }
        }
        block
    }

    /// Writes the block's file in the background; skipped while the disk is behind.
    pub fn fill(self: &Arc<Self>, id: BlockId, block: Block) {
        let Ok(permit) = self.writes.clone().try_acquire_owned() else {
            TierMetrics::add(&self.metrics.disk_skipped, 1);
            return;
        };
        let tier = self.clone();
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let encoded = encode(&id, &block);
            let len = encoded.len();
            let n = tier.temp_names.fetch_add(1, Ordering::Relaxed);
            let file = FileId::of(&id);
            let name = file_name(&file);
            let temp = tier.dir.join(format!("{name}{TEMP_MARK}{n}"));
            let written = std::fs::write(&temp, &encoded)
                .and_then(|()| std::fs::rename(&temp, tier.dir.join(&name)));
            match written {
                Ok(()) => {
                    tier.files.insert(file, charge(len as u64));
                    TierMetrics::filled(&tier.metrics.disk, block.bytes.len() as u64);
                }
                Err(e) => {
                    let _ = std::fs::remove_file(&temp);
                    TierMetrics::add(&tier.metrics.disk_write_failures, 1);
                    tracing::debug!(error = %e, "writing a hot-tier file failed");
                }
            }
        });
    }
}

/// `<escaped key>.<block>.blk`: the key with every byte outside `[A-Za-z0-9_-]` as `%XX`.
fn file_name(id: &FileId) -> String {
    let mut name = String::with_capacity(id.key.as_str().len() + 16);
    for b in id.key.as_str().bytes() {
        if b.is_ascii_alphanumeric() || b == b'_' || b == b'-' {
            name.push(b as char);
        } else {
            name.push_str(&format!("%{b:02X}"));
        }
    }
    name.push_str(&format!(".{}{SUFFIX}", id.index));
    name
}

fn parse_file_name(name: &str) -> Option<FileId> {
    let (escaped, index) = name.strip_suffix(SUFFIX)?.rsplit_once('.')?;
    let index = index.parse().ok()?;
    let mut key = Vec::with_capacity(escaped.len());
    let mut bytes = escaped.bytes();
    while let Some(b) = bytes.next() {
        if b == b'%' {
            let hex = [bytes.next()?, bytes.next()?];
            key.push(u8::from_str_radix(std::str::from_utf8(&hex).ok()?, 16).ok()?);
        } else {
            key.push(b);
        }
    }
    Some(FileId {
        key: ObjectKey::new(String::from_utf8(key).ok()?),
        index,
    })
}

/// `FLHT`, version, key length (u16) and key, block size (u64), block index (u64), object
/// size (u64), data length (u32), data, then CRC-32C of all before; integers little-endian.
fn encode(id: &BlockId, block: &Block) -> Bytes {
    let key = id.key.as_str().as_bytes();
    let mut out = BytesMut::with_capacity(7 + key.len() + FIXED_BYTES + block.bytes.len() + 4);
    out.put_slice(MAGIC);
    out.put_u8(VERSION);
    out.put_u16_le(key.len() as u16);
    out.put_slice(key);
    out.put_u64_le(id.unit);
    out.put_u64_le(id.index);
    out.put_u64_le(block.object_size);
    out.put_u32_le(block.bytes.len() as u32);
    out.put_slice(&block.bytes);
    let crc = crc32c::crc32c(&out);
    out.put_u32_le(crc);
    out.freeze()
}

/// The block a file holds, if it is whole and of block `id` (the same unit: a file of a start
/// with another block size holds another range, and is discarded).
fn decode(raw: &[u8], id: &BlockId) -> Option<Block> {
    let (body, crc) = raw.split_at_checked(raw.len().checked_sub(4)?)?;
    if crc32c::crc32c(body) != u32::from_le_bytes(crc.try_into().ok()?) {
        return None;
    }
    let rest = body.strip_prefix(MAGIC)?;
    let (&version, rest) = rest.split_first()?;
    let (key_len, rest) = rest.split_at_checked(2)?;
    let key_len = u16::from_le_bytes(key_len.try_into().ok()?) as usize;
    let (key, rest) = rest.split_at_checked(key_len)?;
    let (fixed, data) = rest.split_at_checked(FIXED_BYTES)?;
    let size = u64::from_le_bytes(fixed[0..8].try_into().ok()?);
    let index = u64::from_le_bytes(fixed[8..16].try_into().ok()?);
    let object_size = u64::from_le_bytes(fixed[16..24].try_into().ok()?);
    let data_len = u32::from_le_bytes(fixed[24..28].try_into().ok()?) as usize;
    let sound = version == VERSION
        && key == id.key.as_str().as_bytes()
        && size == id.unit
        && index == id.index
        && data_len == data.len();
    sound.then(|| Block {
        bytes: Bytes::copy_from_slice(data),
        object_size,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(key: &str, index: u64) -> BlockId {
        BlockId {
            unit: 4096,
            key: ObjectKey::new(key),
            index,
        }
    }

    #[test]
    fn file_names_round_trip() {
        for key in ["v1/0000000000005-ab.floe", "a b/%c.d", "é"] {
            let file = FileId::of(&id(key, 7));
            let name = file_name(&file);
            assert!(!name.contains('/'), "{name}");
            assert_eq!(parse_file_name(&name), Some(file));
        }
        assert_eq!(parse_file_name("x.blk"), None);
        assert_eq!(parse_file_name("x.1.blk.tmp3"), None);
    }

    #[test]
    fn a_file_decodes_only_as_its_own_block_and_only_whole() {
        let block = Block {
            bytes: Bytes::from_static(b"batches"),
            object_size: 100,
        };
        let raw = encode(&id("k", 1), &block);
        assert_eq!(decode(&raw, &id("k", 1)), Some(block));
        assert_eq!(decode(&raw, &id("k", 2)), None, "another block");
        assert_eq!(decode(&raw, &id("j", 1)), None, "another object");
        let resized = BlockId {
            unit: 8192,
            ..id("k", 1)
        };
        assert_eq!(decode(&raw, &resized), None, "another block size");
        assert_eq!(decode(&raw[..raw.len() - 1], &id("k", 1)), None, "torn");
        for at in 0..raw.len() {
            let mut damaged = raw.to_vec();
            damaged[at] ^= 0x40;
            assert_eq!(decode(&damaged, &id("k", 1)), None, "flipped byte {at}");
        }
    }
}
