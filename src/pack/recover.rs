//! Rebuilding the index from the packs at start.
//!
//! Each pack is read header by header, skipping holes (`SEEK_DATA`). Only the newest pack
//! can end in a torn write, since a pack is durable before the next is started: its
//! records' payload checksums are checked, and it is cut after its last whole record. Bytes
//! that are not a record anywhere else (a disk that corrupted them) are stepped over a
//! boundary at a time, with a warning, so the records after them are not lost.

use super::index::{Index, Location};
use super::record::{ALIGN, HEADER_BYTES, KEY_BYTES_MAX, NotARecord, RecordHeader};
use super::writer::pack_path;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// One record found in a pack.
pub struct Found {
    pub key: String,
    pub at: Location,
}

/// Pack numbers in `dir`, oldest first.
pub fn packs_in(dir: &Path) -> io::Result<Vec<u64>> {
    let mut packs = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let name = entry?.file_name();
        if let Some(Ok(n)) = name
            .to_str()
            .and_then(|n| n.strip_suffix(".pack"))
            .map(str::parse::<u64>)
        {
            packs.push(n);
        }
    }
    packs.sort_unstable();
    Ok(packs)
}

/// The records of pack `pack`, and where the next record would go: after the last whole
/// record. `newest` checks payloads too (the only pack a crash can have torn).
pub fn scan(dir: &Path, pack: u64, newest: bool) -> io::Result<(Vec<Found>, u64)> {
    let path = pack_path(dir, pack);
    let file = File::open(&path)?;
    let size = file.metadata()?.len();
    let mut found = Vec::new();
    let mut end = 0;
    let mut skipped_from: Option<u64> = None;
    let mut position = 0;
    let mut header = vec![0u8; HEADER_BYTES + KEY_BYTES_MAX];
    while position < size {
        position = match next_data(&file, position)? {
            Some(p) => p - p % ALIGN,
            None => break,
        };
        let n = read_at_most(&file, &mut header, position)?;
        match record_at(&file, &header[..n], position, size, newest) {
            Ok(h) => {
                if let Some(from) = skipped_from.take() {
                    tracing::warn!(pack = %path.display(), from, to = position, "bytes that are not records were skipped");
                }
                let at = Location::of(pack, position, &h);
                position += at.padded_len();
                end = position;
                found.push(Found { key: h.key, at });
            }
            Err(NotARecord::Zeros) => position += ALIGN,
            Err(_) => {
                skipped_from.get_or_insert(position);
                position += ALIGN;
            }
        }
    }
    if let Some(from) = skipped_from
        && !newest
    {
        tracing::warn!(pack = %path.display(), from, "bytes at the end are not records");
    }
    Ok((found, end))
}

/// The record whose header is in `header`, read at `position`: whole within the pack's `size`
/// and, when `check_payload`, with the payload its checksum says.
fn record_at(
    file: &File,
    header: &[u8],
    position: u64,
    size: u64,
    check_payload: bool,
) -> Result<RecordHeader, NotARecord> {
    let h = RecordHeader::decode(header)?;
    if position + h.padded_len() > size {
        return Err(NotARecord::Short);
    }
    if check_payload && !payload_matches(file, position + h.prefix_len(), &h) {
        return Err(NotARecord::BadChecksum);
    }
    Ok(h)
}

fn payload_matches(file: &File, at: u64, header: &RecordHeader) -> bool {
    let mut crc = 0;
    let mut buffer = vec![0u8; 1 << 20];
    let mut done = 0;
    while done < header.payload_len {
        let want = (header.payload_len - done).min(buffer.len() as u64) as usize;
        if file.read_exact_at(&mut buffer[..want], at + done).is_err() {
            return false;
        }
        crc = crc32c::crc32c_append(crc, &buffer[..want]);
        done += want as u64;
    }
    crc == header.payload_crc
}

/// The first byte at or after `position` that is not in a hole, or `None` past the data.
fn next_data(file: &File, position: u64) -> io::Result<Option<u64>> {
    use rustix::io::Errno;
    match rustix::fs::seek(file, rustix::fs::SeekFrom::Data(position)) {
        Ok(at) => Ok(Some(at)),
        Err(Errno::NXIO) => Ok(None),
        // A filesystem without SEEK_DATA: every byte counts as data.
        Err(Errno::INVAL) | Err(Errno::OPNOTSUPP) => Ok(Some(position)),
        Err(e) => Err(e.into()),
    }
}

fn read_at_most(file: &File, into: &mut [u8], at: u64) -> io::Result<usize> {
    let mut n = 0;
    while n < into.len() {
        match file.read_at(&mut into[n..], at + n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// The index of every pack in `dir`, the newest pack's end, and what recovery found to
/// give back (records written twice, packs with nothing live).
pub fn rebuild(dir: &Path) -> io::Result<(Index, u64, Vec<super::index::Reclaim>)> {
    let packs = packs_in(dir)?;
    let newest = packs.last().copied().unwrap_or(1);
    let mut index = Index::new(newest);
    for pack in &packs {
        index.add_pack(*pack);
    }
    let mut reclaims = Vec::new();
    let mut end = 0;
    for pack in &packs {
        let (found, pack_end) = scan(dir, *pack, *pack == newest)?;
        for record in found {
            reclaims.extend(index.insert(&record.key, record.at));
        }
        if *pack == newest {
            end = pack_end;
        }
    }
    reclaims.extend(index.empty_packs());
    Ok((index, end, reclaims))
}
