//! The Pareto frontier of (cost, latency): the settings no other setting beats on both.

/// Indices of the points no other point dominates (lower or equal on both axes, lower on one),
/// in increasing cost. Of equal points the first is kept. NaN points are never on it.
pub fn pareto_frontier(points: &[(f64, f64)]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..points.len())
        .filter(|&i| !points[i].0.is_nan() && !points[i].1.is_nan())
        .collect();
    order.sort_by(|&a, &b| {
        points[a]
            .0
            .total_cmp(&points[b].0)
            .then(points[a].1.total_cmp(&points[b].1))
            .then(a.cmp(&b))
    });
    let mut frontier = Vec::new();
    let mut best_latency = f64::INFINITY;
    for i in order {
        // Sorted by cost, then latency: a point is on the frontier exactly when it is faster
        // than everything cheaper or as cheap.
        if points[i].1 < best_latency {
            best_latency = points[i].1;
            frontier.push(i);
        }
    }
    frontier
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn dominates(a: (f64, f64), b: (f64, f64)) -> bool {
        a.0 <= b.0 && a.1 <= b.1 && (a.0 < b.0 || a.1 < b.1)
    }

    #[test]
    fn a_small_case_by_hand() {
        let points = [(3.0, 1.0), (1.0, 5.0), (2.0, 2.0), (2.5, 4.0), (1.0, 6.0)];
        assert_eq!(pareto_frontier(&points), vec![1, 2, 0]);
    }

    proptest! {
        #[test]
        fn no_point_on_the_frontier_is_dominated_and_every_other_point_is(
            points in proptest::collection::vec((0u8..20, 0u8..20), 0..40)
        ) {
            let points: Vec<(f64, f64)> =
                points.into_iter().map(|(x, y)| (x as f64, y as f64)).collect();
            let frontier = pareto_frontier(&points);
            for &i in &frontier {
                prop_assert!(points.iter().all(|&p| !dominates(p, points[i])));
            }
            for (i, &p) in points.iter().enumerate() {
                if !frontier.contains(&i) {
                    prop_assert!(frontier
                        .iter()
                        .any(|&f| dominates(points[f], p) || points[f] == p));
                }
            }
            prop_assert!(frontier.windows(2).all(|w| points[w[0]].0 < points[w[1]].0));
        }
    }
}
