//! Placing text labels on a plot so that none overlaps another label or a marker: each label
//! tries spots around its anchor, nearest first, and is left out when none is free (pure).

/// A box in pixels: left, top, right, bottom.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rect {
    pub left: i32,
    pub top: i32,
    pub right: i32,
    pub bottom: i32,
}

impl Rect {
    pub fn around((x, y): Pixels, radius: i32) -> Rect {
        Rect {
            left: x - radius,
            top: y - radius,
            right: x + radius,
            bottom: y + radius,
        }
    }

    pub fn overlaps(&self, other: &Rect) -> bool {
        self.left < other.right
            && other.left < self.right
            && self.top < other.bottom
            && other.top < self.bottom
    }

    fn inside(&self, area: &Rect) -> bool {
        self.left >= area.left
            && self.right <= area.right
            && self.top >= area.top
            && self.bottom <= area.bottom
    }
}

/// The rough size of `text` in a sans-serif font of `size` pixels.
pub fn text_size(text: &str, size: i32) -> Pixels {
    (
        (text.chars().count() as f64 * size as f64 * 0.56).ceil() as i32,
        size,
    )
}

/// A point or a size in pixels.
pub type Pixels = (i32, i32);

/// For each label (anchor, size), the top-left corner it is drawn at, or `None` when every
/// spot tried would overlap a placed label, an obstacle, or leave `area`.
pub fn place(labels: &[(Pixels, Pixels)], obstacles: &[Rect], area: Rect) -> Vec<Option<Pixels>> {
    let mut placed: Vec<Rect> = Vec::new();
    let mut out = Vec::with_capacity(labels.len());
    for &((x, y), (w, h)) in labels {
        let mut spot = None;
        'search: for gap in [6, 14, 26, 44] {
            let candidates = [
                (x + gap, y - h / 2),
                (x + gap, y - h - gap / 2),
                (x + gap, y + gap / 2),
                (x - w - gap, y - h / 2),
                (x - w - gap, y - h - gap / 2),
                (x - w - gap, y + gap / 2),
                (x - w / 2, y - h - gap),
                (x - w / 2, y + gap),
            ];
            for (left, top) in candidates {
                let rect = Rect {
                    left,
                    top,
                    right: left + w,
                    bottom: top + h,
                };
                if rect.inside(&area)
                    && !placed.iter().any(|p| p.overlaps(&rect))
                    && !obstacles.iter().any(|o| o.overlaps(&rect))
                {
                    placed.push(rect);
                    spot = Some((left, top));
                    break 'search;
                }
            }
        }
        out.push(spot);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const AREA: Rect = Rect {
        left: 0,
        top: 0,
        right: 800,
        bottom: 600,
    };

    proptest! {
        #[test]
        fn placed_labels_overlap_nothing_and_stay_inside(
            anchors in proptest::collection::vec((0i32..800, 0i32..600, 20i32..160), 0..40)
        ) {
            let labels: Vec<_> = anchors.iter().map(|&(x, y, w)| ((x, y), (w, 14))).collect();
            let markers: Vec<Rect> = anchors.iter().map(|&(x, y, _)| Rect::around((x, y), 5)).collect();
            let spots = place(&labels, &markers, AREA);
            let rects: Vec<Rect> = spots
                .iter()
                .zip(&labels)
                .filter_map(|(s, &(_, (w, h)))| s.map(|(l, t)| Rect { left: l, top: t, right: l + w, bottom: t + h }))
                .collect();
            for (i, a) in rects.iter().enumerate() {
                prop_assert!(a.inside(&AREA));
                prop_assert!(markers.iter().all(|m| !m.overlaps(a)));
                for b in &rects[i + 1..] {
                    prop_assert!(!a.overlaps(b), "{a:?} {b:?}");
                }
            }
        }
    }

    #[test]
    fn a_crowded_cluster_still_gets_every_label_a_spot_when_there_is_room() {
        // Five points a few pixels apart: stacked labels around them, none dropped.
        let labels: Vec<_> = (0..5).map(|i| ((400, 300 + 3 * i), (90, 14))).collect();
        let markers: Vec<Rect> = labels.iter().map(|&(p, _)| Rect::around(p, 5)).collect();
        let spots = place(&labels, &markers, AREA);
        assert!(spots.iter().all(Option::is_some), "{spots:?}");
    }
}
