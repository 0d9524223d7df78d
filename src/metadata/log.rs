//! The single-node durable command log, with snapshots.
//!
//! ```text
//! meta/snapshot   postcard(MetadataState), replaced atomically (write tmp, fsync, rename)
//! meta/log        records: [len u32][crc32c u32][postcard(Command)] ..., fsync'd per append
//! ```
//! Restart loads the snapshot and replays the log after it. A torn final record (a crash in
//! the middle of a write) is cut off; its command was never acknowledged, since commands are
//! acknowledged only after their fsync.

use super::state::{Command, MetadataState};
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Records above this size are corrupt by definition (no command comes close).
const RECORD_BYTES_MAX: u32 = 64 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("metadata log I/O at {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("metadata snapshot {path} is corrupt: {reason}")]
    CorruptSnapshot { path: PathBuf, reason: String },
    #[error("cannot encode a metadata command: {0}")]
    Encode(#[from] postcard::Error),
}

pub struct CommandLog {
    dir: PathBuf,
    file: File,
    /// Records in the log file since the last snapshot.
    records: u64,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> LogError + '_ {
    move |source| LogError::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl CommandLog {
    /// Opens (or creates) the log in `dir` and rebuilds the state it records.
    pub fn open(dir: &Path) -> Result<(CommandLog, MetadataState), LogError> {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let snapshot_path = dir.join("snapshot");
        let mut state = match std::fs::read(&snapshot_path) {
            Ok(bytes) => postcard::from_bytes(&bytes).map_err(|e| LogError::CorruptSnapshot {
                path: snapshot_path.clone(),
                reason: e.to_string(),
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => MetadataState::default(),
            Err(e) => return Err(io(&snapshot_path)(e)),
        };
        let log_path = dir.join("log");
        let mut file = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(&log_path)
            .map_err(io(&log_path))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(io(&log_path))?;
        let (commands, valid_len) = decode_records(&bytes);
        let records = commands.len() as u64;
        for command in commands {
            state.apply(command);
        }
        if valid_len < bytes.len() {
            tracing::warn!(
                path = %log_path.display(),
                dropped_bytes = bytes.len() - valid_len,
                "cutting a torn record off the end of the metadata log"
            );
            file.set_len(valid_len as u64).map_err(io(&log_path))?;
            file.sync_all().map_err(io(&log_path))?;
        }
        Ok((
            CommandLog {
                dir: dir.to_path_buf(),
                file,
                records,
            },
            state,
        ))
    }

    /// Appends commands and fsyncs once for all of them (group commit).
    pub fn append(&mut self, commands: &[Command]) -> Result<(), LogError> {
        let mut buf = Vec::new();
        for command in commands {
            let payload = postcard::to_stdvec(command)?;
            buf.extend_from_slice(&(payload.len() as u32).to_le_bytes());
            buf.extend_from_slice(&crc32c::crc32c(&payload).to_le_bytes());
            buf.extend_from_slice(&payload);
        }
        let path = self.dir.join("log");
        self.file.write_all(&buf).map_err(io(&path))?;
        self.file.sync_data().map_err(io(&path))?;
        self.records += commands.len() as u64;
        Ok(())
    }

    pub fn records_since_snapshot(&self) -> u64 {
        self.records
    }

    /// Writes `state` as the new snapshot and empties the log it supersedes.
    pub fn snapshot(&mut self, state: &MetadataState) -> Result<(), LogError> {
        let bytes = postcard::to_stdvec(state)?;
        let tmp = self.dir.join("snapshot.tmp");
        let target = self.dir.join("snapshot");
        {
            let mut f = File::create(&tmp).map_err(io(&tmp))?;
            f.write_all(&bytes).map_err(io(&tmp))?;
            f.sync_all().map_err(io(&tmp))?;
        }
        std::fs::rename(&tmp, &target).map_err(io(&target))?;
        File::open(&self.dir)
            .and_then(|d| d.sync_all())
            .map_err(io(&self.dir))?;
        // The snapshot is durable; the log before it is no longer needed.
        let path = self.dir.join("log");
        self.file.set_len(0).map_err(io(&path))?;
        self.file.sync_all().map_err(io(&path))?;
        self.records = 0;
        Ok(())
    }
}

/// Decodes whole, checksummed records; returns them and the length of the valid prefix.
fn decode_records(bytes: &[u8]) -> (Vec<Command>, usize) {
    let mut commands = Vec::new();
    let mut at = 0;
    while bytes.len() - at >= 8 {
        let len = u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
        let crc = u32::from_le_bytes([bytes[at + 4], bytes[at + 5], bytes[at + 6], bytes[at + 7]]);
        if len > RECORD_BYTES_MAX || bytes.len() - at - 8 < len as usize {
            break;
        }
        let payload = &bytes[at + 8..at + 8 + len as usize];
        if crc32c::crc32c(payload) != crc {
            break;
        }
        match postcard::from_bytes(payload) {
            Ok(command) => commands.push(command),
            Err(_) => break,
        }
        at += 8 + len as usize;
    }
    (commands, at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn create(name: &str) -> Command {
        Command::CreateTopic {
            name: name.into(),
            id: uuid::Uuid::new_v4(),
            partitions: 3,
            configs: BTreeMap::new(),
        }
    }

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("floe-log-{name}-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn restart_replays_snapshot_and_log_and_cuts_a_torn_tail() {
        let dir = temp_dir("replay");
        let (mut log, mut state) = CommandLog::open(&dir).unwrap();
        for name in ["a", "b"] {
            let c = create(name);
            log.append(std::slice::from_ref(&c)).unwrap();
            state.apply(c);
        }
        log.snapshot(&state).unwrap();
        let c = create("c");
        log.append(std::slice::from_ref(&c)).unwrap();
        state.apply(c);
        drop(log);
        // A crash mid-write leaves half a record behind.
        let mut f = OpenOptions::new()
            .append(true)
            .open(dir.join("log"))
            .unwrap();
        f.write_all(&[200, 0, 0, 0, 1, 2]).unwrap();
        drop(f);

        let (mut log, restored) = CommandLog::open(&dir).unwrap();
        assert_eq!(restored, state);
        assert!(restored.topic("c").is_some());
        // The log stays appendable after the cut.
        log.append(&[create("d")]).unwrap();
        drop(log);
        let (_, again) = CommandLog::open(&dir).unwrap();
        assert!(again.topic("d").is_some());
        std::fs::remove_dir_all(dir).unwrap();
    }
}
