//! The table filter (`lookback::table`): the host references, compiles of every decision without a GPU
//! (NVRTC on the host), the typed errors, and on the GPU every decision (mask, built-in `Pred`,
//! `UserPred`, `UserPred2`) over 1 to 8 columns of mixed sizes against the host reference, at
//! selectivities 0 %, 1 %, 50 %, 100 % and in long runs, at sizes around the tile (0, 1, t - 1, t, t + 1,
//! several tiles and an odd remainder), with unaligned views, row indices, counts only, device-sized calls
//! (`with_count`), a CUDA graph replay, poisoned outputs and nothing written past the count.
//!
//! The GPU tests run one at a time (`serial`): the graph test's capture turns cudarc's event tracking off
//! for the whole context.
mod common;

use common::{Pattern, Rng, gpu, nvrtc};
use lookback::cudarc::driver::{CudaSlice, CudaStream, CudaView};
use lookback::half::f16;
use lookback::rtc::{DeviceType, UserPred, UserPred2};
use lookback::table::{ColumnMut, ColumnRef, FilterBy};
use lookback::{Error, Pred, Workspace, host};
use std::sync::{Arc, Mutex, MutexGuard};

fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Rows of a tile when the widest column has `bytes` bytes: the selection tile of that size.
fn tile(bytes: usize) -> usize {
    lookback::__private::select_tile_items(bytes)
}

/// The sizes every decision is tested at: empty, one row, both sides of a tile, several tiles and an odd
/// remainder.
fn sizes(bytes: usize) -> Vec<usize> {
    let t = tile(bytes);
    vec![0, 1, t - 1, t, t + 1, 3 * t + 17]
}

// ---------------------------------------------------------------------------------------------------
// Columns of mixed types, on the host and on the device.

/// A host column of one of the tested types.
#[derive(Clone, Debug)]
enum HostCol {
    U8(Vec<u8>),
    I16(Vec<i16>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    U64(Vec<u64>),
}

/// The same on the device.
enum DevCol {
    U8(CudaSlice<u8>),
    I16(CudaSlice<i16>),
    F32(CudaSlice<f32>),
    F64(CudaSlice<f64>),
    U64(CudaSlice<u64>),
}

macro_rules! each_dev {
    ($v:expr, $x:ident => $e:expr) => {
        match $v {
            DevCol::U8($x) => $e,
            DevCol::I16($x) => $e,
            DevCol::F32($x) => $e,
            DevCol::F64($x) => $e,
            DevCol::U64($x) => $e,
        }
    };
}

/// The five kinds, by index (u8, i16, f32, f64, u64: 1, 2, 4, 8 and 8 bytes).
const KINDS: usize = 5;

impl HostCol {
    /// Random data of kind `kind`: integers over their whole range, floats with a few NaN and -0.0.
    fn random(kind: usize, n: usize, seed: u64) -> Self {
        let mut rng = Rng::new(seed);
        let mut f = || {
            let u = rng.unit();
            if u < 0.01 {
                f64::NAN
            } else if u < 0.02 {
                -0.0
            } else {
                rng.unit() * 200.0 - 100.0
            }
        };
        match kind % KINDS {
            0 => HostCol::U8((0..n).map(|i| (i as u64).wrapping_mul(0x9E37_79B9) as u8 ^ (seed as u8)).collect()),
            1 => HostCol::I16((0..n).map(|i| (i as i64 * 7919 - 40000 + seed as i64) as i16).collect()),
            2 => HostCol::F32((0..n).map(|_| f() as f32).collect()),
            3 => HostCol::F64((0..n).map(|_| f()).collect()),
            _ => HostCol::U64((0..n).map(|i| (i as u64).wrapping_mul(0x2545_F491_4F6C_DD1D) ^ seed).collect()),
        }
    }

    fn bytes(&self) -> usize {
        match self {
            HostCol::U8(_) => 1,
            HostCol::I16(_) => 2,
            HostCol::F32(_) => 4,
            HostCol::F64(_) | HostCol::U64(_) => 8,
        }
    }

    /// Each item's bits (floats compare by bits: NaN and -0.0 must arrive as they were).
    fn bits(&self) -> Vec<u64> {
        match self {
            HostCol::U8(v) => v.iter().map(|&x| x as u64).collect(),
            HostCol::I16(v) => v.iter().map(|&x| x as u16 as u64).collect(),
            HostCol::F32(v) => v.iter().map(|&x| x.to_bits() as u64).collect(),
            HostCol::F64(v) => v.iter().map(|&x| x.to_bits()).collect(),
            HostCol::U64(v) => v.clone(),
        }
    }

    fn upload(&self, stream: &Arc<CudaStream>) -> DevCol {
        match self {
            HostCol::U8(v) => DevCol::U8(stream.clone_htod(v).unwrap()),
            HostCol::I16(v) => DevCol::I16(stream.clone_htod(v).unwrap()),
            HostCol::F32(v) => DevCol::F32(stream.clone_htod(v).unwrap()),
            HostCol::F64(v) => DevCol::F64(stream.clone_htod(v).unwrap()),
            HostCol::U64(v) => DevCol::U64(stream.clone_htod(v).unwrap()),
        }
    }

    /// An output for this column: `len` rows of poison.
    fn poisoned(&self, stream: &Arc<CudaStream>, len: usize) -> DevCol {
        match self {
            HostCol::U8(_) => DevCol::U8(stream.clone_htod(&vec![0xA5u8; len]).unwrap()),
            HostCol::I16(_) => DevCol::I16(stream.clone_htod(&vec![-0x5A5Ai16; len]).unwrap()),
            HostCol::F32(_) => DevCol::F32(stream.clone_htod(&vec![-12345.678f32; len]).unwrap()),
            HostCol::F64(_) => DevCol::F64(stream.clone_htod(&vec![-12345.678f64; len]).unwrap()),
            HostCol::U64(_) => DevCol::U64(stream.clone_htod(&vec![0xDEAD_BEEF_0BAD_F00Du64; len]).unwrap()),
        }
    }
}

impl DevCol {
    fn as_ref(&self) -> ColumnRef<'_> {
        each_dev!(self, b => ColumnRef::new(b))
    }
    fn as_mut(&mut self) -> ColumnMut<'_> {
        each_dev!(self, b => ColumnMut::new(b))
    }
    fn download(&self, stream: &Arc<CudaStream>) -> HostCol {
        match self {
            DevCol::U8(b) => HostCol::U8(stream.clone_dtoh(b).unwrap()),
            DevCol::I16(b) => HostCol::I16(stream.clone_dtoh(b).unwrap()),
            DevCol::F32(b) => HostCol::F32(stream.clone_dtoh(b).unwrap()),
            DevCol::F64(b) => HostCol::F64(stream.clone_dtoh(b).unwrap()),
            DevCol::U64(b) => HostCol::U64(stream.clone_dtoh(b).unwrap()),
        }
    }
}

