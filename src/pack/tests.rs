use super::*;
use futures::TryStreamExt;
use object_store::{GetRange, ObjectStoreExt};
use std::io::Write;
use std::sync::Arc;

fn store(dir: &std::path::Path, target: u64) -> PackStore {
    PackStore::open_with(dir.to_path_buf(), Clock::system(), target).expect("open packs")
}

fn payload(seed: u8, len: usize) -> Bytes {
    Bytes::from(
        (0..len)
            .map(|i| seed.wrapping_add(i as u8))
            .collect::<Vec<u8>>(),
    )
}

async fn get(store: &PackStore, key: &str) -> object_store::Result<Bytes> {
    store.get(&Path::from(key)).await?.bytes().await
}

async fn keys(store: &PackStore, prefix: &str) -> Vec<String> {
    let listed: Vec<ObjectMeta> = store
        .list(Some(&Path::from(prefix)))
        .try_collect()
        .await
        .unwrap();
    listed.into_iter().map(|m| m.location.to_string()).collect()
}

/// Writes `objects/00` … `objects/{count - 1}`, object `i` with `len(i)` bytes of seed `i`.
async fn put_numbered(packs: &PackStore, count: u8, len: impl Fn(u8) -> usize) {
    for i in 0..count {
        let key = Path::from(format!("objects/{i:02}"));
        packs.put(&key, payload(i, len(i)).into()).await.unwrap();
    }
}

fn pack_files(dir: &std::path::Path) -> Vec<u64> {
    recover::packs_in(dir).unwrap()
}

#[tokio::test]
async fn objects_read_back_whole_and_in_ranges_list_and_delete() {
    let dir = tempfile::tempdir().unwrap();
    let packs = store(dir.path(), writer::PACK_BYTES_TARGET);
    let a = payload(1, 100_000);
    packs
        .put(&Path::from("objects/a"), a.clone().into())
        .await
        .unwrap();
    let multi = PutPayload::from_iter([payload(2, 10), payload(3, 5000)]);
    packs.put(&Path::from("objects/b/c"), multi).await.unwrap();
    assert_eq!(get(&packs, "objects/a").await.unwrap(), a);
    let ranged = packs
        .get_opts(
            &Path::from("objects/a"),
            GetOptions::new().with_range(Some(GetRange::Bounded(10..99_999_999))),
        )
        .await
        .unwrap();
    assert_eq!(ranged.range, 10..100_000);
    assert_eq!(ranged.meta.size, 100_000);
    assert_eq!(ranged.bytes().await.unwrap(), a.slice(10..));
    let b = get(&packs, "objects/b/c").await.unwrap();
    assert_eq!(b.len(), 5010);
    assert_eq!(&b[..10], &payload(2, 10)[..]);
    assert_eq!(
        keys(&packs, "objects").await,
        vec!["objects/a", "objects/b/c"]
    );
    let listed = packs
        .list_with_delimiter(Some(&Path::from("objects")))
        .await
        .unwrap();
    assert_eq!(listed.objects.len(), 1);
    assert_eq!(listed.common_prefixes, vec![Path::from("objects/b")]);

    packs.delete(&Path::from("objects/a")).await.unwrap();
    assert!(matches!(
        get(&packs, "objects/a").await,
        Err(object_store::Error::NotFound { .. })
    ));
    assert!(matches!(
        packs.delete(&Path::from("objects/a")).await,
        Err(object_store::Error::NotFound { .. })
    ));
    assert_eq!(keys(&packs, "objects").await, vec!["objects/b/c"]);
}

#[tokio::test]
async fn a_reopened_store_has_what_was_written_and_not_what_was_deleted() {
    let dir = tempfile::tempdir().unwrap();
    {
        let packs = store(dir.path(), 64 << 10);
        put_numbered(&packs, 40, |i| 10_000 + i as usize).await;
        // Overwritten: the second record counts, the first is freed.
        packs
            .put(&Path::from("objects/05"), payload(99, 7).into())
            .await
            .unwrap();
        for i in 0..30u8 {
            packs
                .delete(&Path::from(format!("objects/{i:02}")))
                .await
                .unwrap();
        }
        assert!(pack_files(dir.path()).len() >= 2, "packs rolled at 64 KiB");
    }
    let packs = store(dir.path(), 64 << 10);
    let left = keys(&packs, "objects").await;
    assert_eq!(
        left,
        (30..40).map(|i| format!("objects/{i}")).collect::<Vec<_>>()
    );
    for i in 30..40u8 {
        let key = format!("objects/{i:02}");
        assert_eq!(
            get(&packs, &key).await.unwrap(),
            payload(i, 10_000 + i as usize)
        );
    }
    // Packs whose objects were all deleted are gone (the first ones held objects 0–29).
    assert!(
        !pack_files(dir.path()).contains(&1),
        "{:?}",
        pack_files(dir.path())
    );
    // And the store goes on taking writes after the newest pack's end.
    packs
        .put(&Path::from("objects/new"), payload(7, 123).into())
        .await
        .unwrap();
    drop(packs);
    let packs = store(dir.path(), 64 << 10);
    assert_eq!(get(&packs, "objects/new").await.unwrap(), payload(7, 123));
    assert_eq!(keys(&packs, "objects").await.len(), 11);
}

