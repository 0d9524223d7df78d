//! The Raft log on local disk: every append is fsync'd before Raft hears it is durable.
//!
//! ```text
//! raft/log      records [len u32][crc32c u32][postcard(Entry)] ..., appended, fsync'd
//! raft/vote     postcard(Vote), replaced atomically (write tmp, fsync, rename, fsync dir)
//! raft/purged   postcard(LogId), the last entry removed by compaction, replaced atomically
//! raft/layout   LOG_LAYOUT: the encoding of the entries (and of the commands in them)
//! ```
//! Postcard is not self-describing: an entry of another build's encoding could decode as other
//! commands, or fail and be cut off as a torn tail. So a directory is opened only if it
//! carries this build's `LOG_LAYOUT`, or holds nothing yet (then the mark is written first).
//! The entries after the last snapshot are few (the state machine snapshots every few
//! thousand entries and the log is purged behind it), so they are also kept in memory: reads
//! never touch the disk. Truncation (a follower dropping a conflicting suffix) cuts the file at
//! the first removed record; purging rewrites the file once the dead prefix outweighs the rest.
//! A torn tail (a crash mid-append) is cut off on open: it was never acknowledged. A damaged
//! record with valid records after it is not a torn tail: opening fails, naming the byte.

use super::types::{Entry, LogId, StorageError, TypeConfig, Vote};
use openraft::storage::{LogFlushed, RaftLogStorage};
use openraft::{AnyError, LogState, RaftLogId, RaftLogReader, StorageIOError};
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::ops::RangeBounds;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

/// The encoding of the log's entries, marked in `raft/layout`. A change to `Command` (its
/// variants' order, and each noun's, is its encoding) bumps it, with the pinned checksum in
/// `the_log_layout_is_pinned`: a directory written by a build with another encoding is then
/// refused at start, never misread.
const LOG_LAYOUT: &[u8] = b"floe-log-9\n";

/// Records above this size are corrupt by definition (no entry comes close).
const RECORD_BYTES_MAX: u32 = 64 * 1024 * 1024;

/// A handle to the durable log; clones share it (Raft's log reader is a clone).
#[derive(Clone)]
pub struct LogStore {
    inner: Arc<Mutex<LogFile>>,
}

struct LogFile {
    dir: PathBuf,
    file: File,
    /// Entries not yet purged, with the file offset of their record.
    entries: BTreeMap<u64, (Entry, u64)>,
    /// Length of the valid records in the file.
    end: u64,
    /// Bytes in the file that belong to purged entries.
    dead: u64,
    purged: Option<LogId>,
    vote: Option<Vote>,
}

fn io_error(e: impl std::fmt::Display) -> std::io::Error {
    std::io::Error::other(e.to_string())
}

fn write_error(e: std::io::Error) -> StorageError {
    StorageIOError::write_logs(AnyError::new(&e)).into()
}

impl LogStore {
    /// Opens (or creates) the log in `dir`.
    pub fn open(dir: &Path) -> std::io::Result<LogStore> {
        std::fs::create_dir_all(dir)?;
        check_layout(dir)?;
        let vote = read_optional(&dir.join("vote"))?;
        let purged: Option<LogId> = read_optional(&dir.join("purged"))?;
        let path = dir.join("log");
        let mut file = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(&path)?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        let (records, valid_len) = decode_records(&bytes)
            .map_err(|e| io_error(format!("Raft log {}: {e}", path.display())))?;
        if valid_len < bytes.len() {
            tracing::warn!(
                path = %path.display(),
                dropped_bytes = bytes.len() - valid_len,
                "cutting a torn record off the end of the Raft log"
            );
            file.set_len(valid_len as u64)?;
            file.sync_all()?;
        }
        let purged_index = purged.map(|p| p.index);
        let mut entries = BTreeMap::new();
        for (offset, entry) in records {
            if purged_index.is_none_or(|p| entry.log_id.index > p) {
                entries.insert(entry.log_id.index, (entry, offset));
            }
        }
        let dead = entries
            .first_key_value()
            .map_or(valid_len as u64, |(_, (_, offset))| *offset);
        Ok(LogStore {
            inner: Arc::new(Mutex::new(LogFile {
                dir: dir.to_path_buf(),
                file,
                entries,
                end: valid_len as u64,
                dead,
                purged,
                vote,
            })),
        })
    }

