//! The sweep's pictures: produce latency (p50 to p99, joined) against dollars per GiB with the
//! Pareto frontier and reference lines for classic Kafka and the peers' published figures; and
//! a stacked bar of where the money goes for the settings on the frontier.

use super::labels::{self, Rect};
use super::sweep::{PricedPoint, SweepReport};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::{FontStyle, register_font};
use std::path::Path;

/// The plots' font travels with the binary, so text renders without system fonts.
const FONT: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");

/// The plot could not be drawn or written.
#[derive(Debug, thiserror::Error)]
#[error("cannot plot {}", path.display())]
pub struct PlotError {
    pub path: std::path::PathBuf,
    #[source]
    pub cause: Box<dyn std::error::Error + Send + Sync>,
}

type Drawn = Result<(), Box<dyn std::error::Error + Send + Sync>>;

fn draw(
    path: &Path,
    size: (u32, u32),
    body: impl FnOnce(&DrawingArea<BitMapBackend, Shift>) -> Drawn,
) -> Result<(), PlotError> {
    // Registering twice is harmless; the first registration wins.
    let _ = register_font("sans-serif", FontStyle::Normal, FONT);
    let root = BitMapBackend::new(path, size).into_drawing_area();
    let result = root
        .fill(&WHITE)
        .map_err(Into::into)
        .and_then(|()| body(&root))
        .and_then(|()| root.present().map_err(Into::into));
    result.map_err(|cause| PlotError {
        path: path.to_path_buf(),
        cause,
    })
}

/// Both plots' legend of series: upper left, boxed on a light background.
fn draw_legend<'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, BitMapBackend<'a>, CT>,
) -> Drawn {
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .border_style(BLACK)
        .background_style(WHITE.mix(0.9))
        .label_font(("sans-serif", 14))
        .draw()?;
    Ok(())
}

const MODEL_COLORS: [RGBColor; 4] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
];

fn short_label(p: &PricedPoint) -> String {
    format!(
        "{} {:.0} ms, {} MiB, {} agents{}",
        model_name(&p.latency_model),
        p.flush_interval_ms,
        p.object_bytes_max >> 20,
        p.bill.agents,
        if p.zone_aware { "" } else { ", zone-unaware" }
    )
}

/// A latency model as a label: a model file by its file name.
fn model_name(model: &str) -> &str {
    Path::new(model)
        .file_stem()
        .and_then(|s| s.to_str())
        .filter(|_| model.ends_with(".json"))
        .unwrap_or(model)
}

