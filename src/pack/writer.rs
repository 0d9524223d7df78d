//! The one thread that appends to packs: it takes the PUTs waiting, writes them with one
//! `pwrite` into the active pack and makes them durable with one `fdatasync`, then answers
//! them all (group commit). Deletes forget the object and punch its blocks out.
//!
//! Writes go through direct I/O where the filesystem allows it, from one reused, aligned
//! buffer: the object bytes are not copied into the page cache a second time, and nothing is
//! left for the kernel to write back. Where direct I/O is refused (tmpfs, some network
//! filesystems) the same writes are buffered.

use super::index::{Location, Reclaim};
use super::record::{ALIGN, RecordHeader};
use super::shared_index::SharedIndex;
use crate::clock::Clock;
use bytes::Bytes;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use tokio::sync::oneshot;

/// A pack is closed once it holds this much; a new one is started (a record larger than this
/// gets a pack of its own).
pub const PACK_BYTES_TARGET: u64 = 64 << 20;
/// The PUTs written together stop at this many bytes (the buffer grows to the largest group).
const GROUP_BYTES_MAX: u64 = 16 << 20;
/// A buffer grown past this by one huge object is let go after its write.
const BUFFER_BYTES_KEPT: usize = 64 << 20;

pub struct Put {
    pub key: String,
    pub payload: Vec<Bytes>,
    pub reply: oneshot::Sender<io::Result<()>>,
}

impl Put {
    fn len(&self) -> u64 {
        self.payload.iter().map(|b| b.len() as u64).sum()
    }
}

pub enum Command {
    Put(Put),
    /// Answers whether the object existed.
    Delete {
        key: String,
        reply: oneshot::Sender<io::Result<bool>>,
    },
}

pub fn pack_path(dir: &Path, pack: u64) -> PathBuf {
    dir.join(format!("{pack:020}.pack"))
}

/// Opens a pack for appending, with direct I/O unless `buffered`.
pub fn open_for_append(path: &Path, buffered: bool) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create(true);
    if !buffered {
        options.custom_flags(rustix::fs::OFlags::DIRECT.bits() as i32);
    }
    options.open(path)
}

pub struct Writer {
    pub dir: PathBuf,
    pub index: SharedIndex,
    pub clock: Clock,
    /// The active pack and where its next record goes.
    pub file: File,
    pub end: u64,
    /// Direct I/O was refused: writes are buffered.
    pub buffered: bool,
    pub punch_refused: bool,
    pub buffer: AlignedBuffer,
    /// `PACK_BYTES_TARGET`, smaller in tests.
    pub pack_bytes_target: u64,
    /// A failed write could not be cut off the pack: what lies after `end` cannot be trusted,
    /// so nothing more is written until a restart recovers the packs.
    pub broken: Option<String>,
}

struct Pending {
    key: String,
    at: Location,
    reply: oneshot::Sender<io::Result<()>>,
}

impl Writer {
    /// Serves commands until every sender is gone.
    pub fn run(mut self, commands: mpsc::Receiver<Command>) {
        let mut carried: Option<Command> = None;
        loop {
            let command = match carried.take() {
                Some(c) => c,
                None => match commands.recv() {
                    Ok(c) => c,
                    Err(_) => return,
                },
            };
            match command {
                Command::Put(first) => {
                    let (group, next) = gather(first, &commands);
                    carried = next;
                    self.append(group);
                }
                Command::Delete { key, reply } => {
                    let removed = match self.index.lock() {
                        Ok(mut index) => index.remove(&key),
                        Err(e) => {
                            let _ = reply.send(Err(e));
                            continue;
                        }
                    };
                    let existed = removed.is_some();
                    self.reclaim(removed.unwrap_or_default());
                    let _ = reply.send(Ok(existed));
                }
            }
        }
    }