/// Checks an output column: the kept rows of `input` at its front, the poison `before` left after them.
fn check_column(what: &str, input: &HostCol, kept: &[usize], got: &HostCol, before: &HostCol) {
    let (input, got, before) = (input.bits(), got.bits(), before.bits());
    for (j, &row) in kept.iter().enumerate() {
        assert_eq!(got[j], input[row], "{what}: output {j} (row {row}) of {}", kept.len());
    }
    if let Some(j) = (kept.len()..got.len()).find(|&j| got[j] != before[j]) {
        panic!("{what}: output {j} past the count {} was written", kept.len());
    }
}

/// Uploads `inputs`, filters them by `by_of(...)` into poisoned outputs (two rows longer than needed),
/// and checks the count and every column against the kept rows `kept`.
fn run_and_check(
    stream: &Arc<CudaStream>,
    ws: &mut Workspace,
    what: &str,
    inputs: &[HostCol],
    by: &FilterBy<'_>,
    kept: &[usize],
) {
    let n = by.rows();
    let dev: Vec<DevCol> = inputs.iter().map(|c| c.upload(stream)).collect();
    let mut outs: Vec<DevCol> = inputs.iter().map(|c| c.poisoned(stream, n + 2)).collect();
    let poison: Vec<HostCol> = outs.iter().map(|o| o.download(stream)).collect();
    let mut count = stream.clone_htod(&[0xBADu64]).unwrap();
    {
        let refs: Vec<ColumnRef<'_>> = dev.iter().map(DevCol::as_ref).collect();
        let mut muts: Vec<ColumnMut<'_>> = outs.iter_mut().map(DevCol::as_mut).collect();
        ws.filter_columns_into(&refs, &mut muts, by, &mut count).unwrap_or_else(|e| panic!("{what}: {e}"));
    }
    let got = stream.clone_dtoh(&count).unwrap()[0] as usize;
    assert_eq!(got, kept.len(), "{what}: count");
    for (c, (input, out)) in inputs.iter().zip(&outs).enumerate() {
        check_column(&format!("{what}: column {c}"), input, kept, &out.download(stream), &poison[c]);
    }
}

/// A mix of `columns` columns cycling through the kinds from `first`.
fn mixed(columns: usize, first: usize, n: usize, seed: u64) -> Vec<HostCol> {
    (0..columns).map(|c| HostCol::random(first + c, n, seed + c as u64)).collect()
}

fn widest(cols: &[HostCol], decision_bytes: usize) -> usize {
    cols.iter().map(HostCol::bytes).fold(decision_bytes, usize::max)
}

// ---------------------------------------------------------------------------------------------------
// Host references.

#[test]
fn host_references_agree_with_the_selection_references() {
    let ids: Vec<u32> = (0..1000).collect();
    let vals: Vec<u32> = (0..1000).map(|i| i * 7 % 13).collect();
    let mask: Vec<bool> = Pattern::Half.mask(1000, 3);
    let kept = host::filter_columns(&[&ids, &vals], |i| mask[i]).unwrap();
    assert_eq!(kept[0], host::select_flagged(&ids, &mask).unwrap());
    assert_eq!(kept[1], host::select_flagged(&vals, &mask).unwrap());
    assert_eq!(host::filter_rows(1000, |i| mask[i]).len(), kept[0].len());
    assert!(matches!(
        host::filter_columns(&[&ids[..], &vals[..999]], |_| true),
        Err(Error::LengthMismatch { what: "column", expected: 1000, actual: 999 })
    ));
    assert_eq!(host::filter_columns::<u8>(&[], |_| true).unwrap(), Vec::<Vec<u8>>::new());
    // SAFETY: a pure expression of a and b.
    let greater = unsafe { UserPred2::new("a > b", |a: f32, b: f64| a as f64 > b) }.unwrap();
    let (a, b) = ([1.0f32, 3.0, f32::NAN, 2.0], [0.5f64, 4.0, 1.0, 2.0]);
    assert_eq!(host::select_if2(&a, &b, &greater).unwrap(), [0]);
    assert_eq!(host::count_if2(&a, &b, &greater).unwrap(), 1);
    assert!(matches!(
        host::select_if2(&a, &b[..3], &greater),
        Err(Error::LengthMismatch { what: "second predicate column", .. })
    ));
}

// ---------------------------------------------------------------------------------------------------
// Compiles without a GPU (NVRTC on the host).

