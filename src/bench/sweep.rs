//! Parameter sweeps: one embedded experiment per point, written as a CSV row each, and a
//! plot of latency against monthly cost with classic Kafka's cross-zone bill marked.

use super::experiment::{EmbeddedBroker, ExperimentReport, run_embedded};
use super::load::{BenchError, LoadSpec};
use crate::cost::PriceProfile;
use plotters::prelude::*;
use plotters::style::{FontStyle, register_font};
use std::path::Path;
use std::time::Duration;

/// The plot's font travels with the binary, so text renders without system fonts.
const FONT: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");

#[derive(Debug, Clone)]
pub struct SweepSpec {
    pub flush_intervals: Vec<Duration>,
    pub object_bytes_max: Vec<usize>,
    pub latency_models: Vec<String>,
    pub object_store: String,
}

pub async fn run(
    sweep: &SweepSpec,
    load: &LoadSpec,
    price_profile: &str,
    retention_hours: f64,
    mut progress: impl FnMut(&ExperimentReport),
) -> Result<Vec<ExperimentReport>, BenchError> {
    let mut reports = Vec::new();
    for model in &sweep.latency_models {
        for &object_bytes_max in &sweep.object_bytes_max {
            for &flush_interval in &sweep.flush_intervals {
                let broker = EmbeddedBroker {
                    flush_interval,
                    object_bytes_max,
                    object_store: sweep.object_store.clone(),
                    latency_model: model.clone(),
                };
                let mut spec = load.clone();
                spec.topic = format!(
                    "sweep-{}",
                    crate::random::Rng::from_entropy().uuid().simple()
                );
                let profile = PriceProfile::resolve(price_profile, model)?;
                let report = run_embedded(&broker, spec, &profile, retention_hours).await?;
                progress(&report);
                reports.push(report);
            }
        }
    }
    Ok(reports)
}

pub const CSV_HEADER: &str = "latency_model,flush_interval_ms,object_bytes_max,megabytes_per_second,records_per_second,produce_p50_ms,produce_p99_ms,end_to_end_p50_ms,end_to_end_p99_ms,puts,gets,puts_per_gib,monthly_usd,classic_kafka_cross_zone_monthly_usd";

pub fn csv(reports: &[ExperimentReport]) -> String {
    let mut out = String::from(CSV_HEADER);
    out.push('\n');
    for r in reports {
        let e2e = r.load.end_to_end_latency_ms.as_ref();
        out.push_str(&format!(
            "{},{},{},{:.3},{:.1},{:.3},{:.3},{},{},{},{},{:.1},{:.4},{:.2}\n",
            r.latency_model.as_deref().unwrap_or(""),
            r.flush_interval_ms.unwrap_or(0.0),
            r.object_bytes_max.unwrap_or(0),
            r.load.megabytes_per_second,
            r.load.records_per_second,
            r.load.produce_latency_ms.p50,
            r.load.produce_latency_ms.p99,
            e2e.map_or(String::new(), |e| format!("{:.3}", e.p50)),
            e2e.map_or(String::new(), |e| format!("{:.3}", e.p99)),
            r.object_store.puts,
            r.object_store.gets,
            r.object_store.puts_per_gib,
            r.monthly_usd.total,
            r.classic_kafka_cross_zone_monthly_usd,
        ));
    }
    out
}

/// The plot could not be drawn or written.
#[derive(Debug, thiserror::Error)]
#[error("cannot plot {}", path.display())]
pub struct PlotError {
    pub path: std::path::PathBuf,
    #[source]
    pub cause: Box<dyn std::error::Error + Send + Sync>,
}

/// Produce latency (p50 and p99) against projected dollars per month, one point per run,
/// labelled by flush interval; a dashed line marks classic Kafka's cross-zone bill.
pub fn plot(reports: &[ExperimentReport], path: &Path) -> Result<(), PlotError> {
    // Registering twice is harmless; the first registration wins.
    let _ = register_font("sans-serif", FontStyle::Normal, FONT);
    let err = |e: Box<dyn std::error::Error + Send + Sync>| PlotError {
        path: path.to_path_buf(),
        cause: e,
    };
    let root = BitMapBackend::new(path, (1000, 640)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(e.into()))?;
    let cost_max = reports
        .iter()
        .map(|r| {
            r.monthly_usd
                .total
                .max(r.classic_kafka_cross_zone_monthly_usd)
        })
        .fold(0.0f64, f64::max)
        .max(1e-6)
        * 1.15;
    let latency_max = reports
        .iter()
        .map(|r| r.load.produce_latency_ms.p99)
        .fold(0.0f64, f64::max)
        .max(1.0)
        * 1.15;
    let mut chart = ChartBuilder::on(&root)
        .caption("floe: produce latency vs. monthly cost", ("sans-serif", 26))
        .margin(20)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..cost_max, 0.0..latency_max)
        .map_err(|e| err(e.into()))?;
    chart
        .configure_mesh()
        .x_desc("projected object-store cost, $/month (at the measured rate)")
        .y_desc("produce latency, ms")
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 17))
        .draw()
        .map_err(|e| err(e.into()))?;
    for (label, color, pick) in [
        (
            "p50",
            BLUE,
            (|r: &ExperimentReport| r.load.produce_latency_ms.p50) as fn(&ExperimentReport) -> f64,
        ),
        ("p99", RED, |r: &ExperimentReport| {
            r.load.produce_latency_ms.p99
        }),
    ] {
        let points: Vec<(f64, f64)> = reports
            .iter()
            .map(|r| (r.monthly_usd.total, pick(r)))
            .collect();
        chart
            .draw_series(points.iter().map(|&p| Circle::new(p, 6, color.filled())))
            .map_err(|e| err(e.into()))?
            .label(label)
            .legend(move |(x, y)| Circle::new((x + 10, y), 6, color.filled()));
        chart
            .draw_series(reports.iter().zip(&points).map(|(r, &p)| {
                let text = format!(
                    "{:.0} ms {}",
                    r.flush_interval_ms.unwrap_or(0.0),
                    r.latency_model.as_deref().unwrap_or("")
                );
                Text::new(
                    text,
                    (p.0, p.1 + latency_max * 0.02),
                    ("sans-serif", 13).into_font(),
                )
            }))
            .map_err(|e| err(e.into()))?;
    }
    if let Some(kafka) = reports
        .first()
        .map(|r| r.classic_kafka_cross_zone_monthly_usd)
    {
        chart
            .draw_series(DashedLineSeries::new(
                vec![(kafka, 0.0), (kafka, latency_max)],
                8,
                6,
                BLACK.stroke_width(2),
            ))
            .map_err(|e| err(e.into()))?
            .label(format!("classic Kafka cross-zone: ${kafka:.2}/month"))
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE.mix(0.9))
        .label_font(("sans-serif", 15))
        .draw()
        .map_err(|e| err(e.into()))?;
    root.present().map_err(|e| err(e.into()))?;
    Ok(())
}
