//! The embedded default's object store: objects appended to a few large pack files in the
//! data directory, instead of one file each.
//!
//! ```text
//! put ──► writer thread: the PUTs waiting ─► one pwrite (direct I/O) ─► one fdatasync ─► ack
//! get ──► index (key → pack, offset) ─► pread
//! delete ─► index forgets the key ─► hole punched over its record; an empty pack is removed
//! ```
//! A file per object costs an inode, a rename and two journal commits per PUT, and a copy
//! into the page cache: most of a local broker's CPU. A pack costs one `fdatasync` for all
//! the PUTs written together. The store is single-process (a lock file says so), as the
//! embedded default is; `file://` keeps a file per object, for directories several agents
//! share.
//!
//! Invariants: a PUT is answered only once its record is durable; a GET returns bytes of the
//! record the index named when the read ended (a read racing a delete sees "not found", never
//! the zeros of a punched hole); recovery keeps every acknowledged record (`recover.rs`).

mod index;
pub mod record;
pub mod recover;
mod shared_index;
mod writer;

use crate::clock::Clock;
use async_trait::async_trait;
use bytes::Bytes;
use futures::StreamExt;
use futures::stream::BoxStream;
use index::Location;
use object_store::path::Path;
use object_store::{
    CopyMode, CopyOptions, GetOptions, GetResult, GetResultPayload, ListResult, MultipartUpload,
    ObjectMeta, ObjectStore, PutMode, PutMultipartOptions, PutOptions, PutPayload, PutResult,
};
use shared_index::SharedIndex;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::mpsc;
use tokio::sync::oneshot;
pub use writer::{AlignedBuffer, open_for_append, pack_path};
use writer::{Command, Writer};

const STORE: &str = "PackStore";

pub struct PackStore {
    dir: PathBuf,
    index: SharedIndex,
    commands: mpsc::Sender<Command>,
    /// Held for the store's life: a second process on the same directory is refused.
    _lock: File,
}

#[derive(Debug, thiserror::Error)]
pub enum PackOpenError {
    #[error("{dir}: {source}")]
    Io {
        dir: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{dir} is in use by another floe process")]
    InUse { dir: String },
}

impl PackStore {
    /// Opens (or creates) the packs in `dir`, rebuilding the index from them.
    pub fn open(dir: PathBuf, clock: Clock) -> Result<PackStore, PackOpenError> {
        PackStore::open_with(dir, clock, writer::PACK_BYTES_TARGET)
    }

    fn open_with(
        dir: PathBuf,
        clock: Clock,
        pack_bytes_target: u64,
    ) -> Result<PackStore, PackOpenError> {
        let io = |source| PackOpenError::Io {
            dir: dir.display().to_string(),
            source,
        };
        std::fs::create_dir_all(&dir).map_err(io)?;
        if let Some(parent) = dir.parent() {
            File::open(parent).and_then(|d| d.sync_all()).map_err(io)?;
        }
        let lock = File::create(dir.join("LOCK")).map_err(io)?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(PackOpenError::InUse {
                    dir: dir.display().to_string(),
                });
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
        }
        let (index, end, reclaims) = recover::rebuild(&dir).map_err(io)?;
        let active = index.active();
        let path = pack_path(&dir, active);
        let (file, buffered) = match open_for_append(&path, false) {
            Ok(f) => (f, false),
            Err(_) => (open_for_append(&path, true).map_err(io)?, true),
        };
        // What a torn last write left after the last whole record is cut off.
        file.set_len(end)
            .and_then(|()| file.sync_all())
            .map_err(io)?;
        File::open(&dir).and_then(|d| d.sync_all()).map_err(io)?;
        tracing::info!(dir = %dir.display(), objects = index.len(), packs = index.packs().count(), "object packs opened");
        let index = SharedIndex::new(index);
        let mut writer = Writer {
            dir: dir.clone(),
            index: index.clone(),
            clock,
            file,
            end,
            buffered,
            punch_refused: false,
            buffer: AlignedBuffer::default(),
            pack_bytes_target,
            broken: None,
        };
        writer.reclaim(reclaims);
        let (commands, receive) = mpsc::channel();
        std::thread::Builder::new()
            // `floe-agent-…`: counted as the agent's CPU by `floe bench`. At most 15 bytes.
            .name("floe-agent-pack".into())
            .spawn(move || writer.run(receive))
            .map_err(io)?;
        Ok(PackStore {
            dir,
            index,
            commands,
            _lock: lock,
        })
    }