#[test]
fn every_decision_compiles_for_sm_90() {
    if !nvrtc() {
        return;
    }
    use lookback::__private::{table_mask_for_arch, table_pred_for_arch, table_pred2_for_arch};
    // Every column size and both index widths, mask-decided; a count only; eight columns.
    table_mask_for_arch(&[1, 2, 4, 8, -4, -8], "sm_90").unwrap();
    table_mask_for_arch(&[], "sm_90").unwrap();
    table_mask_for_arch(&[1, 1], "sm_80").unwrap();
    table_mask_for_arch(&[8, 1, 2, 4, 8, 4, 2, 1], "sm_90").unwrap();
    // The built-in predicate interpreter over each width, with 1-byte columns (the 32-row tile).
    table_pred_for_arch(&Pred::gt(3u8), &[1, 2, -8], "sm_90").unwrap();
    table_pred_for_arch(&(Pred::lt(0i16) | Pred::eq(7)), &[2], "sm_90").unwrap();
    table_pred_for_arch(&Pred::between(0.0f64, 1.0), &[1], "sm_90").unwrap();
    table_pred_for_arch(&Pred::<f32>::is_nan(), &[4, -4], "sm_90").unwrap();
    // SAFETY: pure expressions of their arguments.
    let odd = unsafe { UserPred::new("(x & 1) != 0", |x: u64| x & 1 != 0) }.unwrap();
    table_pred_for_arch(&odd, &[1, 8], "sm_90").unwrap();
    let above = unsafe { UserPred2::new("a > b", |a: f32, b: f64| a as f64 > b) }.unwrap();
    table_pred2_for_arch(&above, &[1, 2, 4, 8, -8], "sm_90").unwrap();
    above.compile_for_arch("sm_90").unwrap();
    let bytes = unsafe { UserPred2::new("a < b", |a: u8, b: i16| (a as i16) < b) }.unwrap();
    table_pred2_for_arch(&bytes, &[1, 2], "sm_90").unwrap();
    // A struct column in the decision (its declaration and layout checks go into the program).
    let sum_above =
        unsafe { UserPred2::new("(uint32_t)a.x + a.y > b", |a: Pair, b: u32| a.x as u32 + a.y as u32 > b) }.unwrap();
    table_pred2_for_arch(&sum_above, &[4, -8], "sm_90").unwrap();
}

#[test]
fn f16_predicates_compile_with_the_cuda_headers() {
    if !nvrtc() || std::env::var_os("LOOKBACK_CUDA_INCLUDE").is_none() {
        return;
    }
    // SAFETY: a pure expression of a and b.
    let p = unsafe { UserPred2::new("__hgt(a, b)", |a: f16, b: f16| a > b) }.unwrap();
    lookback::__private::table_pred2_for_arch(&p, &[2], "sm_90").unwrap();
    lookback::__private::table_pred_for_arch(&Pred::gt(f16::from_f32(1.0)), &[2], "sm_90").unwrap();
}

/// A 16-byte type: too wide for a column of the table filter.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct Wide {
    a: u64,
    b: u64,
}
// SAFETY: #[repr(C)], no padding, every bit pattern valid; the CUDA struct has the same layout.
unsafe impl lookback::cudarc::driver::DeviceRepr for Wide {}
unsafe impl DeviceType for Wide {
    const CUDA_NAME: &'static str = "Wide";
    const CUDA_DECL: &'static str = "struct Wide { uint64_t a; uint64_t b; };";
}

/// A 4-byte struct whose CUDA declaration is wrong (8 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct Pair16 {
    x: u16,
    y: u16,
}
// SAFETY: #[repr(C)], no padding, every bit pattern valid. The CUDA declaration is deliberately wrong:
// the test checks that the compile reports it (nothing runs).
unsafe impl lookback::cudarc::driver::DeviceRepr for Pair16 {}
unsafe impl DeviceType for Pair16 {
    const CUDA_NAME: &'static str = "Pair16";
    const CUDA_DECL: &'static str = "struct Pair16 { uint32_t x; uint32_t y; };";
}

#[test]
fn bad_code_and_types_are_typed_errors_at_compile() {
    if !nvrtc() {
        return;
    }
    // SAFETY: never runs (it does not compile).
    let bad = unsafe { UserPred2::new("a > nope", |a: i32, b: i32| a > b) }.unwrap();
    match bad.compile_for_arch("sm_90") {
        Err(Error::Compile { line, .. }) => assert_eq!(line, Some((1, "a > nope".to_string()))),
        other => panic!("{other:?}"),
    }
    // SAFETY: pure, never runs.
    let wide = unsafe { UserPred2::new("a.a > b", |a: Wide, b: u64| a.a > b) }.unwrap();
    assert!(matches!(
        wide.compile_for_arch("sm_90"),
        Err(Error::UnsupportedSize { role: "first predicate column", bytes: 16, .. })
    ));
    // SAFETY: pure, never runs (the layout check fails first).
    let lying = unsafe { UserPred2::new("a.x > b", |a: Pair16, b: u16| a.x > b) }.unwrap();
    assert!(matches!(
        lying.compile_for_arch("sm_90"),
        Err(Error::LayoutMismatch { rust_size: 4, cuda_size: Some(8), .. })
    ));
    assert!(matches!(bad.compile_for_arch("90"), Err(Error::InvalidSource { .. })));
    // SAFETY: an empty expression is refused before anything else.
    assert!(matches!(unsafe { UserPred2::new("  ", |_: u8, _: u8| true) }, Err(Error::InvalidSource { .. })));
}

// ---------------------------------------------------------------------------------------------------
// On the GPU.

/// The GPU stream when the GPU tests can run (a GPU and NVRTC), else `None` after a visible skip.
fn device() -> Option<Arc<CudaStream>> {
    let stream = gpu()?;
    nvrtc().then_some(stream)
}

#[test]
fn mask_filters_one_to_eight_mixed_columns() {
    let _serial = serial();
    let Some(stream) = device() else { return };
    let mut ws = Workspace::new(&stream);
    for columns in 1..=8 {
        for first in [0, 2, 3] {
            let probe = mixed(columns, first, 1, 0);
            for n in sizes(widest(&probe, 1)) {
                for (p, pattern) in
                    [Pattern::Nothing, Pattern::OnePercent, Pattern::Half, Pattern::Everything, Pattern::Clustered]
                        .into_iter()
                        .enumerate()
                {
                    let cols = mixed(columns, first, n, 100 * columns as u64 + p as u64);
                    let mask: Vec<u8> =
                        pattern.mask(n, n as u64 + p as u64).iter().map(|&b| b as u8 * (1 + p as u8)).collect();
                    let kept = host::filter_rows(n, |i| mask[i] != 0);
                    let dmask = stream.clone_htod(&mask).unwrap();
                    let what = format!("mask: {columns} columns from kind {first}, n {n}, {pattern:?}");
                    run_and_check(&stream, &mut ws, &what, &cols, &FilterBy::mask(&dmask), &kept);
                }
            }
        }
    }
}