/// Latency against $/GiB, log-scaled in cost: one vertical segment per priced point from its
/// produce p50 (dot) to its p99 (tick), the frontier through the p99s, labels that do not collide.
pub fn latency_vs_cost(report: &SweepReport, path: &Path) -> Result<(), PlotError> {
    draw(path, (1200, 760), |root| {
        let points = &report.points;
        let classic = points.first().map(|p| p.classic_kafka.per_gib);
        let costs = points
            .iter()
            .map(|p| p.bill.per_gib)
            .chain(report.peers.iter().map(|p| p.per_gib))
            .chain(classic)
            .filter(|c| *c > 0.0);
        let (low, high) = costs.fold((f64::INFINITY, 0.0f64), |(l, h), c| (l.min(c), h.max(c)));
        let (low, high) = if low.is_finite() {
            (low / 1.6, high * 1.6)
        } else {
            (1e-4, 1.0)
        };
        let latency_max = points.iter().map(|p| p.produce_p99_ms).fold(1.0, f64::max) * 1.2;
        let target = report
            .pricing
            .target_ingest_bytes_per_second
            .map_or("at the measured rate".to_string(), |t| {
                format!("at {:.0} MiB/s", t / (1024.0 * 1024.0))
            });
        let mut chart = ChartBuilder::on(root)
            .caption(
                format!("floe: produce latency against cost per GiB ingested, {target}"),
                ("sans-serif", 24),
            )
            .margin(20)
            .x_label_area_size(50)
            .y_label_area_size(70)
            .build_cartesian_2d((low..high).log_scale(), 0.0..latency_max)?;
        chart
            .configure_mesh()
            .x_desc("$ per GiB ingested (whole bill: agents, quorum, requests, storage, zones; log scale)")
            .y_desc("produce latency, ms (dot p50, bar to p99)")
            .x_label_formatter(&|x| format!("${x:.4}"))
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 16))
            .draw()?;

        // Reference lines first, so the points draw over them.
        let mut references: Vec<(String, f64, RGBColor)> = report
            .peers
            .iter()
            .map(|p| {
                (
                    format!("{} ${:.4}", p.name, p.per_gib),
                    p.per_gib,
                    RGBColor(150, 150, 150),
                )
            })
            .collect();
        if let Some(c) = classic {
            references.push((
                format!("classic Kafka RF 3, modelled ${c:.4}"),
                c,
                RGBColor(200, 30, 30),
            ));
        }
        for (_, x, color) in &references {
            chart.draw_series(DashedLineSeries::new(
                vec![(*x, 0.0), (*x, latency_max)],
                6,
                5,
                color.stroke_width(1),
            ))?;
        }

        let mut models: Vec<&str> = points.iter().map(|p| p.latency_model.as_str()).collect();
        models.dedup();
        models.sort();
        models.dedup();
        let color_of = |model: &str| {
            MODEL_COLORS[models.iter().position(|m| *m == model).unwrap_or(0) % MODEL_COLORS.len()]
        };
        for model in &models {
            let color = color_of(model);
            let mine: Vec<&PricedPoint> = points
                .iter()
                .filter(|p| p.latency_model == *model)
                .collect();
            chart.draw_series(mine.iter().map(|p| {
                PathElement::new(
                    vec![
                        (p.bill.per_gib, p.produce_p50_ms),
                        (p.bill.per_gib, p.produce_p99_ms),
                    ],
                    color.mix(0.6).stroke_width(2),
                )
            }))?;
            chart
                .draw_series(mine.iter().map(|p| {
                    let style = if p.zone_aware {
                        color.filled()
                    } else {
                        color.stroke_width(2)
                    };
                    Circle::new((p.bill.per_gib, p.produce_p50_ms), 5, style)
                }))?
                .label(format!(
                    "{} (hollow: zone-unaware clients)",
                    model_name(model)
                ))
                .legend(move |(x, y)| Circle::new((x + 10, y), 5, color.filled()));
            chart.draw_series(mine.iter().map(|p| {
                Cross::new((p.bill.per_gib, p.produce_p99_ms), 4, color.stroke_width(2))
            }))?;
        }
        let frontier: Vec<(f64, f64)> = report
            .frontier
            .iter()
            .map(|&i| (points[i].bill.per_gib, points[i].produce_p99_ms))
            .collect();
        chart
            .draw_series(LineSeries::new(frontier.clone(), BLACK.stroke_width(2)))?
            .label("Pareto frontier (produce p99)")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.stroke_width(2)));
        draw_legend(&mut chart)?;

        // Labels: the frontier's points and the reference lines, placed clear of every marker
        // and of each other.
        let pixel = |x: f64, y: f64| chart.backend_coord(&(x, y));
        let (width, height) = root.dim_in_pixel();
        let (plot_x, plot_y) = chart.plotting_area().get_pixel_range();
        let area = Rect {
            left: plot_x.start,
            top: plot_y.start,
            right: plot_x.end.min(width as i32),
            bottom: plot_y.end.min(height as i32),
        };
        let mut obstacles: Vec<Rect> = points
            .iter()
            .flat_map(|p| {
                [
                    Rect::around(pixel(p.bill.per_gib, p.produce_p50_ms), 6),
                    Rect::around(pixel(p.bill.per_gib, p.produce_p99_ms), 5),
                ]
            })
            .collect();
        // The legend sits in the upper left.
        obstacles.push(Rect {
            left: area.left,
            top: area.top,
            right: area.left + 380,
            bottom: area.top + 30 + 20 * models.len() as i32,
        });
        let font = 13;
        let mut texts: Vec<(String, (i32, i32))> = report
            .frontier
            .iter()
            .map(|&i| {
                (
                    short_label(&points[i]),
                    pixel(points[i].bill.per_gib, points[i].produce_p99_ms),
                )
            })
            .collect();
        texts.extend(
            references
                .iter()
                .map(|(text, x, _)| (text.clone(), pixel(*x, latency_max * 0.93))),
        );
        let requests: Vec<_> = texts
            .iter()
            .map(|(text, anchor)| (*anchor, labels::text_size(text, font)))
            .collect();
        for ((text, _), spot) in texts.iter().zip(labels::place(&requests, &obstacles, area)) {
            if let Some(at) = spot {
                root.draw(&Text::new(
                    text.clone(),
                    at,
                    ("sans-serif", font).into_font(),
                ))?;
            }
        }
        Ok(())
    })
}

