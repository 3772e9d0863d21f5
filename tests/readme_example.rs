//! The selection, partition and keyed examples of README.md, kept compiling and correct (copied verbatim).
mod common;

use lookback::Pred;

fn clean(stream: &std::sync::Arc<lookback::cudarc::driver::CudaStream>) -> lookback::Result<()> {
    let mut temps = stream.clone_htod(&[21.5f32, -9999.0, f32::NAN, 19.0, 120.0])?;
    let valid = Pred::between(-50.0, 60.0) & !Pred::is_nan(); // NaN fails `between` anyway
    let kept = lookback::select_if_in_place(&mut temps, &valid)?; // one pass, no temporary copy
    assert_eq!(stream.clone_dtoh(&temps.slice(..kept))?, [21.5, 19.0]);

    // Select the same rows of other columns: evaluate the predicate once, as a byte mask.
    let ids = stream.clone_htod(&[1u32, 2, 3, 4, 5])?;
    let all_temps = stream.clone_htod(&[21.5f32, -9999.0, f32::NAN, 19.0, 120.0])?;
    let mask = lookback::mask_if(&all_temps, &valid)?;
    assert_eq!(lookback::select_flagged(&ids, &mask)?.to_vec()?, [1, 4]);
    Ok(())
}

#[test]
fn readme_selection_example() {
    let Some(stream) = common::gpu() else { return };
    clean(&stream).unwrap();
}

fn table(stream: &std::sync::Arc<lookback::cudarc::driver::CudaStream>) -> lookback::Result<()> {
    use lookback::rtc::UserPred2;
    use lookback::table::{ColumnMut, ColumnRef, FilterBy};
    let mut ws = lookback::Workspace::new(stream);
    let (bid, ask) = (stream.clone_htod(&[10.0f32, 12.0, 9.0])?, stream.clone_htod(&[11.0f32, 11.5, 8.0])?);
    let (id, size) = (stream.clone_htod(&[7u64, 8, 9])?, stream.clone_htod(&[100i16, 5, 30])?);
    // SAFETY: a pure expression of a and b.
    let crossed = unsafe { UserPred2::new("a > b", |a: f32, b: f32| a > b)? };
    let (mut id_out, mut size_out) = (stream.alloc_zeros::<u64>(3)?, stream.alloc_zeros::<i16>(3)?);
    let mut n = stream.alloc_zeros::<u64>(1)?;
    ws.filter_columns_into(
        &[ColumnRef::new(&id), ColumnRef::new(&size)],
        &mut [ColumnMut::new(&mut id_out), ColumnMut::new(&mut size_out)],
        &FilterBy::pred2(&bid, &ask, &crossed), // or FilterBy::mask(&flags), FilterBy::pred(&col, &Pred::gt(0))?
        &mut n,
    )?;
    assert_eq!(stream.clone_dtoh(&n)?, [2]);
    assert_eq!(stream.clone_dtoh(&id_out.slice(..2))?, [8, 9]);
    assert_eq!(stream.clone_dtoh(&size_out.slice(..2))?, [5, 30]);
    Ok(())
}

#[test]
fn readme_table_example() {
    let Some(stream) = common::gpu() else { return };
    if !common::nvrtc() {
        return;
    }
    table(&stream).unwrap();
}

fn split(stream: &std::sync::Arc<lookback::cudarc::driver::CudaStream>) -> lookback::Result<()> {
    let input = stream.clone_htod(&[5i32, -3, 8, -1, 0, 7])?;
    let parts = lookback::partition_if(&input, &Pred::gt(0))?;
    assert_eq!(parts.num_selected(), 3);
    assert_eq!(stream.clone_dtoh(&parts.selected())?, [5, 8, 7]);
    assert_eq!(stream.clone_dtoh(&parts.rejected())?, [-3, -1, 0]);
    Ok(())
}