#[test]
fn bool_masks_and_a_large_table() {
    let _serial = serial();
    let Some(stream) = device() else { return };
    let mut ws = Workspace::new(&stream);
    let n = (1 << 20) + 3;
    let cols = mixed(4, 0, n, 77);
    for pattern in [Pattern::OnePercent, Pattern::Half, Pattern::NinetyNine] {
        let mask = pattern.mask(n, 5);
        let kept = host::filter_rows(n, |i| mask[i]);
        let dmask = stream.clone_htod(&mask).unwrap();
        run_and_check(&stream, &mut ws, &format!("bool mask {pattern:?}"), &cols, &FilterBy::mask(&dmask), &kept);
    }
}

#[test]
fn builtin_predicates_decide_once_for_every_column() {
    let _serial = serial();
    let Some(stream) = device() else { return };
    let mut ws = Workspace::new(&stream);
    for n in sizes(8) {
        let key = HostCol::random(2, n, 11); // f32, with NaN and -0.0
        let HostCol::F32(keys) = &key else { unreachable!() };
        let dkey = stream.clone_htod(keys).unwrap();
        // Selectivities from none to all (NaN fails every comparison but `ne`).
        let preds = [Pred::gt(1000.0f32), Pred::gt(98.0), Pred::lt(0.0), Pred::ne(1000.0), Pred::is_nan()];
        for (k, pred) in preds.iter().enumerate() {
            let cols = mixed(3, k, n, 31 + k as u64);
            let kept = host::filter_rows(n, |i| lookback::Predicate::holds(pred, keys[i]));
            let by = FilterBy::pred(&dkey, pred).unwrap();
            run_and_check(&stream, &mut ws, &format!("Pred {k}, n {n}"), &cols, &by, &kept);
        }
        // The predicate's column among the moved ones too.
        let kept = host::filter_rows(n, |i| keys[i] < 50.0);
        let lt = Pred::lt(50.0f32);
        run_and_check(
            &stream,
            &mut ws,
            &format!("Pred on a moved column, n {n}"),
            std::slice::from_ref(&key),
            &FilterBy::pred(&dkey, &lt).unwrap(),
            &kept,
        );
    }
    // A 1-byte predicate column with 1-byte payloads: the 32-row tile.
    for n in sizes(1) {
        let HostCol::U8(bytes) = HostCol::random(0, n, 5) else { unreachable!() };
        let dbytes = stream.clone_htod(&bytes).unwrap();
        let pred = Pred::any_bits(0x81u8);
        let kept = host::filter_rows(n, |i| bytes[i] & 0x81 != 0);
        let cols = vec![HostCol::random(0, n, 6), HostCol::random(1, n, 7)];
        run_and_check(
            &stream,
            &mut ws,
            &format!("u8 Pred, n {n}"),
            &cols,
            &FilterBy::pred(&dbytes, &pred).unwrap(),
            &kept,
        );
    }
}

#[test]
fn user_predicates_over_one_and_two_columns() {
    let _serial = serial();
    let Some(stream) = device() else { return };
    let mut ws = Workspace::new(&stream);
    // SAFETY: pure expressions of their arguments.
    let third = unsafe { UserPred::new("x % 3 == 0", |x: i16| x % 3 == 0) }.unwrap();
    let above = unsafe { UserPred2::new("a > b", |a: f32, b: f64| a as f64 > b) }.unwrap();
    let never = unsafe { UserPred2::new("a != a && b != b", |a: f32, b: f64| a.is_nan() && b.is_nan()) }.unwrap();
    let always = unsafe { UserPred2::new("true", |_: f32, _: f64| true) }.unwrap();
    for n in sizes(8) {
        let HostCol::I16(xs) = HostCol::random(1, n, 3) else { unreachable!() };
        let dx = stream.clone_htod(&xs).unwrap();
        let kept = host::filter_rows(n, |i| xs[i] % 3 == 0);
        let cols = mixed(5, 0, n, 9);
        run_and_check(
            &stream,
            &mut ws,
            &format!("UserPred, n {n}"),
            &cols,
            &FilterBy::pred(&dx, &third).unwrap(),
            &kept,
        );

        let HostCol::F32(a) = HostCol::random(2, n, 4) else { unreachable!() };
        let HostCol::F64(b) = HostCol::random(3, n, 5) else { unreachable!() };
        let (da, db) = (stream.clone_htod(&a).unwrap(), stream.clone_htod(&b).unwrap());
        for (name, pred) in [("a > b", &above), ("never", &never), ("always", &always)] {
            let kept = host::select_if2(&a, &b, pred).unwrap();
            let cols = mixed(4, 1, n, 21);
            let what = format!("UserPred2 {name}, n {n}");
            run_and_check(&stream, &mut ws, &what, &cols, &FilterBy::pred2(&da, &db, pred), &kept);
            // Its count alone, and its row indices.
            let mut count = stream.clone_htod(&[7u64]).unwrap();
            ws.count_filtered_into(&FilterBy::pred2(&da, &db, pred), &mut count).unwrap();
            assert_eq!(stream.clone_dtoh(&count).unwrap()[0] as usize, kept.len(), "{what}: count only");
            assert_eq!(lookback::table::count_filtered(&FilterBy::pred2(&da, &db, pred)).unwrap(), kept.len());
            let mut rows = stream.clone_htod(&vec![u32::MAX; n + 1]).unwrap();
            let mut num = stream.alloc_zeros::<u64>(1).unwrap();
            ws.filter_indices_into(&FilterBy::pred2(&da, &db, pred), &mut rows, &mut num).unwrap();
            let got = stream.clone_dtoh(&rows).unwrap();
            assert_eq!(stream.clone_dtoh(&num).unwrap()[0] as usize, kept.len(), "{what}: indices count");
            let want: Vec<u32> = kept.iter().map(|&i| i as u32).collect();
            assert_eq!(&got[..kept.len()], &want[..], "{what}: u32 indices");
            assert!(got[kept.len()..].iter().all(|&x| x == u32::MAX), "{what}: indices past the count");
        }
    }
}

