//! Decoding the state's persistent collections (`imbl`) safely. Their own `Deserialize`
//! reserves as many elements as the input claims, before reading any: a snapshot whose
//! length prefix says four billion would abort the process. These read through the standard
//! collections instead (a `BTreeMap` reserves nothing, a `Vec` reserves cautiously), then
//! convert; the bytes are the same either way.

use imbl::{OrdMap, Vector};
use serde::{Deserialize, Deserializer};
use std::collections::BTreeMap;

pub fn ord_map<'de, D, K, V>(deserializer: D) -> Result<OrdMap<K, V>, D::Error>
where
    D: Deserializer<'de>,
    K: Deserialize<'de> + Ord + Clone,
    V: Deserialize<'de> + Clone,
{
    Ok(BTreeMap::<K, V>::deserialize(deserializer)?
        .into_iter()
        .collect())
}

/// A map of maps (committed offsets by group).
pub fn ord_map_of_maps<'de, D, K, K2, V>(
    deserializer: D,
) -> Result<OrdMap<K, OrdMap<K2, V>>, D::Error>
where
    D: Deserializer<'de>,
    K: Deserialize<'de> + Ord + Clone,
    K2: Deserialize<'de> + Ord + Clone,
    V: Deserialize<'de> + Clone,
{
    Ok(BTreeMap::<K, BTreeMap<K2, V>>::deserialize(deserializer)?
        .into_iter()
        .map(|(k, inner)| (k, inner.into_iter().collect::<OrdMap<K2, V>>()))
        .collect())
}

pub fn vector<'de, D, T>(deserializer: D) -> Result<Vector<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Clone,
{
    Ok(Vec::<T>::deserialize(deserializer)?.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    struct Sample {
        #[serde(deserialize_with = "ord_map")]
        _map: OrdMap<u32, u32>,
        #[serde(deserialize_with = "vector")]
        _vector: Vector<u32>,
    }

    #[test]
    fn a_length_prefix_larger_than_the_input_is_refused_without_reserving_it() {
        // Each collection claims 2^32 - 1 elements and holds none.
        for bytes in [
            &[0xff, 0xff, 0xff, 0xff, 0x0f][..],
            &[0x00, 0xff, 0xff, 0xff, 0xff, 0x0f][..],
        ] {
            assert!(postcard::from_bytes::<Sample>(bytes).is_err());
        }
    }
}