/// Where the money goes: one stacked bar per frontier setting, in dollars per month.
pub fn cost_breakdown(report: &SweepReport, path: &Path) -> Result<(), PlotError> {
    draw(path, (1200, 700), |root| {
        let bars: Vec<&PricedPoint> = report.frontier.iter().map(|&i| &report.points[i]).collect();
        let highest = bars.iter().map(|p| p.bill.total).fold(1.0, f64::max) * 1.15;
        let classic = bars.first().map_or(0.0, |p| p.classic_kafka.total);
        let mut chart = ChartBuilder::on(root)
            .caption(
                format!(
                    "floe: monthly bill of the frontier's settings (classic Kafka for the same: ${classic:.0}/month)"
                ),
                ("sans-serif", 22),
            )
            .margin(20)
            .x_label_area_size(90)
            .y_label_area_size(90)
            .build_cartesian_2d(0.0..bars.len().max(1) as f64, 0.0..highest)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_desc("$ per month")
            .label_style(("sans-serif", 13))
            .axis_desc_style(("sans-serif", 16))
            .draw()?;
        let part_colors = [
            RGBColor(31, 119, 180),
            RGBColor(174, 199, 232),
            RGBColor(255, 127, 14),
            RGBColor(255, 187, 120),
            RGBColor(44, 160, 44),
            RGBColor(152, 223, 138),
            RGBColor(148, 103, 189),
            RGBColor(214, 39, 40),
        ];
        let part_names: Vec<&str> = bars
            .first()
            .map(|p| p.bill.parts()[..8].iter().map(|(n, _)| *n).collect())
            .unwrap_or_default();
        for (k, name) in part_names.iter().enumerate() {
            let color = part_colors[k];
            chart
                .draw_series(bars.iter().enumerate().map(|(i, p)| {
                    let parts = p.bill.parts();
                    let below: f64 = parts[..k].iter().map(|(_, v)| v).sum();
                    Rectangle::new(
                        [
                            (i as f64 + 0.15, below),
                            (i as f64 + 0.85, below + parts[k].1),
                        ],
                        color.filled(),
                    )
                }))?
                .label(*name)
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled())
                });
        }
        draw_legend(&mut chart)?;
        // Each bar's setting, centred under it on two lines.
        for (i, p) in bars.iter().enumerate() {
            let (x, y) = chart.backend_coord(&(i as f64 + 0.5, 0.0));
            let lines = [
                model_name(&p.latency_model).to_string(),
                format!(
                    "{:.0} ms, {} agents{}",
                    p.flush_interval_ms,
                    p.bill.agents,
                    if p.zone_aware { "" } else { ", zone-unaware" }
                ),
            ];
            for (row, line) in lines.iter().enumerate() {
                let (width, _) = labels::text_size(line, 13);
                root.draw(&Text::new(
                    line.clone(),
                    (x - width / 2, y + 10 + 18 * row as i32),
                    ("sans-serif", 13).into_font(),
                ))?;
            }
        }
        for (i, p) in bars.iter().enumerate() {
            let at = chart.backend_coord(&(i as f64 + 0.2, p.bill.total + highest * 0.04));
            root.draw(&Text::new(
                format!("${:.0} · ${:.4}/GiB", p.bill.total, p.bill.per_gib),
                at,
                ("sans-serif", 12).into_font(),
            ))?;
        }
        Ok(())
    })
}