    fn lock(&self) -> MutexGuard<'_, LogFile> {
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Runs file work off the async threads: an fsync can take milliseconds.
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut LogFile) -> std::io::Result<T> + Send + 'static,
    ) -> std::io::Result<T> {
        let inner = self.inner.clone();
        tokio::task::spawn_blocking(move || {
            let mut log = inner
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            f(&mut log)
        })
        .await
        .map_err(io_error)?
    }

    /// The entries with indexes in `range` that are still in the log.
    pub fn entries(&self, range: impl RangeBounds<u64>) -> Vec<Entry> {
        self.lock()
            .entries
            .range(range)
            .map(|(_, (entry, _))| entry.clone())
            .collect()
    }

    /// The index of the first entry still in the log (after the last purge).
    #[cfg(test)]
    fn first_index(&self) -> u64 {
        let log = self.lock();
        log.purged.map_or(0, |p| p.index + 1)
    }
}

impl LogFile {
    fn append(&mut self, entries: Vec<Entry>) -> std::io::Result<()> {
        let mut buf = Vec::new();
        let mut offsets = Vec::with_capacity(entries.len());
        for entry in &entries {
            offsets.push(self.end + buf.len() as u64);
            encode_record(&mut buf, entry)?;
        }
        self.file.write_all(&buf)?;
        self.file.sync_data()?;
        self.end += buf.len() as u64;
        for (entry, offset) in entries.into_iter().zip(offsets) {
            self.entries.insert(entry.log_id.index, (entry, offset));
        }
        Ok(())
    }

    /// Removes the entries at `index` and after.
    fn truncate(&mut self, index: u64) -> std::io::Result<()> {
        let removed = self.entries.split_off(&index);
        if let Some((_, (_, offset))) = removed.first_key_value() {
            self.file.set_len(*offset)?;
            self.file.sync_all()?;
            self.end = *offset;
        }
        Ok(())
    }

    /// Removes the entries up to and including `log_id`, durably.
    fn purge(&mut self, log_id: LogId) -> std::io::Result<()> {
        write_atomically(&self.dir, "purged", &log_id)?;
        self.purged = Some(log_id);
        let kept = self.entries.split_off(&(log_id.index + 1));
        self.entries = kept;
        self.dead = self
            .entries
            .first_key_value()
            .map_or(self.end, |(_, (_, offset))| *offset);
        if self.dead > self.end - self.dead {
            self.compact()?;
        }
        Ok(())
    }

    /// Rewrites the file without the purged prefix.
    fn compact(&mut self) -> std::io::Result<()> {
        let tmp = self.dir.join("log.tmp");
        let mut buf = Vec::new();
        let mut offsets = Vec::with_capacity(self.entries.len());
        for (entry, _) in self.entries.values() {
            offsets.push(buf.len() as u64);
            encode_record(&mut buf, entry)?;
        }
        {
            let mut f = File::create(&tmp)?;
            f.write_all(&buf)?;
            f.sync_all()?;
        }
        let path = self.dir.join("log");
        std::fs::rename(&tmp, &path)?;
        File::open(&self.dir)?.sync_all()?;
        self.file = OpenOptions::new().read(true).append(true).open(&path)?;
        for ((_, offset), new) in self.entries.values_mut().zip(offsets) {
            *offset = new;
        }
        self.end = buf.len() as u64;
        self.dead = 0;
        Ok(())
    }
}

/// Appends one record: `[len u32][crc32c u32][postcard(entry)]`.
fn encode_record(buf: &mut Vec<u8>, entry: &Entry) -> std::io::Result<()> {
    let payload = postcard::to_stdvec(entry).map_err(io_error)?;
    buf.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    buf.extend_from_slice(&crc32c::crc32c(&payload).to_le_bytes());
    buf.extend_from_slice(&payload);
    Ok(())
}