#[tokio::test]
async fn a_torn_last_write_is_cut_off_and_loses_nothing_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    {
        let packs = store(dir.path(), writer::PACK_BYTES_TARGET);
        for i in 0..3u8 {
            let key = Path::from(format!("objects/{i}"));
            packs.put(&key, payload(i, 50_000).into()).await.unwrap();
        }
    }
    let newest = pack_path(dir.path(), *pack_files(dir.path()).last().unwrap());
    let whole = std::fs::metadata(&newest).unwrap().len();
    // A record whose header made it but whose payload did not, then a torn header.
    let torn = record::RecordHeader::new("objects/torn", &[&payload(9, 9000)], 1);
    let mut tail = torn.encode();
    tail.extend_from_slice(&payload(9, 9000)[..1000]);
    tail.resize(3 * record::ALIGN as usize, 0);
    tail.extend_from_slice(&torn.encode()[..20]);
    std::fs::OpenOptions::new()
        .append(true)
        .open(&newest)
        .unwrap()
        .write_all(&tail)
        .unwrap();
    let packs = store(dir.path(), writer::PACK_BYTES_TARGET);
    assert_eq!(keys(&packs, "objects").await.len(), 3);
    assert_eq!(
        std::fs::metadata(&newest).unwrap().len(),
        whole,
        "the tail is cut off"
    );
    for i in 0..3u8 {
        assert_eq!(
            get(&packs, &format!("objects/{i}")).await.unwrap(),
            payload(i, 50_000)
        );
    }
}

#[tokio::test]
async fn bytes_corrupted_inside_an_older_pack_cost_only_their_record() {
    let dir = tempfile::tempdir().unwrap();
    {
        let packs = store(dir.path(), 64 << 10);
        put_numbered(&packs, 20, |_| 20_000).await;
    }
    let first = pack_path(dir.path(), pack_files(dir.path())[0]);
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&first)
        .unwrap();
    // The second record of the first pack starts at 20 KiB (20,000 B + header, padded).
    file.write_all_at(&[0xAB; 16], 20 << 10).unwrap();
    drop(file);
    let packs = store(dir.path(), 64 << 10);
    let left = keys(&packs, "objects").await;
    assert_eq!(left.len(), 19, "{left:?}");
    assert!(!left.contains(&"objects/01".to_string()));
    assert_eq!(get(&packs, "objects/02").await.unwrap(), payload(2, 20_000));
}

#[tokio::test]
async fn a_second_process_cannot_open_the_same_packs() {
    let dir = tempfile::tempdir().unwrap();
    let _first = store(dir.path(), writer::PACK_BYTES_TARGET);
    let second = PackStore::open(dir.path().to_path_buf(), Clock::system());
    assert!(matches!(second, Err(PackOpenError::InUse { .. })));
}

#[tokio::test]
async fn many_writers_at_once_each_get_their_own_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let packs = Arc::new(store(dir.path(), 1 << 20));
    let writes = (0..64u8).map(|i| {
        let packs = packs.clone();
        tokio::spawn(async move {
            let key = Path::from(format!("objects/{i}"));
            packs
                .put(&key, payload(i, 30_000 + 97 * i as usize).into())
                .await
        })
    });
    for w in writes {
        w.await.unwrap().unwrap();
    }
    for i in 0..64u8 {
        let got = get(&packs, &format!("objects/{i}")).await.unwrap();
        assert_eq!(got, payload(i, 30_000 + 97 * i as usize));
    }
}

#[tokio::test]
async fn keys_list_as_they_were_put() {
    let dir = tempfile::tempdir().unwrap();
    let packs = store(dir.path(), writer::PACK_BYTES_TARGET);
    let odd = Path::from_iter(["objects", "a%b c"]);
    packs.put(&odd, payload(1, 10).into()).await.unwrap();
    let listed: Vec<ObjectMeta> = packs
        .list(Some(&Path::from("objects")))
        .try_collect()
        .await
        .unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].location, odd);
    let read = packs.get(&listed[0].location).await.unwrap();
    assert_eq!(read.bytes().await.unwrap(), payload(1, 10));
}
