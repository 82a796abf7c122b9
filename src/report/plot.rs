//! The figures (plotters, SVG backend).
//!
//! - sweep.svg: four panels against chunk size (log axis, ticks at the sizes swept, in the
//!   sizes' unit), one line per strategy (and prefix and expansion other than `none`): span
//!   recall@k with its 95% bootstrap interval,
//!   coverage@k, the margin (with its interval), and tokens per query, so quality and cost are
//!   read off one figure. The pick is ringed in black.
//! - frontier.svg: span recall@k against tokens per query (log axis), every configuration a
//!   dot in its series' colour (strategy, prefix, expansion), the cost–quality frontier as a black step line through the
//!   configurations nothing dominates, and the pick ringed.
//!
//! Only SVG is written: the SVG backend needs no font files (text stays text), while PNG would
//! need the `ttf` feature and system fonts (see notes/crates.md). Convert with
//! `rsvg-convert -o sweep.png sweep.svg` when a raster is needed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::prelude::*;
use thiserror::Error;

use crate::select::{ConfigSelection, Selection};

/// Size of the cost–quality figure in pixels (width, height).
pub const FRONTIER_SIZE: (u32, u32) = (1000, 700);

/// Figure size in pixels (width, height).
pub const FIGURE_SIZE: (u32, u32) = (1280, 900);

/// A figure could not be drawn or written.
#[derive(Debug, Error)]
#[error("cannot draw {path}: {message}")]
pub struct PlotError {
    /// The file.
    pub path: PathBuf,
    /// What plotters reported.
    pub message: String,
}

const COLORS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

/// Reads a value's interval `(lo, hi)` from a configuration.
type IntervalOf = fn(&ConfigSelection) -> (f64, f64);

/// One panel: a title, a y-axis label, the value and its optional interval.
struct Panel {
    title: &'static str,
    y_desc: &'static str,
    value: fn(&ConfigSelection) -> f64,
    interval: Option<IntervalOf>,
    /// Fixed y range, or None to fit the data.
    range: Option<(f64, f64)>,
    /// Where the legend goes (away from where the curves usually are).
    legend: SeriesLabelPosition,
}

fn panels() -> [Panel; 4] {
    [
        Panel {
            title: "span recall@k (95% bootstrap CI)",
            y_desc: "span recall@k",
            value: |c| c.span_recall,
            interval: Some(|c| (c.span_recall_lo, c.span_recall_hi)),
            range: Some((0.0, 1.0)),
            legend: SeriesLabelPosition::LowerRight,
        },
        Panel {
            title: "coverage@k (95% bootstrap CI)",
            y_desc: "coverage@k",
            value: |c| c.coverage,
            interval: Some(|c| (c.coverage_lo, c.coverage_hi)),
            range: Some((0.0, 1.0)),
            legend: SeriesLabelPosition::LowerRight,
        },
        Panel {
            title: "margin (95% bootstrap CI)",
            y_desc: "normalised margin",
            value: |c| c.margin,
            interval: Some(|c| (c.margin_lo, c.margin_hi)),
            range: None,
            legend: SeriesLabelPosition::LowerRight,
        },
        Panel {
            title: "cost: tokens retrieved per query",
            y_desc: "tokens per query",
            value: |c| c.tokens_per_query,
            interval: None,
            range: None,
            legend: SeriesLabelPosition::UpperLeft,
        },
    ]
}

