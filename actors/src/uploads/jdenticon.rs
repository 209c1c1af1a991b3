//! Jdenticon avatars (Zulip 12, feature levels 456 and 466): an icon drawn from the SHA-1 of
//! `{realm_uuid}:{user_id}` with Jdenticon's design (a 4×4 grid: eight side cells, four
//! corners and four center cells, each group one shape, rotated, in one of five colors
//! derived from a hue), with the settings Zulip draws them with: no padding, a transparent
//! background, lightness 0.3–0.7 for colors and grays. Clients that draw Jdenticons
//! themselves from `realm_uuid` get the same icon.
//!
//! Each group of shapes is one path filled with the non-zero winding rule (so an inverted
//! shape cuts a hole), rasterized here with exact horizontal coverage on four sub-scanlines
//! per pixel row, and composited in order on a transparent PNG.

use sha1::{Digest, Sha1};

/// Zulip's sizes: the avatar and its `-medium` variant.
pub const SIZES: [u32; 2] = [100, 500];

/// Circles are drawn as polygons of this many sides.
const CIRCLE_STEPS: usize = 64;

/// Sub-scanlines per pixel row.
const SUBROWS: usize = 4;

/// The seed of a user's icon: `{realm_uuid}:{user_id}`.
pub fn seed(realm_uuid: &str, user_id: i64) -> String {
    format!("{realm_uuid}:{user_id}")
}

/// The icon of `seed`, `size` pixels square, as a PNG.
pub fn png(seed: &str, size: u32) -> Vec<u8> {
    let rgba = render(&hash_of(seed), size);
    let mut out = Vec::new();
    let image = image::RgbaImage::from_raw(size, size, rgba).unwrap_or_default();
    // Writing to memory fails only on an empty image.
    let _ = image.write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png);
    out
}

/// The lowercase hex SHA-1 of `seed`.
fn hash_of(seed: &str) -> Vec<u8> {
    Sha1::digest(seed.as_bytes()).iter().flat_map(|b| [b >> 4, b & 0xf]).collect()
}

/// The number written by the hex digits of `hash` from `at`, `len` of them.
fn digits(hash: &[u8], at: usize, len: usize) -> u32 {
    hash[at..at + len].iter().fold(0, |n, d| n * 16 + u32::from(*d))
}

/// An RGB color.
type Rgb = [u8; 3];

/// HSL to RGB (CSS3's conversion), each channel truncated as Jdenticon's hex strings are.
fn hsl(hue: f64, saturation: f64, lightness: f64) -> Rgb {
    let channel = |v: f64| (255.0 * v).clamp(0.0, 255.0) as u8;
    if saturation == 0.0 {
        let v = channel(lightness);
        return [v, v, v];
    }
    let m2 =
        if lightness <= 0.5 { lightness * (saturation + 1.0) } else { lightness + saturation - lightness * saturation };
    let m1 = lightness * 2.0 - m2;
    let part = |h: f64| {
        let h = if h < 0.0 {
            h + 6.0
        } else if h > 6.0 {
            h - 6.0
        } else {
            h
        };
        channel(if h < 1.0 {
            m1 + (m2 - m1) * h
        } else if h < 3.0 {
            m2
        } else if h < 4.0 {
            m1 + (m2 - m1) * (4.0 - h)
        } else {
            m1
        })
    };
    [part(hue * 6.0 + 2.0), part(hue * 6.0), part(hue * 6.0 - 2.0)]
}

/// HSL with the lightness corrected for how light each hue looks.
fn corrected_hsl(hue: f64, saturation: f64, lightness: f64) -> Rgb {
    const MIDDLES: [f64; 7] = [0.55, 0.5, 0.5, 0.46, 0.6, 0.55, 0.55];
    let middle = MIDDLES[((hue * 6.0 + 0.5) as usize).min(6)];
    let lightness =
        if lightness < 0.5 { lightness * middle * 2.0 } else { middle + (lightness - 0.5) * (1.0 - middle) * 2.0 };
    hsl(hue, saturation, lightness)
}