/// Reads a postcard value written by `write_atomically`; `None` if the file does not exist.
pub(super) fn read_optional<T: serde::de::DeserializeOwned>(
    path: &Path,
) -> std::io::Result<Option<T>> {
    match std::fs::read(path) {
        Ok(bytes) => postcard::from_bytes(&bytes)
            .map(Some)
            .map_err(|e| io_error(format!("{} is corrupt: {e}", path.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Opens `dir` only in this build's `LOG_LAYOUT`; marks a directory that holds nothing yet.
fn check_layout(dir: &Path) -> std::io::Result<()> {
    let another = |layout: &str| {
        io_error(format!(
            "{} was written by another floe (log layout {layout}); no release reads it: \
             remove it",
            dir.display()
        ))
    };
    match std::fs::read(dir.join("layout")) {
        Ok(mark) if mark == LOG_LAYOUT => Ok(()),
        Ok(mark) => Err(another(String::from_utf8_lossy(&mark).trim_end())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let log_written = std::fs::metadata(dir.join("log")).is_ok_and(|m| m.len() > 0);
            if log_written || dir.join("vote").exists() || dir.join("snapshot").exists() {
                return Err(another("unmarked"));
            }
            replace_file(dir, "layout", LOG_LAYOUT)
        }
        Err(e) => Err(e),
    }
}

/// Replaces `dir/name` with `value` so that a crash leaves either the old or the new value.
pub(super) fn write_atomically<T: serde::Serialize>(
    dir: &Path,
    name: &str,
    value: &T,
) -> std::io::Result<()> {
    replace_file(dir, name, &postcard::to_stdvec(value).map_err(io_error)?)
}

/// Replaces `dir/name` with `bytes`: written aside, fsync'd, renamed over, the dir fsync'd.
fn replace_file(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = dir.join(format!("{name}.tmp"));
    {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, dir.join(name))?;
    File::open(dir)?.sync_all()
}

/// The record at `at`, if one starts there: its entry and its length on disk.
fn record_at(bytes: &[u8], at: usize) -> Option<(Entry, usize)> {
    let header = bytes.get(at..at + 8)?;
    let len = u32::from_le_bytes([header[0], header[1], header[2], header[3]]);
    let crc = u32::from_le_bytes([header[4], header[5], header[6], header[7]]);
    if len > RECORD_BYTES_MAX {
        return None;
    }
    let payload = bytes.get(at + 8..at + 8 + len as usize)?;
    if crc32c::crc32c(payload) != crc {
        return None;
    }
    let entry = postcard::from_bytes(payload).ok()?;
    Some((entry, 8 + len as usize))
}

/// A record that is damaged while valid records follow it: not a torn write (appends only
/// ever tear at the end), so dropping it and what follows would lose acknowledged entries.
#[derive(Debug, thiserror::Error)]
#[error(
    "the record at byte {at} is damaged but a valid record follows at byte {next}: \
     refusing to cut the log (restore the node from its peers or a backup)"
)]
pub struct DamagedRecord {
    pub at: usize,
    pub next: usize,
}

/// Decodes whole, checksummed records with their offsets; returns them and the length of the
/// valid prefix. What follows the valid prefix must be a torn tail: if any valid record can
/// be found after a bad one, the log is damaged and nothing is returned.
pub fn decode_records(bytes: &[u8]) -> Result<(Vec<(u64, Entry)>, usize), DamagedRecord> {
    let mut records = Vec::new();
    let mut at = 0;
    while let Some((entry, len)) = record_at(bytes, at) {
        records.push((at as u64, entry));
        at += len;
    }
    // A bad length hides where the next record starts, so every later byte is tried (only
    // on this rare path, over the short log kept since the last snapshot).
    if let Some(next) = (at + 1..bytes.len()).find(|&next| record_at(bytes, next).is_some()) {
        return Err(DamagedRecord { at, next });
    }
    Ok((records, at))
}

impl RaftLogReader<TypeConfig> for LogStore {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug + Send>(
        &mut self,
        range: RB,
    ) -> Result<Vec<Entry>, StorageError> {
        Ok(self.entries(range))
    }
}

impl RaftLogStorage<TypeConfig> for LogStore {
    type LogReader = LogStore;

    async fn get_log_state(&mut self) -> Result<LogState<TypeConfig>, StorageError> {
        let log = self.lock();
        let last = log
            .entries
            .last_key_value()
            .map(|(_, (e, _))| *e.get_log_id())
            .or(log.purged);
        Ok(LogState {
            last_purged_log_id: log.purged,
            last_log_id: last,
        })
    }

    async fn get_log_reader(&mut self) -> Self::LogReader {
        self.clone()
    }

    async fn save_vote(&mut self, vote: &Vote) -> Result<(), StorageError> {
        let vote = *vote;
        self.blocking(move |log| {
            write_atomically(&log.dir, "vote", &vote)?;
            log.vote = Some(vote);
            Ok(())
        })
        .await
        .map_err(|e| StorageIOError::write_vote(AnyError::new(&e)).into())
    }

    async fn read_vote(&mut self) -> Result<Option<Vote>, StorageError> {
        Ok(self.lock().vote)
    }

    async fn append<I>(
        &mut self,
        entries: I,
        callback: LogFlushed<TypeConfig>,
    ) -> Result<(), StorageError>
    where
        I: IntoIterator<Item = Entry> + Send,
        I::IntoIter: Send,
    {
        let entries: Vec<Entry> = entries.into_iter().collect();
        let result = self.blocking(move |log| log.append(entries)).await;
        match result {
            Ok(()) => {
                callback.log_io_completed(Ok(()));
                Ok(())
            }
            Err(e) => {
                let error = write_error(io_error(&e));
                callback.log_io_completed(Err(e));
                Err(error)
            }
        }
    }

    async fn truncate(&mut self, log_id: LogId) -> Result<(), StorageError> {
        self.blocking(move |log| log.truncate(log_id.index))
            .await
            .map_err(write_error)
    }

    async fn purge(&mut self, log_id: LogId) -> Result<(), StorageError> {
        self.blocking(move |log| log.purge(log_id))
            .await
            .map_err(write_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::NodeId;
    use crate::metadata::quorum::types::Commands;
    use openraft::{CommittedLeaderId, EntryPayload};

    fn entry(term: u64, index: u64) -> Entry {
        Entry {
            log_id: LogId::new(CommittedLeaderId::new(term, NodeId(1)), index),
            payload: EntryPayload::Normal(Commands::default()),
        }
    }

    fn indexes(store: &LogStore) -> Vec<u64> {
        store.entries(..).iter().map(|e| e.log_id.index).collect()
    }

    #[test]
    fn reopen_keeps_appends_truncation_and_purge_and_cuts_a_torn_tail() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = LogStore::open(dir.path()).unwrap();
            let mut log = store.lock();
            log.append((1..=10).map(|i| entry(1, i)).collect()).unwrap();
            log.truncate(8).unwrap();
            log.append(vec![entry(2, 8)]).unwrap();
            log.purge(LogId::new(CommittedLeaderId::new(1, NodeId(1)), 3))
                .unwrap();
        }
        // A crash mid-write leaves half a record behind.
        let mut f = OpenOptions::new()
            .append(true)
            .open(dir.path().join("log"))
            .unwrap();
        f.write_all(&[200, 0, 0, 0, 1, 2]).unwrap();
        drop(f);

        let store = LogStore::open(dir.path()).unwrap();
        assert_eq!(indexes(&store), vec![4, 5, 6, 7, 8]);
        assert_eq!(store.entries(8..)[0].log_id.leader_id.term, 2);
        assert_eq!(store.first_index(), 4);
        // Purging most of the log compacts the file; it stays appendable and reopens the same.
        store
            .lock()
            .purge(LogId::new(CommittedLeaderId::new(1, NodeId(1)), 7))
            .unwrap();
        store.lock().append(vec![entry(2, 9)]).unwrap();
        drop(store);
        let store = LogStore::open(dir.path()).unwrap();
        assert_eq!(indexes(&store), vec![8, 9]);
    }

    /// Ten records, and the offset of each.
    fn ten_records(dir: &Path) -> Vec<u64> {
        let store = LogStore::open(dir).unwrap();
        store
            .lock()
            .append((1..=10).map(|i| entry(1, i)).collect())
            .unwrap();
        let log = store.lock();
        log.entries.values().map(|(_, at)| *at).collect()
    }

    #[test]
    fn a_damaged_record_followed_by_valid_ones_refuses_to_open_naming_its_offset() {
        let dir = tempfile::tempdir().unwrap();
        let offsets = ten_records(dir.path());
        let path = dir.path().join("log");
        let mut bytes = std::fs::read(&path).unwrap();
        // One byte of record 3's payload flips.
        let third = offsets[2] as usize;
        bytes[third + 8] ^= 0x40;
        std::fs::write(&path, &bytes).unwrap();
        let error = LogStore::open(dir.path()).err().expect("refused");
        let message = error.to_string();
        assert!(message.contains(&format!("byte {third}")), "{message}");
        assert!(message.contains(&path.display().to_string()), "{message}");
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "nothing was cut");
        // A damaged length hides the next record's start; it is found anyway.
        bytes[third + 8] ^= 0x40;
        bytes[third] = 0xff;
        std::fs::write(&path, &bytes).unwrap();
        assert!(LogStore::open(dir.path()).is_err());
    }

    #[test]
    fn a_torn_or_zero_filled_tail_is_cut() {
        let dir = tempfile::tempdir().unwrap();
        let offsets = ten_records(dir.path());
        let path = dir.path().join("log");
        let whole = std::fs::read(&path).unwrap();
        // The last append tore: half of record 10 reached the disk.
        let tenth = offsets[9] as usize;
        std::fs::write(&path, &whole[..tenth + 5]).unwrap();
        let store = LogStore::open(dir.path()).unwrap();
        assert_eq!(indexes(&store), (1..=9).collect::<Vec<_>>());
        drop(store);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), tenth as u64);
        // The file grew but the last records' bytes are zeros (a crash before the data).
        let mut zeroed = whole.clone();
        let ninth = offsets[8] as usize;
        zeroed[ninth..].fill(0);
        std::fs::write(&path, &zeroed).unwrap();
        let store = LogStore::open(dir.path()).unwrap();
        assert_eq!(indexes(&store), (1..=8).collect::<Vec<_>>());
    }

    #[test]
    fn the_log_layout_is_pinned() {
        use super::super::types::Commands;
        let commands = Commands(crate::metadata::state::tests::one_of_each());
        let actual = crc32c::crc32c(&postcard::to_stdvec(&commands).unwrap());
        assert!(
            actual == 0x71e1_ff38,
            "the log's encoding changed: bump LOG_LAYOUT and set this to {actual:#x}"
        );
    }

    #[test]
    fn a_new_directory_is_marked_and_an_unmarked_or_other_one_refused() {
        let dir = tempfile::tempdir().unwrap();
        ten_records(dir.path());
        assert_eq!(
            std::fs::read(dir.path().join("layout")).unwrap(),
            LOG_LAYOUT
        );
        assert!(LogStore::open(dir.path()).is_ok(), "its own mark");

        std::fs::write(dir.path().join("layout"), b"floe-log-0\n").unwrap();
        let refused = LogStore::open(dir.path()).err().expect("another layout");
        assert!(refused.to_string().contains("floe-log-0"), "{refused}");

        std::fs::remove_file(dir.path().join("layout")).unwrap();
        let refused = LogStore::open(dir.path())
            .err()
            .expect("unmarked, with a log");
        assert!(refused.to_string().contains("remove it"), "{refused}");

        let empty = tempfile::tempdir().unwrap();
        std::fs::write(empty.path().join("log"), b"").unwrap();
        assert!(
            LogStore::open(empty.path()).is_ok(),
            "an empty log is nothing yet"
        );
    }
}
