//! Transaction markers in a partition's index.
//!
//! A marker (Kafka's control batch ending a transaction) takes one offset, which the state
//! assigns when the transaction ends, like any batch's. Its bytes are a function of what it
//! says — producer id, epoch, commit or abort, time — so they are not stored in the object
//! store: its index entry points at no object (`ObjectId::MARKER`), packs what it says into
//! `byte_start`, and weighs nothing (`byte_len` 0). Readers build the control batch from the
//! entry (`fetch::reader`); compaction copies it into a segment as bytes like any batch.

use super::index::BatchRef;
use super::objects::ObjectId;
use crate::ids::{Offset, ProducerEpoch, ProducerId};

impl ObjectId {
    /// The object id of a marker's index entry: never registered (ids count up from 0), so
    /// reference counting passes it by.
    pub const MARKER: ObjectId = ObjectId(u64::MAX - 1);
}

/// Producer ids a marker entry can name: `byte_start` holds the id above 17 bits of epoch
/// and type. `Producers` never issues a larger one.
pub const MARKER_PRODUCER_ID_LIMIT: i64 = 1 << 46;

/// The size of the control batch a marker reads as (61 bytes of header, 17 of record): what
/// a fetch's byte budget counts for it.
pub const MARKER_BATCH_BYTES: u64 = 78;

/// The bytes a read of the entry returns: a marker's control batch, or the byte range.
pub fn read_bytes(entry: &BatchRef) -> u64 {
    if entry.object == ObjectId::MARKER {
        MARKER_BATCH_BYTES
    } else {
        entry.byte_len
    }
}

/// What a marker says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marker {
    pub producer_id: ProducerId,
    pub producer_epoch: ProducerEpoch,
    pub commit: bool,
}

impl Marker {
    /// The index entry of this marker at `offset`, stamped `timestamp_ms`; `None` for a
    /// producer id a marker entry cannot hold (never issued).
    pub fn entry(self, offset: Offset, timestamp_ms: i64) -> Option<BatchRef> {
        let id = u64::try_from(self.producer_id.0)
            .ok()
            .filter(|id| *id < MARKER_PRODUCER_ID_LIMIT as u64)?;
        let epoch = u64::from(self.producer_epoch.0 as u16);
        Some(BatchRef {
            base_offset: offset,
            end_offset: Offset(offset.0.checked_add(1)?),
            object: ObjectId::MARKER,
            byte_start: (id << 17) | (epoch << 1) | u64::from(self.commit),
            byte_len: 0,
            max_timestamp: timestamp_ms,
        })
    }

    /// The marker an index entry holds, if it is a marker's.
    pub fn of(entry: &BatchRef) -> Option<Marker> {
        if entry.object != ObjectId::MARKER {
            return None;
        }
        Some(Marker {
            producer_id: ProducerId((entry.byte_start >> 17) as i64),
            producer_epoch: ProducerEpoch(((entry.byte_start >> 1) & 0xffff) as u16 as i16),
            commit: entry.byte_start & 1 == 1,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn an_entry_gives_back_its_marker(
            id in 0i64..MARKER_PRODUCER_ID_LIMIT,
            epoch in any::<i16>(),
            commit in any::<bool>(),
            offset in 0i64..i64::MAX - 1,
        ) {
            let marker = Marker { producer_id: ProducerId(id), producer_epoch: ProducerEpoch(epoch), commit };
            let entry = marker.entry(Offset(offset), 9).expect("representable");
            prop_assert_eq!(entry.end_offset, Offset(offset + 1));
            prop_assert_eq!(entry.byte_len, 0);
            prop_assert_eq!(Marker::of(&entry), Some(marker));
        }
    }

    #[test]
    fn only_marker_entries_are_markers_and_huge_ids_are_refused() {
        let data = BatchRef {
            base_offset: Offset(0),
            end_offset: Offset(1),
            object: ObjectId(3),
            byte_start: 5,
            byte_len: 10,
            max_timestamp: 0,
        };
        assert_eq!(Marker::of(&data), None);
        let huge = Marker {
            producer_id: ProducerId(MARKER_PRODUCER_ID_LIMIT),
            producer_epoch: ProducerEpoch(0),
            commit: true,
        };
        assert_eq!(huge.entry(Offset(0), 0), None);
    }
}