    fn append(&mut self, group: Vec<Put>) {
        let now_ms = self.clock.now_ms();
        let mut pending: Vec<Pending> = Vec::new();
        let mut staged = 0u64;
        for Put {
            key,
            payload,
            reply,
        } in group
        {
            let parts: Vec<&[u8]> = payload.iter().map(|b| b.as_ref()).collect();
            let header = RecordHeader::new(&key, &parts, now_ms);
            let len = header.padded_len();
            if self.end + staged > 0 && self.end + staged + len > self.pack_bytes_target {
                let written = self.commit(std::mem::take(&mut pending), staged);
                staged = 0;
                if let Err(e) = written.and_then(|()| self.roll()) {
                    let _ = reply.send(Err(copy_error(&e)));
                    continue;
                }
            }
            let pack = match self.index.lock() {
                Ok(index) => index.active(),
                Err(e) => {
                    let _ = reply.send(Err(e));
                    continue;
                }
            };
            let at = Location::of(pack, self.end + staged, &header);
            let into = self.buffer.grow_to((staged + len) as usize);
            let mut at_byte = staged as usize;
            for piece in std::iter::once(header.encode().as_slice()).chain(parts) {
                into[at_byte..at_byte + piece.len()].copy_from_slice(piece);
                at_byte += piece.len();
            }
            into[at_byte..(staged + len) as usize].fill(0);
            staged += len;
            pending.push(Pending { key, at, reply });
        }
        let _ = self.commit(pending, staged);
    }

    /// Writes the staged records, makes them durable, indexes and answers them.
    fn commit(&mut self, pending: Vec<Pending>, staged: u64) -> io::Result<()> {
        if pending.is_empty() {
            return Ok(());
        }
        let written = match &self.broken {
            Some(why) => Err(io::Error::other(why.clone())),
            None => self.write_staged(staged),
        };
        if self.buffer.capacity() > BUFFER_BYTES_KEPT {
            self.buffer = AlignedBuffer::default();
        }
        if let Err(e) = written {
            tracing::warn!(error = %e, dir = %self.dir.display(), "a pack write failed");
            self.cut_off_failed_write();
            for p in pending {
                let _ = p.reply.send(Err(copy_error(&e)));
            }
            return Err(e);
        }
        self.end += staged;
        let mut reclaims = Vec::new();
        match self.index.lock() {
            Ok(mut index) => {
                for p in &pending {
                    reclaims.extend(index.insert(&p.key, p.at));
                }
            }
            // Written and durable, but not indexed: the next start finds them in the pack.
            Err(e) => {
                for p in pending {
                    let _ = p.reply.send(Err(copy_error(&e)));
                }
                return Err(e);
            }
        }
        for p in pending {
            let _ = p.reply.send(Ok(()));
        }
        self.reclaim(reclaims);
        Ok(())
    }

    /// Removes whatever a failed write left after `end`: records answered with an error must
    /// not come back at the next start, nor shadow a retry of the same key written after them.
    fn cut_off_failed_write(&mut self) {
        if self.broken.is_some() {
            return;
        }
        let cut = self
            .file
            .set_len(self.end)
            .and_then(|()| self.file.sync_all());
        if let Err(e) = cut {
            let why = format!(
                "the pack store in {} cannot write after a failed write ({e}); restart floe",
                self.dir.display()
            );
            tracing::error!("{why}");
            self.broken = Some(why);
        }
    }

    fn write_staged(&mut self, staged: u64) -> io::Result<()> {
        let bytes = &self.buffer.grow_to(staged as usize)[..staged as usize];
        match self.file.write_all_at(bytes, self.end) {
            Err(e)
                if e.raw_os_error() == Some(rustix::io::Errno::INVAL.raw_os_error())
                    && !self.buffered =>
            {
                // Direct I/O refused at the first write (some filesystems accept the flag).
                tracing::info!(dir = %self.dir.display(), "direct I/O refused; packs are written through the page cache");
                self.buffered = true;
                let pack = self.index.lock()?.active();
                self.file = open_for_append(&pack_path(&self.dir, pack), true)?;
                self.file.write_all_at(bytes, self.end)?;
            }
            other => other?,
        }
        self.file.sync_data()
    }

    /// Closes the active pack (its records are durable) and starts the next.
    fn roll(&mut self) -> io::Result<()> {
        let next = self.index.lock()?.active() + 1;
        let path = pack_path(&self.dir, next);
        let file =
            open_for_append(&path, self.buffered).or_else(|_| open_for_append(&path, true))?;
        // The new file's name must be durable before anything in it is acknowledged.
        File::open(&self.dir)?.sync_all()?;
        self.file = file;
        self.end = 0;
        let reclaims = self.index.lock()?.roll_to(next);
        self.reclaim(reclaims);
        Ok(())
    }