fn err(path: &Path, e: impl std::fmt::Display) -> PlotError {
    PlotError {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// Both figures for `selection` as SVG texts: sweep.svg's, then frontier.svg's. `title` heads
/// the figures (e.g. the run folder's name).
///
/// # Errors
/// [`PlotError`] naming the figure's file when plotters cannot draw it.
pub fn figures(selection: &Selection, title: &str) -> Result<[String; 2], PlotError> {
    let mut sweep = String::new();
    draw(&mut sweep, Path::new(crate::files::PLOT), selection, title)?;
    let mut frontier = String::new();
    draw_frontier(
        &mut frontier,
        Path::new(crate::files::FRONTIER),
        selection,
        title,
    )?;
    Ok([sweep, frontier])
}

/// The series of `sel`'s configurations in first-appearance order.
fn series_order(sel: &Selection) -> Vec<String> {
    let mut order: Vec<String> = Vec::new();
    for c in &sel.configs {
        let name = series(c);
        if !order.contains(&name) {
            order.push(name);
        }
    }
    order
}

/// A linear axis over log2 values whose ticks are exactly the given positions (plotters' own
/// `with_key_points` drops the f64 label formatter).
struct Ticked {
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let share = if self.hi > self.lo {
            (v - self.lo) / (self.hi - self.lo)
        } else {
            0.5
        };
        limit.0 + (f64::from(limit.1 - limit.0) * share).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, _hint: Hint) -> Vec<f64> {
        self.ticks.clone()
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

/// Formats a log2 axis position as the whole number it stands for.
fn pow2_label(x: &f64) -> String {
    format!("{}", 2f64.powf(*x).round())
}

/// Draws frontier.svg into `out`; `path` names the figure in errors.
fn draw_frontier(
    out: &mut String,
    path: &Path,
    sel: &Selection,
    title: &str,
) -> Result<(), PlotError> {
    let order = series_order(sel);
    let w = sel.winner();
    let log = |c: &ConfigSelection| c.tokens_per_query.max(1.0).log2();
    let (mut x_lo, mut x_hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for c in &sel.configs {
        x_lo = x_lo.min(log(c));
        x_hi = x_hi.max(log(c));
    }
    let (x_lo, x_hi) = (x_lo - 0.3, x_hi + 0.3);
    // Ticks at powers of two inside the range, labelled as token counts.
    let ticks: Vec<f64> = (x_lo.ceil() as i32..=x_hi.floor() as i32)
        .map(f64::from)
        .collect();
    let root = SVGBackend::with_string(out, FRONTIER_SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(path, e))?;
    let heading = format!(
        "{title}: span recall@k against cost; pick {} ({} {}/query)",
        w.config_id,
        w.tokens_per_query.round(),
        w.unit()
    );
    let mut chart = ChartBuilder::on(&root)
        .caption(&heading, ("sans-serif", 19))
        .margin(16)
        .x_label_area_size(46)
        .y_label_area_size(64)
        .build_cartesian_2d(
            Ticked {
                lo: x_lo,
                hi: x_hi,
                ticks,
            },
            0.0..1.0,
        )
        .map_err(|e| err(path, e))?;
    chart
        .configure_mesh()
        .x_desc(format!("{} per query (log scale)", w.unit()))
        .y_desc("span recall@k")
        .x_label_formatter(&pow2_label)
        .y_label_formatter(&|y| format!("{y:.1}"))
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(|e| err(path, e))?;
    for (j, name) in order.iter().enumerate() {
        let color = COLORS[j % COLORS.len()];
        chart
            .draw_series(
                sel.configs
                    .iter()
                    .filter(|c| series(c) == *name)
                    .map(|c| Circle::new((log(c), c.span_recall), 4, color.filled())),
            )
            .map_err(|e| err(path, e))?
            .label(name.as_str())
            .legend(move |(x, y)| Circle::new((x + 10, y), 4, color.filled()));
    }
    // The frontier as a step line: cheapest first, recall rising.
    let mut on: Vec<&ConfigSelection> = sel.configs.iter().filter(|c| c.pareto).collect();
    on.sort_by(|a, b| a.tokens_per_query.total_cmp(&b.tokens_per_query));
    let mut steps: Vec<(f64, f64)> = Vec::new();
    for c in &on {
        if let Some(&(_, y)) = steps.last() {
            steps.push((log(c), y));
        }
        steps.push((log(c), c.span_recall));
    }
    chart
        .draw_series(LineSeries::new(steps, BLACK.stroke_width(2)))
        .map_err(|e| err(path, e))?
        .label("frontier (nothing cheaper and better)")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.stroke_width(2)));
    chart
        .draw_series(std::iter::once(Circle::new(
            (log(w), w.span_recall),
            9,
            RED.stroke_width(2),
        )))
        .map_err(|e| err(path, e))?
        .label("pick")
        .legend(|(x, y)| Circle::new((x + 10, y), 5, RED.stroke_width(2)));
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.4))
        .label_font(("sans-serif", 13))
        .draw()
        .map_err(|e| err(path, e))?;
    root.present().map_err(|e| err(path, e))?;
    Ok(())
}

/// The series a configuration is drawn in: its strategy, with `+prefix` unless the prefix is
/// `none`, then `+expansion` unless it sends its chunks alone (`markdown+parent:1024`).
fn series(c: &ConfigSelection) -> String {
    let mut name = c.strategy.clone();
    for factor in [&c.prefix, &c.expand] {
        if !factor.is_empty() && factor != "none" {
            name = format!("{name}+{factor}");
        }
    }
    name
}

