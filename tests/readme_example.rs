//! The selection example of README.md, kept compiling and correct.
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