/// A 4-byte struct column, declared right.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct Pair {
    x: u16,
    y: u16,
}
// SAFETY: #[repr(C)], no padding, every bit pattern valid; the CUDA struct has the same layout.
unsafe impl lookback::cudarc::driver::DeviceRepr for Pair {}
unsafe impl DeviceType for Pair {
    const CUDA_NAME: &'static str = "Pair";
    const CUDA_DECL: &'static str = "struct Pair { uint16_t x; uint16_t y; };";
}

#[test]
fn struct_columns_decide_and_move() {
    let _serial = serial();
    let Some(stream) = device() else { return };
    let mut ws = Workspace::new(&stream);
    // SAFETY: a pure expression of a and b.
    let sum_above =
        unsafe { UserPred2::new("(uint32_t)a.x + a.y > b", |a: Pair, b: u32| a.x as u32 + a.y as u32 > b) }.unwrap();
    for n in sizes(4) {
        let pairs: Vec<Pair> = (0..n).map(|i| Pair { x: (i * 31 % 1000) as u16, y: (i * 17 % 700) as u16 }).collect();
        let limits: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2654435761) % 1700).collect();
        let (dp, dl) = (stream.clone_htod(&pairs).unwrap(), stream.clone_htod(&limits).unwrap());
        let kept = host::filter_rows(n, |i| sum_above.holds(pairs[i], limits[i]));
        let mut out = stream.clone_htod(&vec![Pair { x: 7, y: 7 }; n + 1]).unwrap();
        let mut count = stream.alloc_zeros::<u64>(1).unwrap();
        ws.filter_columns_into(
            &[ColumnRef::new(&dp)],
            &mut [ColumnMut::new(&mut out)],
            &FilterBy::pred2(&dp, &dl, &sum_above),
            &mut count,
        )
        .unwrap();
        let got = stream.clone_dtoh(&out).unwrap();
        assert_eq!(stream.clone_dtoh(&count).unwrap()[0] as usize, kept.len(), "struct count, n {n}");
        assert_eq!(&got[..kept.len()], kept.iter().map(|&i| pairs[i]).collect::<Vec<_>>(), "struct rows, n {n}");
        assert!(got[kept.len()..].iter().all(|&p| p == Pair { x: 7, y: 7 }), "written past the count, n {n}");
    }
}

#[test]
fn row_indices_beside_columns_and_alone() {
    let _serial = serial();
    let Some(stream) = device() else { return };
    for n in sizes(8) {
        let mask = Pattern::Half.mask(n, 8);
        let dmask = stream.clone_htod(&mask).unwrap();
        let kept = host::filter_rows(n, |i| mask[i]);
        let got = lookback::table::filter_indices(&FilterBy::mask(&dmask)).unwrap();
        let want: Vec<u64> = kept.iter().map(|&i| i as u64).collect();
        assert_eq!(got.to_vec().unwrap(), want, "u64 indices, n {n}");
        // The one-shot columns.
        let cols = mixed(3, 2, n, 12);
        let dev: Vec<DevCol> = cols.iter().map(|c| c.upload(&stream)).collect();
        let refs: Vec<ColumnRef<'_>> = dev.iter().map(DevCol::as_ref).collect();
        let filtered = lookback::table::filter_columns(&refs, &FilterBy::mask(&dmask)).unwrap();
        assert_eq!(filtered.len(), kept.len());
        let HostCol::F32(f) = &cols[0] else { unreachable!() };
        let want: Vec<u32> = kept.iter().map(|&i| f[i].to_bits()).collect();
        let got: Vec<u32> = filtered.to_vec::<f32>(0).unwrap().iter().map(|x| x.to_bits()).collect();
        assert_eq!(got, want, "one-shot f32 column, n {n}");
        let HostCol::U64(u) = &cols[2] else { unreachable!() };
        assert_eq!(filtered.to_vec::<u64>(2).unwrap(), kept.iter().map(|&i| u[i]).collect::<Vec<_>>());
        assert!(matches!(filtered.view::<u16>(0), Err(Error::UnsupportedSize { .. })));
        assert!(matches!(filtered.view::<u64>(3), Err(Error::LengthMismatch { what: "column index", .. })));
    }
}

#[test]
fn unaligned_views_in_and_out() {
    let _serial = serial();
    let Some(stream) = device() else { return };
    let mut ws = Workspace::new(&stream);
    for n in sizes(8) {
        for offset in [1usize, 3] {
            let a: Vec<u8> = (0..n + offset).map(|i| (i * 7) as u8).collect();
            let b: Vec<i16> = (0..n + offset).map(|i| (i as i16).wrapping_mul(-3)).collect();
            let c: Vec<f64> = (0..n + offset).map(|i| i as f64 * 0.5).collect();
            let mask: Vec<u8> = Pattern::Half.mask(n + offset, offset as u64).iter().map(|&x| x as u8).collect();
            let (da, db, dc, dm) = (
                stream.clone_htod(&a).unwrap(),
                stream.clone_htod(&b).unwrap(),
                stream.clone_htod(&c).unwrap(),
                stream.clone_htod(&mask).unwrap(),
            );
            let (va, vb, vc, vm): (CudaView<u8>, CudaView<i16>, CudaView<f64>, CudaView<u8>) =
                (da.slice(offset..), db.slice(offset..), dc.slice(offset..), dm.slice(offset..));
            let mut oa = stream.clone_htod(&vec![0xEEu8; n + 2 * offset]).unwrap();
            let mut ob = stream.clone_htod(&vec![i16::MIN; n + 2 * offset]).unwrap();
            let mut oc = stream.clone_htod(&vec![-1.0f64; n + 2 * offset]).unwrap();
            let mut count = stream.alloc_zeros::<u64>(1).unwrap();
            {
                let (mut wa, mut wb, mut wc) = (oa.slice_mut(offset..), ob.slice_mut(offset..), oc.slice_mut(offset..));
                ws.filter_columns_into(
                    &[ColumnRef::new(&va), ColumnRef::new(&vb), ColumnRef::new(&vc)],
                    &mut [ColumnMut::new(&mut wa), ColumnMut::new(&mut wb), ColumnMut::new(&mut wc)],
                    &FilterBy::mask(&vm),
                    &mut count,
                )
                .unwrap();
            }
            let kept = host::filter_rows(n, |i| mask[i + offset] != 0);
            let k = kept.len();
            assert_eq!(stream.clone_dtoh(&count).unwrap()[0] as usize, k, "unaligned count, n {n}");
            let (ga, gb, gc) =
                (stream.clone_dtoh(&oa).unwrap(), stream.clone_dtoh(&ob).unwrap(), stream.clone_dtoh(&oc).unwrap());
            let pick = |i: &usize| i + offset;
            assert_eq!(&ga[offset..offset + k], kept.iter().map(|i| a[pick(i)]).collect::<Vec<_>>(), "u8, n {n}");
            assert_eq!(&gb[offset..offset + k], kept.iter().map(|i| b[pick(i)]).collect::<Vec<_>>(), "i16, n {n}");
            assert_eq!(&gc[offset..offset + k], kept.iter().map(|i| c[pick(i)]).collect::<Vec<_>>(), "f64, n {n}");
            assert!(ga[..offset].iter().chain(&ga[offset + k..]).all(|&x| x == 0xEE), "u8 written outside, n {n}");
            assert!(gb[..offset].iter().chain(&gb[offset + k..]).all(|&x| x == i16::MIN), "i16 outside, n {n}");
            assert!(gc[..offset].iter().chain(&gc[offset + k..]).all(|&x| x == -1.0), "f64 outside, n {n}");
        }
    }
}

