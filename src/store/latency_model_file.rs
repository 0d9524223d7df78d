//! A latency model kept in a file: what `floe bench calibrate` fits from a real store, and what
//! `--object-store-latency` / `--latency-model` accept as a path ending in `.json`.
//!
//! ```json
//! { "format": 1, "store": "s3://bucket at https://…", "price_profile": "s3-standard",
//!   "put": { "p50_ms": 41.0, "p99_ms": 120.0, "bandwidth_bytes_per_second": 6.1e7 },
//!   "get": { … }, "other": { … } }
//! ```

use super::chaos::{LatencyModel, LatencyProfile, SpecError};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The only format written so far; a file of another format is refused rather than guessed.
pub const FORMAT: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileFile {
    pub p50_ms: f64,
    pub p99_ms: f64,
    /// 0 means the size adds nothing.
    pub bandwidth_bytes_per_second: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyModelFile {
    pub format: u32,
    /// The store it was measured against, for the reader.
    pub store: String,
    /// The price profile `--price-profile auto` picks for experiments on this model.
    pub price_profile: String,
    pub put: ProfileFile,
    pub get: ProfileFile,
    /// HEAD, LIST and DELETE.
    pub other: ProfileFile,
}

impl ProfileFile {
    pub fn of(profile: &LatencyProfile) -> ProfileFile {
        ProfileFile {
            p50_ms: profile.p50.as_secs_f64() * 1000.0,
            p99_ms: profile.p99.as_secs_f64() * 1000.0,
            bandwidth_bytes_per_second: profile.bandwidth,
        }
    }

    fn profile(&self, path: &str) -> Result<LatencyProfile, SpecError> {
        let valid = |v: f64| v.is_finite() && (0.0..=60_000.0).contains(&v);
        if !valid(self.p50_ms) || !valid(self.p99_ms) || self.p99_ms < self.p50_ms {
            return Err(SpecError::File {
                path: path.to_string(),
                reason: "p50_ms and p99_ms must lie in 0..=60000 with p99_ms >= p50_ms".into(),
            });
        }
        let bandwidth = self.bandwidth_bytes_per_second;
        if !bandwidth.is_finite() || bandwidth < 0.0 {
            return Err(SpecError::File {
                path: path.to_string(),
                reason: "bandwidth_bytes_per_second must be a non-negative number".into(),
            });
        }
        Ok(LatencyProfile {
            p50: Duration::from_secs_f64(self.p50_ms / 1000.0),
            p99: Duration::from_secs_f64(self.p99_ms / 1000.0),
            bandwidth,
        })
    }
}

impl LatencyModelFile {
    pub fn new(model: &LatencyModel, store: &str, price_profile: &str) -> LatencyModelFile {
        LatencyModelFile {
            format: FORMAT,
            store: store.to_string(),
            price_profile: price_profile.to_string(),
            put: ProfileFile::of(&model.put),
            get: ProfileFile::of(&model.get),
            other: ProfileFile::of(&model.other),
        }
    }

    /// The file's model, checked (`path` names it in errors).
    pub fn model(&self, path: &str) -> Result<LatencyModel, SpecError> {
        if self.format != FORMAT {
            return Err(SpecError::File {
                path: path.to_string(),
                reason: format!("format {} is not {FORMAT}", self.format),
            });
        }
        Ok(LatencyModel {
            put: self.put.profile(path)?,
            get: self.get.profile(path)?,
            other: self.other.profile(path)?,
        })
    }

    pub fn read(path: &str) -> Result<LatencyModelFile, SpecError> {
        let file = |reason: String| SpecError::File {
            path: path.to_string(),
            reason,
        };
        let text = std::fs::read_to_string(path).map_err(|e| file(e.to_string()))?;
        serde_json::from_str(&text).map_err(|e| file(e.to_string()))
    }
}

/// True when a latency model names a file rather than a built-in model or explicit figures.
pub fn names_a_file(text: &str) -> bool {
    text.trim().ends_with(".json")
}

/// What `--object-store-latency` accepts: a model file's path, or what `LatencyModel::parse`
/// reads (`none`, `s3-standard`, `s3-express`, explicit figures).
pub fn parse_model(text: &str) -> Result<Option<LatencyModel>, SpecError> {
    if names_a_file(text) {
        let path = text.trim();
        LatencyModelFile::read(path)?.model(path).map(Some)
    } else {
        LatencyModel::parse(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_survives_the_file_and_bad_figures_are_refused() {
        let model = LatencyModel::parse("s3-standard").unwrap().unwrap();
        let file = LatencyModelFile::new(&model, "s3://b", "s3-standard");
        let text = serde_json::to_string(&file).unwrap();
        let back: LatencyModelFile = serde_json::from_str(&text).unwrap();
        assert_eq!(back.model("m.json").unwrap(), model);

        let mut bad = back.clone();
        bad.put.p99_ms = bad.put.p50_ms / 2.0;
        assert!(bad.model("m.json").is_err());
        let mut bad = back.clone();
        bad.get.bandwidth_bytes_per_second = f64::NAN;
        assert!(bad.model("m.json").is_err());
        let mut bad = back;
        bad.format = 2;
        assert!(bad.model("m.json").is_err());
    }

    #[test]
    fn a_path_ending_in_json_is_read_as_a_model_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store.json");
        let model = LatencyModel::parse("p50=7ms,p99=30ms,bandwidth=80MB/s")
            .unwrap()
            .unwrap();
        let file = LatencyModelFile::new(&model, "s3://b", "s3-standard");
        std::fs::write(&path, serde_json::to_string(&file).unwrap()).unwrap();
        let read = parse_model(path.to_str().unwrap()).unwrap().unwrap();
        assert_eq!(read, model);
        assert_eq!(parse_model("none").unwrap(), None);
        let missing = parse_model("/no/such/model.json").unwrap_err().to_string();
        assert!(missing.contains("/no/such/model.json"), "{missing}");
    }
}
