//! Predicates of comparisons reach the device folded into the values they select (one leaf, or a ranges
//! program of up to 8 intervals, inverted when its holes are fewer, NaN decided on its own:
//! `src/pred/fold.rs`, `eval_ranges` in `cuda/core/predicate.cuh`); predicates with a bit test run as
//! written. Random predicate trees over constants drawn from the data, on data full of the type's edge
//! values (the extremes, ±0, ±inf, NaN, subnormals, neighbours of every constant), must select exactly
//! what the host evaluates, on both engines, through select_if, count_if and the in-place select.
mod common;

use common::{TestElement, gpu, same};
use lookback::half::{bf16, f16};
use lookback::{Element, Engine, Pred, Workspace, host};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// A random tree of at most `depth` levels: comparison leaves with constants from `palette`, the
/// type's own leaves (`extra`: NaN and finiteness tests, bit tests), and `&`, `|`, `!`.
fn random_pred<T: Element>(rng: &mut Rng, palette: &[T], extra: &[Pred<T>], depth: u32) -> Pred<T> {
    if depth == 0 || rng.below(3) == 0 {
        let c = palette[rng.below(palette.len())];
        return match rng.below(10) {
            0 => Pred::lt(c),
            1 => Pred::le(c),
            2 => Pred::gt(c),
            3 => Pred::ge(c),
            4 => Pred::eq(c),
            5 => Pred::ne(c),
            6 => Pred::between(c, palette[rng.below(palette.len())]),
            7 => Pred::always(),
            _ if extra.is_empty() => Pred::ne(c),
            _ => extra[rng.below(extra.len())].clone(),
        };
    }
    let l = random_pred(rng, palette, extra, depth - 1);
    match rng.below(5) {
        0 | 1 => l & random_pred(rng, palette, extra, depth - 1),
        2 | 3 => l | random_pred(rng, palette, extra, depth - 1),
        _ => !l,
    }
}

/// `palette` plus the values next to each (by bit pattern: the neighbours in the type's order away from
/// zero and towards it), so every bound is tested from both sides.
fn with_neighbours<T: Element>(palette: &[T]) -> Vec<T> {
    let mut v = palette.to_vec();
    for &x in palette {
        let b = x.to_bits();
        v.extend([T::from_bits(b.wrapping_add(1)), T::from_bits(b.wrapping_sub(1))]);
    }
    v
}

fn check<T: TestElement>(specials: &[T], extra: &[Pred<T>], seed: u64) {
    let Some(stream) = gpu() else { return };
    let mut rng = Rng(seed | 1);
    let mut palette: Vec<T> = specials.to_vec();
    let mut values = common::Rng::new(seed);
    palette.extend((0..8).map(|_| T::random(&mut values, 0.0)));
    let palette = with_neighbours(&palette);
    let mut ws = Workspace::new(&stream);
    // A few tiles of both engines, and a size that is not a multiple of anything.
    for n in [palette.len() * 3 + 1, 70_001] {
        let data: Vec<T> = (0..n).map(|_| palette[rng.below(palette.len())]).collect();
        let d_in = stream.clone_htod(&data).unwrap();
        for engine in [Engine::Classic, Engine::Persistent] {
            ws.set_engine(engine);
            for case in 0..60 {
                let p = random_pred(&mut rng, &palette, extra, 4);
                let want = host::select_if(&data, &p);
                let what = format!("{} n={n} {engine:?} case {case}: {p:?}", T::DTYPE.name());
                let mut out = common::upload_poisoned::<T>(&stream, n);
                let mut count = stream.clone_htod(&[u64::MAX]).unwrap();
                match ws.select_if_into(&d_in, &p, &mut out, &mut count) {
                    // A bit test keeps the program as written, which may be past the device's limits.
                    Err(lookback::Error::PredicateTooComplex { .. }) => continue,
                    r => r.unwrap(),
                }
                let k = stream.clone_dtoh(&count).unwrap()[0] as usize;
                same(&stream.clone_dtoh(&out).unwrap()[..k], &want, &format!("select_if {what}"));
                assert_eq!(ws.count_if(&d_in, &p).unwrap(), want.len(), "count_if {what}");
                if case % 8 == 0 {
                    let mut buf = stream.clone_htod(&data).unwrap();
                    let k = ws.select_if_in_place(&mut buf, &p).unwrap();
                    same(&stream.clone_dtoh(&buf).unwrap()[..k], &want, &format!("select_if_in_place {what}"));
                }
            }
        }
    }
}

