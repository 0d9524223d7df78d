//! Any bytes as a pack file of the embedded store found at start: recovery reads it header by
//! header and never panics, whatever a disk or a crash left in it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fuzz_target!(|data: &[u8]| {
    static DIR: OnceLock<std::path::PathBuf> = OnceLock::new();
    let dir = DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("floe-fuzz-packs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("fuzz directory");
        dir
    });
    use floe::pack::record::RecordHeader;
    let _ = RecordHeader::decode(data);
    let newest = data.first().is_some_and(|b| b & 1 == 1);
    // A whole record (its payload the input's first half) before the input's bytes, with one
    // of its bytes changed where the input's second byte says: garbage alone rarely carries a
    // header whose checksum holds.
    let (payload, rest) = data.split_at(data.len() / 2);
    let header = RecordHeader::new("v1/fuzz", &[payload], 1);
    let mut pack = header.encode();
    pack.extend_from_slice(payload);
    pack.resize(header.padded_len() as usize, 0);
    pack.extend_from_slice(rest);
    if data.len() > 3 && data[2] & 3 == 0 {
        let at = data[1] as usize * 7 % pack.len();
        pack[at] ^= data[3] | 1;
    }
    let data = pack.as_slice();
    std::fs::write(floe::pack::pack_path(dir, 1), data).expect("write pack");
    if let Ok((found, end)) = floe::pack::recover::scan(dir, 1, newest) {
        assert!(end <= data.len() as u64);
        for record in found {
            assert!(record.at.payload_offset + record.at.payload_len <= data.len() as u64);
        }
    }
});