    fn send(&self, command: Command) -> object_store::Result<()> {
        self.commands
            .send(command)
            .map_err(|_| generic("the pack writer has stopped"))
    }

    fn location(&self, path: &Path) -> object_store::Result<Location> {
        self.index
            .lock()
            .map_err(io_error)?
            .get(path.as_ref())
            .ok_or_else(|| not_found(path))
    }

    /// Bytes `range` of the payload at `at`.
    async fn read(
        &self,
        at: Location,
        range: std::ops::Range<u64>,
    ) -> object_store::Result<std::io::Result<Bytes>> {
        let path = pack_path(&self.dir, at.pack);
        let start = at.payload_offset + range.start;
        let len = (range.end - range.start) as usize;
        let read = tokio::task::spawn_blocking(move || {
            let mut bytes = vec![0u8; len];
            File::open(path)?.read_exact_at(&mut bytes, start)?;
            Ok::<_, std::io::Error>(Bytes::from(bytes))
        })
        .await?;
        Ok(read)
    }

    fn meta(path: &Path, at: &Location) -> ObjectMeta {
        ObjectMeta {
            location: path.clone(),
            last_modified: chrono::DateTime::from_timestamp_millis(at.written_ms)
                .unwrap_or_default(),
            size: at.payload_len,
            e_tag: Some(format!("\"{}-{}\"", at.pack, at.offset)),
            version: None,
        }
    }
}

/// A key as it was put (`Path::from` would encode its `%` a second time).
fn stored_path(key: String) -> Path {
    Path::parse(&key).unwrap_or_else(|_| Path::from(key))
}

fn generic(message: &str) -> object_store::Error {
    object_store::Error::Generic {
        store: STORE,
        source: message.into(),
    }
}

fn io_error(e: std::io::Error) -> object_store::Error {
    object_store::Error::Generic {
        store: STORE,
        source: Box::new(e),
    }
}

fn not_found(path: &Path) -> object_store::Error {
    object_store::Error::NotFound {
        path: path.to_string(),
        source: "no such object".into(),
    }
}

fn not_implemented(operation: &str) -> object_store::Error {
    object_store::Error::NotImplemented {
        operation: operation.to_string(),
        implementer: STORE.to_string(),
    }
}

impl std::fmt::Display for PackStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PackStore({})", self.dir.display())
    }
}

impl std::fmt::Debug for PackStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