/// Draws sweep.svg into `out`; `path` names the figure in errors.
fn draw(out: &mut String, path: &Path, sel: &Selection, title: &str) -> Result<(), PlotError> {
    // Series (a strategy, or strategy+prefix for prefixed configurations) in first-appearance
    // order, each with its configurations sorted by size.
    let order = series_order(sel);
    let mut by_strategy: BTreeMap<String, Vec<&ConfigSelection>> = BTreeMap::new();
    for c in &sel.configs {
        by_strategy.entry(series(c)).or_default().push(c);
    }
    for v in by_strategy.values_mut() {
        v.sort_by_key(|c| c.chunk_size);
    }
    let sizes: Vec<f64> = {
        let mut s: Vec<usize> = sel.configs.iter().map(|c| c.chunk_size.max(1)).collect();
        s.sort_unstable();
        s.dedup();
        s.into_iter().map(|x| (x as f64).log2()).collect()
    };
    let (x_lo, x_hi) = (sizes[0] - 0.35, sizes[sizes.len() - 1] + 0.35);
    let mut units: Vec<&str> = sel.configs.iter().map(|c| c.size_unit.as_str()).collect();
    units.sort_unstable();
    units.dedup();
    let x_desc = format!("chunk size ({}, log scale)", units.join(" or "));
    // Strategies are offset slightly along x so their intervals do not hide each other.
    let n_strat = order.len() as f64;
    let offset = |j: usize| 0.06 * (j as f64 - (n_strat - 1.0) / 2.0);

    let root = SVGBackend::with_string(out, FIGURE_SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(path, e))?;
    let w = sel.winner();
    let heading = format!(
        "{title}: pick {} ({} tokens/query), {} questions",
        w.config_id,
        w.tokens_per_query.round(),
        sel.n_questions
    );
    let root = root
        .titled(&heading, ("sans-serif", 22))
        .map_err(|e| err(path, e))?;
    let areas = root.split_evenly((2, 2));
    for (area, panel) in areas.iter().zip(panels()) {
        let (y_lo, y_hi) = match panel.range {
            Some(r) => r,
            None => {
                let mut lo = f64::INFINITY;
                let mut hi = f64::NEG_INFINITY;
                for c in &sel.configs {
                    let (a, b) = panel
                        .interval
                        .map_or(((panel.value)(c), (panel.value)(c)), |f| f(c));
                    lo = lo.min(a).min((panel.value)(c));
                    hi = hi.max(b).max((panel.value)(c));
                }
                if panel.interval.is_none() {
                    lo = lo.min(0.0);
                }
                let pad = ((hi - lo) * 0.08).max(1e-3);
                (lo - pad, hi + pad)
            }
        };
        let mut chart = ChartBuilder::on(area)
            .caption(panel.title, ("sans-serif", 17))
            .margin(14)
            .x_label_area_size(42)
            .y_label_area_size(64)
            .build_cartesian_2d(
                Ticked {
                    lo: x_lo,
                    hi: x_hi,
                    ticks: sizes.clone(),
                },
                y_lo..y_hi,
            )
            .map_err(|e| err(path, e))?;
        chart
            .configure_mesh()
            .x_desc(x_desc.as_str())
            .y_desc(panel.y_desc)
            .x_label_formatter(&pow2_label)
            .y_label_formatter(&|y| {
                if y_hi - y_lo > 50.0 {
                    format!("{y:.0}")
                } else if y.abs() < 5e-3 {
                    "0.00".to_string()
                } else {
                    format!("{y:.2}")
                }
            })
            .light_line_style(WHITE.mix(0.0))
            .draw()
            .map_err(|e| err(path, e))?;
        for (j, strategy) in order.iter().enumerate() {
            let color = COLORS[j % COLORS.len()];
            let points: Vec<(f64, f64)> = by_strategy[strategy]
                .iter()
                .map(|c| {
                    (
                        (c.chunk_size.max(1) as f64).log2() + offset(j),
                        (panel.value)(c),
                    )
                })
                .collect();
            chart
                .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))
                .map_err(|e| err(path, e))?
                .label(strategy.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
            chart
                .draw_series(points.iter().map(|&p| Circle::new(p, 4, color.filled())))
                .map_err(|e| err(path, e))?;
            if let Some(interval) = panel.interval {
                chart
                    .draw_series(by_strategy[strategy].iter().map(|c| {
                        let x = (c.chunk_size.max(1) as f64).log2() + offset(j);
                        let (lo, hi) = interval(c);
                        PathElement::new(vec![(x, lo), (x, hi)], color.mix(0.7).stroke_width(1))
                    }))
                    .map_err(|e| err(path, e))?;
            }
        }
        // Ring the pick.
        let j = order
            .iter()
            .position(|s| *s == series(w))
            .unwrap_or_default();
        let pick = (
            (w.chunk_size.max(1) as f64).log2() + offset(j),
            (panel.value)(w),
        );
        chart
            .draw_series(std::iter::once(Circle::new(pick, 9, BLACK.stroke_width(2))))
            .map_err(|e| err(path, e))?
            .label("pick")
            .legend(|(x, y)| Circle::new((x + 10, y), 5, BLACK.stroke_width(2)));
        chart
            .configure_series_labels()
            .position(panel.legend)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.4))
            .label_font(("sans-serif", 13))
            .draw()
            .map_err(|e| err(path, e))?;
    }
    root.present().map_err(|e| err(path, e))?;
    Ok(())
}