#[test]
fn device_sized_calls_filter_the_first_rows() {
    let _serial = serial();
    let Some(stream) = device() else { return };
    let mut ws = Workspace::new(&stream);
    let t = tile(8);
    let n = 4 * t + 5;
    let cols = mixed(3, 1, n, 41);
    let mask = Pattern::Half.mask(n, 2);
    let dmask = stream.clone_htod(&mask).unwrap();
    let dev: Vec<DevCol> = cols.iter().map(|c| c.upload(&stream)).collect();
    for rows in [0, 1, t - 1, t, t + 1, 2 * t + 3, n, n + 100] {
        let device_count = stream.clone_htod(&[rows as u64]).unwrap();
        let mut outs: Vec<DevCol> = cols.iter().map(|c| c.poisoned(&stream, n)).collect();
        let poison: Vec<HostCol> = outs.iter().map(|o| o.download(&stream)).collect();
        let mut count = stream.clone_htod(&[0xBADu64]).unwrap();
        {
            let refs: Vec<ColumnRef<'_>> = dev.iter().map(DevCol::as_ref).collect();
            let mut muts: Vec<ColumnMut<'_>> = outs.iter_mut().map(DevCol::as_mut).collect();
            ws.with_count(&device_count, |ws| {
                ws.filter_columns_into(&refs, &mut muts, &FilterBy::mask(&dmask), &mut count)
            })
            .unwrap();
        }
        let kept = host::filter_rows(rows.min(n), |i| mask[i]);
        assert_eq!(stream.clone_dtoh(&count).unwrap()[0] as usize, kept.len(), "device count {rows}");
        for (c, (input, out)) in cols.iter().zip(&outs).enumerate() {
            check_column(&format!("device count {rows}: column {c}"), input, &kept, &out.download(&stream), &poison[c]);
        }
    }
}

#[test]
fn a_captured_filter_replays_with_new_counts() {
    let _serial = serial();
    let Some(stream) = device() else { return };
    let stream = stream.context().new_stream().unwrap();
    let mut ws = Workspace::new(&stream);
    let t = tile(4);
    let n = 3 * t + 9;
    ws.reserve(n).unwrap();
    let a: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2654435761)).collect();
    let b: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let (da, db) = (stream.clone_htod(&a).unwrap(), stream.clone_htod(&b).unwrap());
    let mut dmask = stream.alloc_zeros::<u8>(n).unwrap();
    let mut device_count = stream.alloc_zeros::<u64>(1).unwrap();
    let mut oa = stream.alloc_zeros::<u32>(n).unwrap();
    let mut ob = stream.alloc_zeros::<f32>(n).unwrap();
    let mut count = stream.alloc_zeros::<u64>(1).unwrap();
    // Compiled and loaded before the capture.
    FilterBy::mask(&dmask).compile(&[ColumnRef::new(&da), ColumnRef::new(&db)]).unwrap();
    // SAFETY: the GPU tests of this binary run one at a time (`serial`).
    let graph = unsafe {
        lookback::graph::capture(&stream, |_| {
            ws.with_count(&device_count, |ws| {
                ws.filter_columns_into(
                    &[ColumnRef::new(&da), ColumnRef::new(&db)],
                    &mut [ColumnMut::new(&mut oa), ColumnMut::new(&mut ob)],
                    &FilterBy::mask(&dmask),
                    &mut count,
                )
            })
        })
    }
    .unwrap();
    for (r, rows) in [0usize, 1, t, t + 1, n].into_iter().enumerate() {
        let mask: Vec<u8> = Pattern::Half.mask(n, r as u64).iter().map(|&x| x as u8).collect();
        stream.memcpy_htod(&mask, &mut dmask).unwrap();
        stream.memcpy_htod(&[rows as u64], &mut device_count).unwrap();
        stream.memcpy_htod(&vec![7u32; n], &mut oa).unwrap();
        graph.launch().unwrap();
        let kept = host::filter_rows(rows, |i| mask[i] != 0);
        assert_eq!(stream.clone_dtoh(&count).unwrap()[0] as usize, kept.len(), "replay {r}");
        let got = stream.clone_dtoh(&oa).unwrap();
        assert_eq!(&got[..kept.len()], kept.iter().map(|&i| a[i]).collect::<Vec<_>>(), "replay {r}: column a");
        assert!(got[kept.len()..].iter().all(|&x| x == 7), "replay {r}: written past the count");
        let got_b = stream.clone_dtoh(&ob).unwrap();
        assert_eq!(&got_b[..kept.len()], kept.iter().map(|&i| b[i]).collect::<Vec<_>>(), "replay {r}: column b");
    }
}