#[async_trait]
impl ObjectStore for PackStore {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        match opts.mode {
            PutMode::Overwrite => {}
            PutMode::Create if self.location(location).is_ok() => {
                return Err(object_store::Error::AlreadyExists {
                    path: location.to_string(),
                    source: "the object exists".into(),
                });
            }
            // Create is checked, not atomic: floe never races two creates of one key.
            PutMode::Create => {}
            PutMode::Update(_) => return Err(not_implemented("put with PutMode::Update")),
        }
        if location.as_ref().len() > record::KEY_BYTES_MAX {
            return Err(generic("the key is longer than a pack record allows"));
        }
        let (reply, answer) = oneshot::channel();
        self.send(Command::Put(writer::Put {
            key: location.to_string(),
            payload: payload.iter().cloned().collect(),
            reply,
        }))?;
        answer
            .await
            .map_err(|_| generic("the pack writer has stopped"))?
            .map_err(io_error)?;
        Ok(PutResult {
            e_tag: None,
            version: None,
            extensions: Default::default(),
        })
    }

    async fn put_multipart_opts(
        &self,
        _location: &Path,
        _opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        // floe writes each object with one PUT.
        Err(not_implemented("put_multipart"))
    }

    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        if options.if_match.is_some()
            || options.if_none_match.is_some()
            || options.if_modified_since.is_some()
            || options.if_unmodified_since.is_some()
            || options.version.is_some()
        {
            return Err(not_implemented("get with preconditions or versions"));
        }
        // A delete or an overwrite that raced the read may have punched the record out (or
        // removed its pack): its bytes count only if the index still names the record once
        // they are read. An overwrite is read again at its new place; a few such races in a
        // row cannot happen with floe's keys, which are written once.
        let mut attempts = 0;
        let (at, range, bytes) = loop {
            attempts += 1;
            let at = self.location(location)?;
            let range = match &options.range {
                Some(r) => r
                    .as_range(at.payload_len)
                    .map_err(|e| generic(&e.to_string()))?,
                None => 0..at.payload_len,
            };
            let read = if options.head || range.is_empty() {
                Ok(Bytes::new())
            } else {
                self.read(at, range.clone()).await?
            };
            let still = self.location(location).ok() == Some(at);
            match read {
                Ok(bytes) if still => break (at, range, bytes),
                Err(e) if still && e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(io_error(e));
                }
                _ if attempts < 3 => continue,
                _ => return Err(not_found(location)),
            }
        };
        let meta = PackStore::meta(location, &at);
        Ok(GetResult {
            payload: GetResultPayload::Stream(futures::stream::once(async { Ok(bytes) }).boxed()),
            meta,
            range,
            attributes: Default::default(),
            extensions: Default::default(),
        })
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        let commands = self.commands.clone();
        locations
            .then(move |location| {
                let commands = commands.clone();
                async move {
                    let location = location?;
                    let (reply, answer) = oneshot::channel();
                    commands
                        .send(Command::Delete {
                            key: location.to_string(),
                            reply,
                        })
                        .map_err(|_| generic("the pack writer has stopped"))?;
                    let existed = answer
                        .await
                        .map_err(|_| generic("the pack writer has stopped"))?
                        .map_err(io_error)?;
                    // As a file store does: deleting what is not there says so.
                    if !existed {
                        return Err(not_found(&location));
                    }
                    Ok(location)
                }
            })
            .boxed()
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        let found = match self.index.lock() {
            Ok(index) => index.under(prefix.map(|p| p.as_ref())),
            Err(e) => return futures::stream::iter([Err(io_error(e))]).boxed(),
        };
        let metas: Vec<object_store::Result<ObjectMeta>> = found
            .into_iter()
            .map(|(key, at)| Ok(PackStore::meta(&stored_path(key), &at)))
            .collect();
        futures::stream::iter(metas).boxed()
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        let root = Path::default();
        let prefix = prefix.unwrap_or(&root);
        let found = self
            .index
            .lock()
            .map_err(io_error)?
            .under(Some(prefix.as_ref()));
        let mut common_prefixes = std::collections::BTreeSet::new();
        let mut objects = Vec::new();
        for (key, at) in found {
            let path = stored_path(key);
            let Some(mut parts) = path.prefix_match(prefix) else {
                continue;
            };
            let Some(first) = parts.next() else { continue };
            if parts.next().is_some() {
                common_prefixes.insert(prefix.clone().join(first));
            } else {
                objects.push(PackStore::meta(&path, &at));
            }
        }
        Ok(ListResult {
            common_prefixes: common_prefixes.into_iter().collect(),
            objects,
            extensions: Default::default(),
        })
    }

    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        if matches!(options.mode, CopyMode::Create) && self.location(to).is_ok() {
            return Err(object_store::Error::AlreadyExists {
                path: to.to_string(),
                source: "the object exists".into(),
            });
        }
        let bytes = self
            .get_opts(from, GetOptions::default())
            .await?
            .bytes()
            .await?;
        self.put_opts(to, PutPayload::from_bytes(bytes), PutOptions::default())
            .await
            .map(|_| ())
    }
}

#[cfg(test)]
mod tests;