/// The five candidate colors of a hue: dark gray, mid color, light gray, light color, dark
/// color (Zulip's lightness range 0.3–0.7 for both; saturation 0.5 and 0).
fn palette(hue: f64) -> [Rgb; 5] {
    let light = |v: f64| 0.3 + v * 0.4;
    [
        corrected_hsl(hue, 0.0, light(0.0)),
        corrected_hsl(hue, 0.5, light(0.5)),
        corrected_hsl(hue, 0.0, light(1.0)),
        corrected_hsl(hue, 0.5, light(1.0)),
        corrected_hsl(hue, 0.5, light(0.0)),
    ]
}

/// The palette indexes of the three groups (sides, corners, center): never both dark
/// grays and dark colors, nor both light ones (the mid color instead).
fn chosen_colors(hash: &[u8]) -> [usize; 3] {
    let mut chosen: Vec<usize> = Vec::with_capacity(3);
    for i in 0..3 {
        let mut index = digits(hash, 8 + i, 1) as usize % 5;
        let clashes = |pair: [usize; 2]| pair.contains(&index) && pair.iter().any(|p| chosen.contains(p));
        if clashes([0, 4]) || clashes([2, 3]) {
            index = 1;
        }
        chosen.push(index);
    }
    [chosen[0], chosen[1], chosen[2]]
}

/// A closed outline in pixels; its direction decides whether it fills or cuts.
type Outline = Vec<(f64, f64)>;

/// Where a cell is drawn: its corner, size and quarter turns clockwise.
#[derive(Clone, Copy)]
struct Cell {
    x: f64,
    y: f64,
    size: f64,
    turns: u32,
}

impl Cell {
    /// A point of the cell's own coordinates in the icon; with `w` and `h`, the corner of a
    /// box of that size that stays its upper left one after the turn.
    fn place(&self, x: f64, y: f64, w: f64, h: f64) -> (f64, f64) {
        let (right, bottom) = (self.x + self.size, self.y + self.size);
        match self.turns % 4 {
            1 => (right - y - h, self.y + x),
            2 => (right - x - w, bottom - y - h),
            3 => (self.x + y, bottom - x - w),
            _ => (self.x + x, self.y + y),
        }
    }
}

/// The outlines of one group, in one color.
struct Pen {
    cell: Cell,
    outlines: Vec<Outline>,
}

impl Pen {
    /// A polygon given clockwise; `cut` reverses it into a hole.
    fn polygon(&mut self, points: &[(f64, f64)], cut: bool) {
        let mut outline: Outline = points.iter().map(|(x, y)| self.cell.place(*x, *y, 0.0, 0.0)).collect();
        if cut {
            outline.reverse();
        }
        self.outlines.push(outline);
    }

    fn rectangle(&mut self, x: f64, y: f64, w: f64, h: f64, cut: bool) {
        self.polygon(&[(x, y), (x + w, y), (x + w, y + h), (x, y + h)], cut);
    }

    /// A right triangle in the box `x, y, w, h`, its right angle at corner `r` (0: lower
    /// left, then clockwise).
    fn triangle(&mut self, x: f64, y: f64, w: f64, h: f64, r: usize) {
        let mut corners = vec![(x + w, y), (x + w, y + h), (x, y + h), (x, y)];
        corners.remove(r % 4);
        self.polygon(&corners, false);
    }

    fn rhombus(&mut self, x: f64, y: f64, w: f64, h: f64, cut: bool) {
        self.polygon(&[(x + w / 2.0, y), (x + w, y + h / 2.0), (x + w / 2.0, y + h), (x, y + h / 2.0)], cut);
    }

    /// A circle of diameter `d` in the box at `x, y`.
    fn circle(&mut self, x: f64, y: f64, d: f64, cut: bool) {
        let (left, top) = self.cell.place(x, y, d, d);
        let r = d / 2.0;
        let mut outline: Outline = (0..CIRCLE_STEPS)
            .map(|i| {
                let t = i as f64 * std::f64::consts::TAU / CIRCLE_STEPS as f64;
                (left + r + r * t.cos(), top + r + r * t.sin())
            })
            .collect();
        if cut {
            outline.reverse();
        }
        self.outlines.push(outline);
    }
}

/// Truncation toward zero, as JavaScript's `0 | x`.
fn trunc(x: f64) -> f64 {
    x.trunc()
}