    /// Gives freed blocks and packs back. Not made durable: a delete lost to a crash leaves
    /// an object no metadata refers to, which the orphan sweep deletes again.
    pub fn reclaim(&mut self, reclaims: Vec<Reclaim>) {
        for reclaim in reclaims {
            let done = match reclaim {
                Reclaim::Pack(pack) => std::fs::remove_file(pack_path(&self.dir, pack)),
                Reclaim::Record(_) if self.punch_refused => Ok(()),
                Reclaim::Record(at) => self.punch(at),
            };
            if let Err(e) = done {
                tracing::warn!(error = %e, ?reclaim, dir = %self.dir.display(), "could not give a deleted object's space back");
            }
        }
    }

    fn punch(&mut self, at: Location) -> io::Result<()> {
        let file = OpenOptions::new()
            .write(true)
            .open(pack_path(&self.dir, at.pack))?;
        if let Err(e) = punch_hole(&file, at.offset, at.padded_len()) {
            if e.raw_os_error() == Some(rustix::io::Errno::OPNOTSUPP.raw_os_error()) {
                tracing::info!(dir = %self.dir.display(), "the filesystem cannot punch holes; a pack's space comes back when all of it is deleted");
                self.punch_refused = true;
                return Ok(());
            }
            return Err(e);
        }
        Ok(())
    }
}

/// Frees `len` bytes at `offset` (they read as zeros after), keeping the file's size.
pub fn punch_hole(file: &File, offset: u64, len: u64) -> io::Result<()> {
    use rustix::fs::FallocateFlags;
    let mode = FallocateFlags::PUNCH_HOLE | FallocateFlags::KEEP_SIZE;
    rustix::fs::fallocate(file, mode, offset, len).map_err(io::Error::from)
}

/// `first` and the PUTs queued behind it, up to `GROUP_BYTES_MAX`: one write and one sync for
/// them all. A delete met on the way is handed back, to run after the group.
fn gather(first: Put, commands: &mpsc::Receiver<Command>) -> (Vec<Put>, Option<Command>) {
    let mut bytes = first.len();
    let mut group = vec![first];
    while bytes < GROUP_BYTES_MAX {
        match commands.try_recv() {
            Ok(Command::Put(put)) => {
                bytes += put.len();
                group.push(put);
            }
            Ok(other) => return (group, Some(other)),
            Err(_) => break,
        }
    }
    (group, None)
}

/// An `io::Error` for each waiter of a failed group (`io::Error` is not `Clone`).
fn copy_error(e: &io::Error) -> io::Error {
    io::Error::new(e.kind(), e.to_string())
}

/// A reused write buffer whose usable part starts on an `ALIGN` boundary, as direct I/O
/// requires of the memory it writes from.
#[derive(Default)]
pub struct AlignedBuffer {
    bytes: Vec<u8>,
    /// Where the aligned part starts in `bytes`.
    start: usize,
    capacity: usize,
}

impl AlignedBuffer {
    /// At least `len` aligned bytes; what was in them before is kept when it grows.
    pub fn grow_to(&mut self, len: usize) -> &mut [u8] {
        if self.capacity < len {
            let capacity = len.max(self.capacity * 2).next_multiple_of(ALIGN as usize);
            let mut bytes = vec![0u8; capacity + ALIGN as usize];
            let start = bytes.as_ptr().align_offset(ALIGN as usize);
            bytes[start..start + self.capacity]
                .copy_from_slice(&self.bytes[self.start..self.start + self.capacity]);
            *self = AlignedBuffer {
                bytes,
                start,
                capacity,
            };
        }
        &mut self.bytes[self.start..self.start + self.capacity]
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_buffer_stays_aligned_and_keeps_its_bytes_as_it_grows() {
        let mut buffer = AlignedBuffer::default();
        assert_eq!(buffer.capacity(), 0);
        buffer.grow_to(10)[..3].copy_from_slice(b"abc");
        assert!(buffer.capacity() >= 10);
        let grown = buffer.grow_to(1 << 20);
        assert_eq!(&grown[..3], b"abc");
        assert_eq!(grown.as_ptr() as usize % ALIGN as usize, 0);
        assert!(grown.len() >= 1 << 20);
    }
}
