//! The two charts of `/stats`, laid out on the server as SVG shapes (no
//! script, no inline style: the page's CSP allows neither), so the page
//! reads without JavaScript. Coordinates are in the SVG's own units.

use crate::stats::Stats;

pub const WIDTH: f64 = 640.0;
pub const HEIGHT: f64 = 300.0;
const LEFT: f64 = 56.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 16.0;
const BOTTOM: f64 = 40.0;

/// A bar, a point, or a label.
pub struct Bar {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
    pub series: &'static str,
    pub title: String,
}

pub struct Point {
    pub cx: f64,
    pub cy: f64,
    pub kind: String,
    pub title: String,
}

pub struct Tick {
    pub x: f64,
    pub y: f64,
    pub label: String,
}

pub struct Chart<T> {
    pub marks: Vec<T>,
    /// Labels along the x axis and the y axis.
    pub x_ticks: Vec<Tick>,
    pub y_ticks: Vec<Tick>,
}

fn plot_height() -> f64 {
    HEIGHT - TOP - BOTTOM
}

fn plot_width() -> f64 {
    WIDTH - LEFT - RIGHT
}

/// Log scale for counts: 0 at the axis, 1 above it, up to `max`.
fn log_height(count: u64, max: u64) -> f64 {
    let top = ((max.max(1) + 1) as f64).log10();
    plot_height() * ((count + 1) as f64).log10() / top
}

/// Series of cho-2000 Figure 11: pages by number of other copies.
pub const SERIES: [&str; 4] = ["exact", "equivalent", "chunks", "minhash"];

/// Grouped bars, one group per bucket, log scale.
pub fn histogram(stats: &Stats) -> Chart<Bar> {
    let rows = &stats.similarity.replica_histogram;
    let value = |row: &crate::similarity::HistogramRow, series: usize| match series {
        0 => row.exact,
        1 => row.equivalent,
        2 => row.chunks,
        _ => row.minhash,
    };
    let max = rows
        .iter()
        .flat_map(|row| (0..SERIES.len()).map(move |series| value(row, series)))
        .max()
        .unwrap_or(1);
    let group = plot_width() / rows.len().max(1) as f64;
    let bar = group * 0.8 / SERIES.len() as f64;
    let mut marks = Vec::new();
    let mut x_ticks = Vec::new();
    for (index, row) in rows.iter().enumerate() {
        let left = LEFT + group * index as f64 + group * 0.1;
        for (series, name) in SERIES.iter().enumerate() {
            let count = value(row, series);
            let height = log_height(count, max);
            marks.push(Bar {
                x: left + bar * series as f64,
                y: TOP + plot_height() - height,
                width: bar * 0.9,
                height,
                series: name,
                title: format!("{count} pages with {} other copies ({name})", row.replicas),
            });
        }
        x_ticks.push(Tick {
            x: LEFT + group * (index as f64 + 0.5),
            y: HEIGHT - BOTTOM + 16.0,
            label: row.replicas.clone(),
        });
    }
    let y_ticks = powers_of_ten(max)
        .into_iter()
        .map(|value| Tick {
            x: LEFT - 6.0,
            y: TOP + plot_height() - log_height(value, max) + 4.0,
            label: value.to_string(),
        })
        .collect();
    Chart {
        marks,
        x_ticks,
        y_ticks,
    }
}

fn powers_of_ten(max: u64) -> Vec<u64> {
    let mut values = vec![0];
    let mut value = 1;
    while value <= max.max(1) {
        values.push(value);
        value *= 10;
    }
    values
}

/// cho-2000 Figure 12: each similar cluster's size (log) against its
/// cardinality.
pub fn scatter(stats: &Stats) -> Chart<Point> {
    let clusters = &stats.similar_clusters;
    let max_size = clusters
        .iter()
        .map(|cluster| cluster.size)
        .max()
        .unwrap_or(1)
        .max(2);
    let max_cardinality = clusters
        .iter()
        .map(|cluster| cluster.cardinality)
        .max()
        .unwrap_or(1)
        .max(2);
    let x_of = |size: u32| {
        LEFT + plot_width() * f64::from(size.max(1)).log10() / f64::from(max_size).log10()
    };
    let y_of = |cardinality: usize| {
        TOP + plot_height() - plot_height() * cardinality as f64 / max_cardinality as f64
    };
    let marks = clusters
        .iter()
        .map(|cluster| Point {
            cx: x_of(cluster.size),
            cy: y_of(cluster.cardinality),
            kind: cluster.kind.to_string(),
            title: format!(
                "cluster {}: {} copies of {} pages ({})",
                cluster.id, cluster.cardinality, cluster.size, cluster.kind
            ),
        })
        .collect();
    let mut x_ticks: Vec<Tick> = powers_of_ten(u64::from(max_size))
        .into_iter()
        .filter(|value| *value > 0)
        .map(|value| Tick {
            x: x_of(value as u32),
            y: HEIGHT - BOTTOM + 16.0,
            label: value.to_string(),
        })
        .collect();
    x_ticks.push(Tick {
        x: x_of(max_size),
        y: HEIGHT - BOTTOM + 16.0,
        label: max_size.to_string(),
    });
    let step = (max_cardinality / 5).max(1);
    let y_ticks = (0..=max_cardinality)
        .step_by(step)
        .map(|value| Tick {
            x: LEFT - 6.0,
            y: y_of(value) + 4.0,
            label: value.to_string(),
        })
        .collect();
    Chart {
        marks,
        x_ticks,
        y_ticks,
    }
}

/// The plot area's corners, for the axes.
pub fn axes() -> (f64, f64, f64, f64) {
    (LEFT, TOP, WIDTH - RIGHT, HEIGHT - BOTTOM)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bar_heights_grow_with_counts_on_a_log_scale() {
        assert_eq!(log_height(0, 1000), 0.0);
        let (one, ten, thousand) = (
            log_height(1, 1000),
            log_height(10, 1000),
            log_height(1000, 1000),
        );
        assert!(0.0 < one && one < ten && ten < thousand);
        assert!((thousand - plot_height()).abs() < 1e-9);
        assert_eq!(powers_of_ten(1500), vec![0, 1, 10, 100, 1000]);
    }
}