/// One of the fourteen center shapes; the last is drawn in the first position only.
fn center_shape(pen: &mut Pen, index: u32, cell: f64, position: usize) {
    match index % 14 {
        0 => {
            let k = cell * 0.42;
            pen.polygon(&[(0.0, 0.0), (cell, 0.0), (cell, cell - k * 2.0), (cell - k, cell), (0.0, cell)], false);
        }
        1 => {
            let (w, h) = (trunc(cell * 0.5), trunc(cell * 0.8));
            pen.triangle(cell - w, 0.0, w, h, 2);
        }
        2 => {
            let w = trunc(cell / 3.0);
            pen.rectangle(w, w, cell - w, cell - w, false);
        }
        3 => {
            let outer = if cell < 6.0 {
                1.0
            } else if cell < 8.0 {
                2.0
            } else {
                trunc(cell * 0.25)
            };
            let inner = cell * 0.1;
            let inner = if inner > 1.0 {
                trunc(inner)
            } else if inner > 0.5 {
                1.0
            } else {
                inner
            };
            pen.rectangle(outer, outer, cell - inner - outer, cell - inner - outer, false);
        }
        4 => {
            let (m, w) = (trunc(cell * 0.15), trunc(cell * 0.5));
            pen.circle(cell - w - m, cell - w - m, w, false);
        }
        5 => {
            let inner = cell * 0.1;
            let outer = if inner * 4.0 > 3.0 { trunc(inner * 4.0) } else { inner * 4.0 };
            pen.rectangle(0.0, 0.0, cell, cell, false);
            let apex = outer + (cell - outer - inner) / 2.0;
            pen.polygon(&[(outer, outer), (cell - inner, outer), (apex, cell - inner)], true);
        }
        6 => pen.polygon(
            &[(0.0, 0.0), (cell, 0.0), (cell, cell * 0.7), (cell * 0.4, cell * 0.4), (cell * 0.7, cell), (0.0, cell)],
            false,
        ),
        7 | 11 => pen.triangle(cell / 2.0, cell / 2.0, cell / 2.0, cell / 2.0, 3),
        8 => {
            pen.rectangle(0.0, 0.0, cell, cell / 2.0, false);
            pen.rectangle(0.0, cell / 2.0, cell / 2.0, cell / 2.0, false);
            pen.triangle(cell / 2.0, cell / 2.0, cell / 2.0, cell / 2.0, 1);
        }
        9 => {
            let outer = if cell < 4.0 {
                1.0
            } else if cell < 6.0 {
                2.0
            } else {
                trunc(cell * 0.35)
            };
            let inner = if cell < 8.0 { cell * 0.14 } else { trunc(cell * 0.14) };
            pen.rectangle(0.0, 0.0, cell, cell, false);
            pen.rectangle(outer, outer, cell - outer - inner, cell - outer - inner, true);
        }
        10 => {
            let inner = cell * 0.12;
            let outer = inner * 3.0;
            pen.rectangle(0.0, 0.0, cell, cell, false);
            pen.circle(outer, outer, cell - inner - outer, true);
        }
        12 => {
            let m = cell * 0.25;
            pen.rectangle(0.0, 0.0, cell, cell, false);
            pen.rhombus(m, m, cell - m, cell - m, true);
        }
        _ => {
            if position == 0 {
                pen.circle(cell * 0.4, cell * 0.4, cell * 1.2, false);
            }
        }
    }
}

/// One of the four shapes of the sides and corners.
fn outer_shape(pen: &mut Pen, index: u32, cell: f64) {
    match index % 4 {
        0 => pen.triangle(0.0, 0.0, cell, cell, 0),
        1 => pen.triangle(0.0, cell / 2.0, cell, cell / 2.0, 0),
        2 => pen.rhombus(0.0, 0.0, cell, cell, false),
        _ => {
            let m = cell / 6.0;
            pen.circle(m, m, cell - 2.0 * m, false);
        }
    }
}

/// Draws a shape of a group in one cell: the pen, the shape's number, the cell's size and
/// the cell's place in the group.
type Draw = fn(&mut Pen, u32, f64, usize);