fn bits<T: lookback::IntElement>(masks: &[T]) -> Vec<Pred<T>> {
    masks.iter().flat_map(|&m| [Pred::any_bits(m), Pred::all_bits(m)]).collect()
}

fn floats<T: lookback::FloatElement>() -> Vec<Pred<T>> {
    vec![Pred::is_nan(), Pred::is_finite(), !Pred::is_nan()]
}

#[test]
fn signed_integers() {
    check::<i8>(&[i8::MIN, -1, 0, 1, i8::MAX], &bits(&[1, 0x40]), 1);
    check::<i16>(&[i16::MIN, -2, 0, 7, i16::MAX], &bits(&[3]), 2);
    check::<i32>(&[i32::MIN, -1, 0, 500, i32::MAX], &bits(&[6]), 3);
    check::<i64>(&[i64::MIN, -1, 0, 1 << 40, i64::MAX], &bits(&[1 << 40]), 4);
}

#[test]
fn unsigned_integers() {
    check::<u8>(&[0, 1, 127, 128, u8::MAX], &bits(&[0x81]), 5);
    check::<u16>(&[0, 1, 0x8000, u16::MAX], &[], 6);
    check::<u32>(&[0, 1, 1 << 31, u32::MAX], &bits(&[5]), 7);
    check::<u64>(&[0, 1, 1 << 63, u64::MAX], &[], 8);
}

#[test]
fn floats_with_nan_zeros_and_infinities() {
    let f32s =
        [f32::NAN, f32::NEG_INFINITY, -f32::MAX, -1.5, -0.0, 0.0, f32::MIN_POSITIVE, 1e-45, f32::MAX, f32::INFINITY];
    check::<f32>(&f32s, &floats(), 9);
    let f64s = [f64::NAN, f64::NEG_INFINITY, -1e300, -0.0, 0.0, 5e-324, 2.5, f64::INFINITY];
    check::<f64>(&f64s, &floats(), 10);
    let f16s =
        [f16::NAN, f16::NEG_INFINITY, f16::MIN, f16::NEG_ZERO, f16::ZERO, f16::from_f32(0.1), f16::MAX, f16::INFINITY];
    check::<f16>(&f16s, &floats(), 11);
    let bf16s = [bf16::NAN, bf16::NEG_INFINITY, bf16::NEG_ZERO, bf16::ZERO, bf16::from_f32(3.0), bf16::INFINITY];
    check::<bf16>(&bf16s, &floats(), 12);
}

/// For compute-sanitizer (`run.sh sanitize test-pred_fold sanitizer_cases`): ranges programs of each
/// kind (plain, inverted, NaN decided on its own, more than four intervals) on both engines, at sizes
/// around a tile.
#[test]
fn sanitizer_cases_ranges() {
    let Some(stream) = gpu() else { return };
    let mut ws = Workspace::new(&stream);
    let ints = [
        Pred::lt(500i32) & (Pred::ne(-1) | Pred::eq(0)),
        Pred::ne(-1) & Pred::ne(-9999),
        (0..6).fold(Pred::eq(-50i32), |p, k| p | Pred::between(k * 100, k * 100 + 10)),
    ];
    let floats = [
        Pred::ne(1.0f32) & Pred::ne(2.0) & !Pred::is_nan(),
        Pred::lt(0.0f32) | Pred::is_nan() | Pred::between(10.0, 20.0),
    ];
    let t = lookback::__private::pipe_select_tile_items(4);
    for engine in [Engine::Classic, Engine::Persistent] {
        ws.set_engine(engine);
        for n in [1, 33, t - 1, t + 1, 3 * t + 7] {
            let mut values = common::Rng::new(n as u64);
            let data: Vec<i32> = (0..n).map(|_| (values.next_u64() % 1400) as i32 - 100).collect();
            for p in &ints {
                let mut buf = stream.clone_htod(&data).unwrap();
                let k = ws.select_if_in_place(&mut buf, p).unwrap();
                same(&stream.clone_dtoh(&buf).unwrap()[..k], &host::select_if(&data, p), &format!("{p:?} n={n}"));
            }
            let data: Vec<f32> = data.iter().map(|&x| if x % 7 == 0 { f32::NAN } else { x as f32 / 10.0 }).collect();
            let d = stream.clone_htod(&data).unwrap();
            for p in &floats {
                assert_eq!(ws.count_if(&d, p).unwrap(), host::count_if(&data, p));
            }
        }
    }
}
