//! Renders metrics in the Prometheus text exposition format (version 0.0.4).

use super::histogram::HistogramSnapshot;
use std::fmt::Write;

/// Builds one exposition, family by family.
#[derive(Default)]
pub struct Exposition {
    out: String,
}

fn labels(pairs: &[(&str, &str)]) -> String {
    if pairs.is_empty() {
        return String::new();
    }
    let inner: Vec<String> = pairs
        .iter()
        .map(|(k, v)| {
            format!(
                "{k}=\"{}\"",
                v.replace('\\', "\\\\")
                    .replace('"', "\\\"")
                    .replace('\n', "\\n")
            )
        })
        .collect();
    format!("{{{}}}", inner.join(","))
}

fn number(v: f64) -> String {
    if v.is_infinite() {
        if v > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        }
    } else {
        format!("{v}")
    }
}

impl Exposition {
    pub fn header(&mut self, name: &str, kind: &str, help: &str) {
        let _ = writeln!(self.out, "# HELP {name} {help}");
        let _ = writeln!(self.out, "# TYPE {name} {kind}");
    }

    pub fn sample(&mut self, name: &str, pairs: &[(&str, &str)], value: f64) {
        let _ = writeln!(self.out, "{name}{} {}", labels(pairs), number(value));
    }

    /// A single-series family.
    pub fn gauge(&mut self, name: &str, help: &str, value: f64) {
        self.header(name, "gauge", help);
        self.sample(name, &[], value);
    }

    pub fn counter(&mut self, name: &str, help: &str, value: f64) {
        self.header(name, "counter", help);
        self.sample(name, &[], value);
    }

    /// The series of one histogram (call `header` with kind "histogram" once per family).
    pub fn histogram(&mut self, name: &str, pairs: &[(&str, &str)], h: &HistogramSnapshot) {
        for (i, bound) in h.bounds.iter().enumerate() {
            let le = number(*bound);
            let mut with_le = pairs.to_vec();
            with_le.push(("le", &le));
            self.sample(&format!("{name}_bucket"), &with_le, h.cumulative[i] as f64);
        }
        let mut with_inf = pairs.to_vec();
        with_inf.push(("le", "+Inf"));
        self.sample(&format!("{name}_bucket"), &with_inf, h.count() as f64);
        self.sample(&format!("{name}_sum"), pairs, h.sum);
        self.sample(&format!("{name}_count"), pairs, h.count() as f64);
    }

    pub fn finish(self) -> String {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::histogram::{Histogram, LATENCY_SECONDS};

    #[test]
    fn renders_families_labels_and_histograms() {
        let h = Histogram::new(LATENCY_SECONDS);
        h.observe(0.002);
        let mut e = Exposition::default();
        e.counter("floe_x_total", "An example.", 3.0);
        e.header("floe_lat_seconds", "histogram", "Latency.");
        e.histogram("floe_lat_seconds", &[("op", "put\"x")], &h.snapshot());
        let text = e.finish();
        assert!(
            text.contains("# TYPE floe_x_total counter\nfloe_x_total 3\n"),
            "{text}"
        );
        assert!(
            text.contains("floe_lat_seconds_bucket{op=\"put\\\"x\",le=\"0.0025\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("floe_lat_seconds_bucket{op=\"put\\\"x\",le=\"+Inf\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("floe_lat_seconds_count{op=\"put\\\"x\"} 1"),
            "{text}"
        );
    }
}