fn per_sensor(stream: &std::sync::Arc<lookback::cudarc::driver::CudaStream>) -> lookback::Result<()> {
    use lookback::ScanOp;
    let sensor = stream.clone_htod(&[7u32, 7, 7, 9, 9, 4])?; // sorted by sensor
    let value = stream.clone_htod(&[1.5f32, 2.5, 2.5, 10.0, 12.0, -1.0])?;
    let sums = lookback::reduce_by_key(&sensor, &value, ScanOp::Sum)?;
    assert_eq!(sums.to_vecs()?, (vec![7, 9, 4], vec![6.5, 22.0, -1.0]));
    let counts = lookback::run_length_encode::<u32, u32, _>(&sensor)?;
    assert_eq!(counts.to_vecs()?, (vec![7, 9, 4], vec![3, 2, 1]));
    let repeats = lookback::non_trivial_runs::<f32, u64, _>(&value)?; // (offset, length)
    assert_eq!(repeats.to_vecs()?, (vec![1], vec![2]));
    let running_max = lookback::inclusive_scan_by_key(&sensor, &value, ScanOp::Max)?;
    assert_eq!(stream.clone_dtoh(&running_max)?, [1.5, 2.5, 2.5, 10.0, 12.0, -1.0]);
    Ok(())
}

#[test]
fn readme_partition_and_keyed_examples() {
    let Some(stream) = common::gpu() else { return };
    split(&stream).unwrap();
    per_sensor(&stream).unwrap();
}

use lookback::{ScanOp, Workspace};

fn filter_then_offsets(ctx: &std::sync::Arc<lookback::cudarc::driver::CudaContext>) -> lookback::Result<()> {
    let stream = ctx.new_stream()?; // the legacy default stream cannot capture
    let mut ws = Workspace::new(&stream);
    ws.reserve(1 << 20)?; // a workspace cannot grow inside a capture
    let mut rows = stream.alloc_zeros::<i32>(1 << 20)?;
    let (mut kept, mut offsets) = (stream.alloc_zeros::<i32>(1 << 20)?, stream.alloc_zeros::<i32>(1 << 20)?);
    let mut num_kept = stream.alloc_zeros::<u64>(1)?;
    // SAFETY: nothing else uses this context while the capture runs (event tracking is off meanwhile).
    let graph = unsafe {
        lookback::graph::capture(&stream, |_| {
            ws.select_if_into(&rows, &Pred::gt(0), &mut kept, &mut num_kept)?;
            ws.with_count(&num_kept, |ws| ws.exclusive_scan_into(&kept, &mut offsets, 0, ScanOp::Sum))
        })?
    };
    for value in [-1i32, 2] {
        stream.memcpy_htod(&vec![value; 1 << 20], &mut rows)?; // a new batch of rows
        graph.launch()?; // both calls, no host in between
        let n = stream.clone_dtoh(&num_kept)?[0] as usize;
        assert_eq!(n, if value > 0 { 1 << 20 } else { 0 });
        if n > 0 {
            assert_eq!(stream.clone_dtoh(&offsets.slice(n - 1..n))?, [2 * (n as i32 - 1)]);
        }
    }
    Ok(())
}

#[test]
fn readme_graph_example() {
    let Some(stream) = common::gpu() else { return };
    filter_then_offsets(stream.context()).unwrap();
}

use lookback::rtc::{DeviceType, UserEq};

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct Pt {
    x: i16,
    y: i16,
}
// SAFETY: #[repr(C)], no padding, every bit pattern valid, the same fields in CUDA.
unsafe impl lookback::cudarc::driver::DeviceRepr for Pt {}
unsafe impl DeviceType for Pt {
    const CUDA_NAME: &'static str = "Pt";
    const CUDA_DECL: &'static str = "struct Pt { int16_t x; int16_t y; };";
}

fn same_x_runs(stream: &std::sync::Arc<lookback::cudarc::driver::CudaStream>) -> lookback::Result<()> {
    // SAFETY: a pure expression of a and b.
    let same_x = unsafe { UserEq::new("a.x == b.x", |a: Pt, b: Pt| a.x == b.x)? };
    let pts = [Pt { x: 1, y: 5 }, Pt { x: 1, y: 6 }, Pt { x: 2, y: 0 }];
    let runs = lookback::run_length_encode_by::<Pt, u32, _>(&stream.clone_htod(&pts)?, &same_x)?;
    assert_eq!(runs.to_vecs()?, (vec![pts[0], pts[2]], vec![2, 1]));
    Ok(())
}

#[test]
fn readme_user_equality_example() {
    let Some(stream) = common::gpu() else { return };
    if !common::nvrtc() {
        return;
    }
    same_x_runs(&stream).unwrap();
}