#[test]
fn typed_errors_write_nothing() {
    let _serial = serial();
    let Some(stream) = gpu() else { return };
    let mut ws = Workspace::new(&stream);
    let n = 100;
    let a = stream.clone_htod(&vec![1u32; n]).unwrap();
    let short = stream.clone_htod(&vec![1u32; n - 1]).unwrap();
    let mask = stream.clone_htod(&vec![1u8; n]).unwrap();
    let mut out = stream.clone_htod(&vec![9u32; n]).unwrap();
    let mut small = stream.clone_htod(&vec![9u32; n - 1]).unwrap();
    let mut wide = stream.clone_htod(&vec![9u64; n]).unwrap();
    let mut count = stream.clone_htod(&[5u64]).unwrap();
    let by = FilterBy::mask(&mask);
    let check_untouched = |out: &CudaSlice<u32>, count: &CudaSlice<u64>| {
        assert!(stream.clone_dtoh(out).unwrap().iter().all(|&x| x == 9));
        assert_eq!(stream.clone_dtoh(count).unwrap(), [5]);
    };
    let e = ws.filter_columns_into(&[ColumnRef::new(&short)], &mut [ColumnMut::new(&mut out)], &by, &mut count);
    assert!(matches!(e, Err(Error::LengthMismatch { what: "column", expected: 100, actual: 99 })), "{e:?}");
    let e = ws.filter_columns_into(&[ColumnRef::new(&a)], &mut [ColumnMut::new(&mut small)], &by, &mut count);
    assert!(matches!(e, Err(Error::OutputTooSmall { what: "output column", .. })), "{e:?}");
    let e = ws.filter_columns_into(&[ColumnRef::new(&a)], &mut [ColumnMut::new(&mut wide)], &by, &mut count);
    assert!(matches!(e, Err(Error::UnsupportedSize { role: "output column", .. })), "{e:?}");
    let e = ws.filter_columns_into(&[ColumnRef::new(&a)], &mut [], &by, &mut count);
    assert!(matches!(e, Err(Error::LengthMismatch { what: "outputs", .. })), "{e:?}");
    let nine: Vec<ColumnRef<'_>> = (0..9).map(|_| ColumnRef::new(&a)).collect();
    let mut outs9: Vec<CudaSlice<u32>> = (0..9).map(|_| stream.alloc_zeros::<u32>(n).unwrap()).collect();
    let mut muts9: Vec<ColumnMut<'_>> = outs9.iter_mut().map(ColumnMut::new).collect();
    let e = ws.filter_columns_into(&nine, &mut muts9, &by, &mut count);
    assert!(matches!(e, Err(Error::TooManyColumns { columns: 9, max: 8 })), "{e:?}");
    // A short mask.
    let short_mask = stream.clone_htod(&vec![1u8; n + 1]).unwrap();
    let e = ws.filter_columns_into(
        &[ColumnRef::new(&a)],
        &mut [ColumnMut::new(&mut out)],
        &FilterBy::mask(&short_mask),
        &mut count,
    );
    assert!(matches!(e, Err(Error::LengthMismatch { what: "column", expected: 101, actual: 100 })), "{e:?}");
    // SAFETY: a pure expression of a and b.
    let p2 = unsafe { UserPred2::new("a > b", |a: u32, b: u32| a > b) }.unwrap();
    let e = ws.count_filtered_into(&FilterBy::pred2(&a, &short, &p2), &mut count);
    assert!(matches!(e, Err(Error::LengthMismatch { what: "second predicate column", .. })), "{e:?}");
    // (Outputs that overlap an input are Error::Overlap, but safe Rust cannot build such a call: a buffer
    // is borrowed either shared or mutably. The check is the crate's `check_disjoint`.)
    // The mask may also be a moved column.
    let mut bytes = stream.clone_htod(&vec![1u8; n]).unwrap();
    let mut other_count = stream.alloc_zeros::<u64>(1).unwrap();
    let e = ws.filter_columns_into(
        &[ColumnRef::new(&mask)],
        &mut [ColumnMut::new(&mut bytes)],
        &FilterBy::mask(&mask),
        &mut other_count,
    );
    assert!(e.is_ok() || matches!(e, Err(Error::NvrtcNotFound { .. })), "mask as a column: {e:?}");
    let mut empty_count = stream.alloc_zeros::<u64>(0).unwrap();
    let e = ws.count_filtered_into(&by, &mut empty_count);
    assert!(matches!(e, Err(Error::OutputTooSmall { what: "num_selected", .. })), "{e:?}");
    stream.synchronize().unwrap();
    check_untouched(&out, &count);
}

/// What compute-sanitizer runs (`sanitizer_cases` filter): each decision over a few mixed columns at a few
/// small sizes, row indices, a count only, and a device-sized call.
#[test]
fn sanitizer_cases() {
    let _serial = serial();
    let Some(stream) = device() else { return };
    let mut ws = Workspace::new(&stream);
    // SAFETY: pure expressions of their arguments.
    let third = unsafe { UserPred::new("x % 3 == 0", |x: i16| x % 3 == 0) }.unwrap();
    let above = unsafe { UserPred2::new("a > b", |a: f32, b: f64| a as f64 > b) }.unwrap();
    let t = tile(8);
    for n in [0, 1, 5, t + 3, 3 * t + 1] {
        let cols = mixed(5, 0, n, n as u64);
        let mask = Pattern::Half.mask(n, 1);
        let dmask = stream.clone_htod(&mask).unwrap();
        run_and_check(
            &stream,
            &mut ws,
            "sanitize mask",
            &cols,
            &FilterBy::mask(&dmask),
            &host::filter_rows(n, |i| mask[i]),
        );
        let HostCol::I16(xs) = HostCol::random(1, n, 2) else { unreachable!() };
        let dx = stream.clone_htod(&xs).unwrap();
        let kept = host::filter_rows(n, |i| xs[i] % 3 == 0);
        run_and_check(&stream, &mut ws, "sanitize UserPred", &cols, &FilterBy::pred(&dx, &third).unwrap(), &kept);
        let lt = Pred::lt(0i16);
        let kept = host::filter_rows(n, |i| xs[i] < 0);
        run_and_check(&stream, &mut ws, "sanitize Pred", &cols[..2], &FilterBy::pred(&dx, &lt).unwrap(), &kept);
        let HostCol::F32(a) = HostCol::random(2, n, 4) else { unreachable!() };
        let HostCol::F64(b) = HostCol::random(3, n, 5) else { unreachable!() };
        let (da, db) = (stream.clone_htod(&a).unwrap(), stream.clone_htod(&b).unwrap());
        let kept = host::select_if2(&a, &b, &above).unwrap();
        run_and_check(&stream, &mut ws, "sanitize UserPred2", &cols[2..], &FilterBy::pred2(&da, &db, &above), &kept);
        let mut rows = stream.alloc_zeros::<u64>(n.max(1)).unwrap();
        let mut num = stream.alloc_zeros::<u64>(1).unwrap();
        ws.filter_indices_into(&FilterBy::pred2(&da, &db, &above), &mut rows, &mut num).unwrap();
        ws.count_filtered_into(&FilterBy::mask(&dmask), &mut num).unwrap();
        let device_count = stream.clone_htod(&[(n / 2) as u64]).unwrap();
        ws.with_count(&device_count, |ws| ws.count_filtered_into(&FilterBy::mask(&dmask), &mut num)).unwrap();
    }
    stream.synchronize().unwrap();
}