/// A group of cells drawn in one color: how its shape is drawn, where the hash gives its
/// shape and first turn, and its cells (column, row) in turn order.
struct Group {
    draw: Draw,
    shape_at: usize,
    turn_at: Option<usize>,
    positions: &'static [(f64, f64)],
}

const SIDES: [(f64, f64); 8] = [(1., 0.), (2., 0.), (2., 3.), (1., 3.), (0., 1.), (3., 1.), (3., 2.), (0., 2.)];
const CORNERS: [(f64, f64); 4] = [(0., 0.), (3., 0.), (3., 3.), (0., 3.)];
const CENTER: [(f64, f64); 4] = [(1., 1.), (2., 1.), (2., 2.), (1., 2.)];

/// The icon of `hash` as RGBA pixels.
fn render(hash: &[u8], size: u32) -> Vec<u8> {
    let icon = f64::from(size);
    let cell = trunc(icon / 4.0);
    let origin = trunc(icon / 2.0 - cell * 2.0);
    let colors = palette(f64::from(digits(hash, hash.len() - 7, 7)) / f64::from(0xfffffff_u32));
    let chosen = chosen_colors(hash);
    let mut pixels = vec![0u8; (size * size * 4) as usize];
    let outer: Draw = |pen, index, cell, _| outer_shape(pen, index, cell);
    let groups = [
        Group { draw: outer, shape_at: 2, turn_at: Some(3), positions: &SIDES },
        Group { draw: outer, shape_at: 4, turn_at: Some(5), positions: &CORNERS },
        Group { draw: center_shape, shape_at: 1, turn_at: None, positions: &CENTER },
    ];
    for (group, Group { draw, shape_at, turn_at, positions }) in groups.into_iter().enumerate() {
        let shape = digits(hash, shape_at, 1);
        let first_turn = turn_at.map_or(0, |at| digits(hash, at, 1));
        let mut pen = Pen { cell: Cell { x: 0.0, y: 0.0, size: cell, turns: 0 }, outlines: Vec::new() };
        for (i, (cx, cy)) in positions.iter().enumerate() {
            pen.cell = Cell { x: origin + cx * cell, y: origin + cy * cell, size: cell, turns: first_turn + i as u32 };
            draw(&mut pen, shape, cell, i);
        }
        fill(&mut pixels, size as usize, &pen.outlines, colors[chosen[group]]);
    }
    pixels
}

/// Fills `outlines` (non-zero winding) in `color` over `pixels`, anti-aliased.
fn fill(pixels: &mut [u8], size: usize, outlines: &[Outline], color: Rgb) {
    let edges: Vec<((f64, f64), (f64, f64))> = outlines
        .iter()
        .flat_map(|o| o.iter().zip(o.iter().cycle().skip(1)).map(|(a, b)| (*a, *b)))
        .filter(|(a, b)| a.1 != b.1)
        .collect();
    let mut coverage = vec![0f64; size];
    for row in 0..size {
        coverage.iter_mut().for_each(|c| *c = 0.0);
        for sub in 0..SUBROWS {
            let y = row as f64 + (sub as f64 + 0.5) / SUBROWS as f64;
            let mut crossings: Vec<(f64, i32)> = edges
                .iter()
                .filter(|(a, b)| (a.1 <= y) != (b.1 <= y))
                .map(|(a, b)| (a.0 + (y - a.1) * (b.0 - a.0) / (b.1 - a.1), if b.1 > a.1 { 1 } else { -1 }))
                .collect();
            crossings.sort_by(|p, q| p.0.total_cmp(&q.0));
            let mut winding = 0;
            for pair in crossings.windows(2) {
                winding += pair[0].1;
                if winding != 0 {
                    cover(&mut coverage, pair[0].0, pair[1].0, 1.0 / SUBROWS as f64);
                }
            }
        }
        for (x, c) in coverage.iter().enumerate() {
            let alpha = c.clamp(0.0, 1.0);
            if alpha > 0.0 {
                blend(&mut pixels[(row * size + x) * 4..][..4], color, alpha);
            }
        }
    }
}