/// `lookback::arrow::filter_record_batch` against the host: ten columns of mixed Arrow types (two table
/// filters of at most eight columns), a mask with nulls, and the typed errors.
#[cfg(feature = "arrow")]
#[test]
fn arrow_record_batches_filter_on_the_gpu() {
    use lookback::arrow::arrow_array::{
        Array, ArrayRef, BooleanArray, Float16Array, Float32Array, Float64Array, Int8Array, Int16Array, Int32Array,
        Int64Array, RecordBatch, StringArray, UInt8Array, UInt16Array, UInt32Array, UInt64Array,
    };
    let _serial = serial();
    let Some(stream) = device() else { return };
    for n in [0, 1, tile(8) + 1, 3 * tile(8) + 5] {
        let ints = |k: i64| (0..n as i64).map(move |i| i.wrapping_mul(2654435761 + k));
        let columns: Vec<(&str, ArrayRef)> = vec![
            ("i8", Arc::new(Int8Array::from_iter_values(ints(1).map(|x| x as i8)))),
            ("i16", Arc::new(Int16Array::from_iter_values(ints(2).map(|x| x as i16)))),
            ("i32", Arc::new(Int32Array::from_iter_values(ints(3).map(|x| x as i32)))),
            ("i64", Arc::new(Int64Array::from_iter_values(ints(4)))),
            ("u8", Arc::new(UInt8Array::from_iter_values(ints(5).map(|x| x as u8)))),
            ("u16", Arc::new(UInt16Array::from_iter_values(ints(6).map(|x| x as u16)))),
            ("u32", Arc::new(UInt32Array::from_iter_values(ints(7).map(|x| x as u32)))),
            ("u64", Arc::new(UInt64Array::from_iter_values(ints(8).map(|x| x as u64)))),
            ("f32", Arc::new(Float32Array::from_iter_values(ints(9).map(|x| (x % 1000) as f32 * 0.5)))),
            ("f64", Arc::new(Float64Array::from_iter_values(ints(10).map(|x| (x % 1000) as f64 * 0.25)))),
            ("f16", Arc::new(Float16Array::from_iter_values(ints(11).map(|x| f16::from_f32((x % 100) as f32))))),
        ];
        let batch = RecordBatch::try_from_iter(columns).unwrap();
        let mut rng = Rng::new(n as u64);
        let mask: BooleanArray = (0..n)
            .map(|_| match rng.next_u64() % 4 {
                0 => None,
                1 => Some(false),
                _ => Some(true),
            })
            .collect();
        let kept = host::filter_rows(n, |i| mask.is_valid(i) && mask.value(i));
        let got = lookback::arrow::filter_record_batch(&stream, &batch, &mask).unwrap();
        assert_eq!(got.num_rows(), kept.len(), "n {n}");
        assert_eq!(got.schema(), batch.schema());
        for (c, column) in batch.columns().iter().enumerate() {
            let indices = UInt64Array::from_iter_values(kept.iter().map(|&i| i as u64));
            let want = take(column.as_ref(), &indices);
            assert_eq!(got.column(c).as_ref(), want.as_ref(), "n {n}: column {c}");
        }
    }
    // Typed errors: a mask of another length, a column with nulls, a column of strings.
    let ok = RecordBatch::try_from_iter([("a", Arc::new(Int32Array::from(vec![1, 2])) as ArrayRef)]).unwrap();
    let e = lookback::arrow::filter_record_batch(&stream, &ok, &BooleanArray::from(vec![true]));
    assert!(matches!(e, Err(Error::LengthMismatch { what: "mask", .. })), "{e:?}");
    let nulls =
        RecordBatch::try_from_iter([("a", Arc::new(Int32Array::from(vec![Some(1), None])) as ArrayRef)]).unwrap();
    let e = lookback::arrow::filter_record_batch(&stream, &nulls, &BooleanArray::from(vec![true, true]));
    assert!(matches!(e, Err(Error::ArrowNulls { null_count: 1 })), "{e:?}");
    let strings = RecordBatch::try_from_iter([("s", Arc::new(StringArray::from(vec!["x", "y"])) as ArrayRef)]).unwrap();
    let e = lookback::arrow::filter_record_batch(&stream, &strings, &BooleanArray::from(vec![true, true]));
    assert!(matches!(e, Err(Error::ArrowType { .. })), "{e:?}");

    /// The rows `indices` of a primitive array (a host `take`, without arrow's compute crates).
    fn take(array: &dyn Array, indices: &UInt64Array) -> ArrayRef {
        macro_rules! take_as {
            ($($t:ty),*) => {$(
                if let Some(a) = array.as_any().downcast_ref::<$t>() {
                    return Arc::new(<$t>::from_iter_values(indices.values().iter().map(|&i| a.value(i as usize))));
                }
            )*};
        }
        take_as!(
            Int8Array,
            Int16Array,
            Int32Array,
            Int64Array,
            UInt8Array,
            UInt16Array,
            UInt32Array,
            UInt64Array,
            Float32Array,
            Float64Array,
            Float16Array
        );
        unreachable!("a primitive column")
    }
}