/// Adds `weight` times the part of each pixel of the row between `from` and `to`.
fn cover(coverage: &mut [f64], from: f64, to: f64, weight: f64) {
    let (from, to) = (from.max(0.0), to.min(coverage.len() as f64));
    if to <= from {
        return;
    }
    let (first, last) = (from.floor() as usize, (to.ceil() as usize).min(coverage.len()));
    for (x, c) in coverage.iter_mut().enumerate().take(last).skip(first) {
        let part = (to.min(x as f64 + 1.0) - from.max(x as f64)).max(0.0);
        *c += part * weight;
    }
}

/// Paints `color` at `alpha` over a premultiplied-free RGBA pixel ("source over").
fn blend(pixel: &mut [u8], color: Rgb, alpha: f64) {
    let below = f64::from(pixel[3]) / 255.0;
    let out = alpha + below * (1.0 - alpha);
    if out <= 0.0 {
        return;
    }
    for i in 0..3 {
        let mixed = (f64::from(color[i]) * alpha + f64::from(pixel[i]) * below * (1.0 - alpha)) / out;
        pixel[i] = mixed.round() as u8;
    }
    pixel[3] = (out * 255.0).round() as u8;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_hash_and_colors_follow_jdenticon() {
        assert_eq!(seed("6f1d2f8e-0000-4000-8000-000000000001", 18), "6f1d2f8e-0000-4000-8000-000000000001:18");
        // SHA-1 of "abc".
        let hash: String = hash_of("abc").iter().map(|d| char::from_digit(u32::from(*d), 16).unwrap()).collect();
        assert_eq!(hash, "a9993e364706816aba3e25717850c26c9cd0d89d");
        // CSS3's hsl(0, 100%, 50%) is red; saturation 0 is a gray.
        assert_eq!(hsl(0.0, 1.0, 0.5), [255, 0, 0]);
        assert_eq!(hsl(0.5, 0.0, 0.5), [127, 127, 127]);
        // Never two dark or two light colors together.
        for seed in 0..200 {
            let chosen = chosen_colors(&hash_of(&seed.to_string()));
            assert!(!(chosen.contains(&0) && chosen.contains(&4)), "{chosen:?}");
            assert!(!(chosen.contains(&2) && chosen.contains(&3)), "{chosen:?}");
        }
    }

    #[test]
    fn a_quarter_turn_keeps_a_box_in_its_cell() {
        let cell = Cell { x: 10.0, y: 20.0, size: 8.0, turns: 0 };
        for turns in 0..4 {
            let turned = Cell { turns, ..cell };
            let (x, y) = turned.place(1.0, 2.0, 3.0, 3.0);
            assert!((10.0..=18.0).contains(&x) && (20.0..=28.0).contains(&y), "{turns}: {x},{y}");
        }
        assert_eq!(Cell { turns: 1, ..cell }.place(0.0, 0.0, 0.0, 0.0), (18.0, 20.0));
        assert_eq!(Cell { turns: 2, ..cell }.place(0.0, 0.0, 0.0, 0.0), (18.0, 28.0));
        assert_eq!(Cell { turns: 3, ..cell }.place(0.0, 0.0, 0.0, 0.0), (10.0, 28.0));
    }

    #[test]
    fn icons_are_symmetric_pngs_that_differ_by_seed() {
        let a = render(&hash_of("realm:1"), 100);
        let b = render(&hash_of("realm:2"), 100);
        assert_ne!(a, b);
        // Something is drawn, and transparency remains.
        let alphas: Vec<u8> = a.chunks(4).map(|p| p[3]).collect();
        assert!(alphas.contains(&255) && alphas.contains(&0));
        // The side and corner groups turn with the grid: the icon has a four-fold turn
        // symmetry in its painted area.
        let painted = |x: usize, y: usize| a[(y * 100 + x) * 4 + 3] > 128;
        let (mut same, mut total) = (0, 0);
        for y in 0..100 {
            for x in 0..100 {
                total += 1;
                if painted(x, y) == painted(99 - y, x) {
                    same += 1;
                }
            }
        }
        assert!(same * 100 / total >= 97, "{same}/{total}");
        let bytes = png("realm:1", 500);
        let decoded = image::load_from_memory(&bytes).unwrap();
        assert_eq!((decoded.width(), decoded.height()), (500, 500));
    }
}
