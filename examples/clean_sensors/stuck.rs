//! Turns the device's long runs of equal values into stuck ranges of one sensor each.
//!
//! The device looks for runs in the value column alone, which is one column and one pass; but a run can
//! then span two sensors — sensor A ends on 20.0 twenty times, sensor B starts on 20.0 forty times —
//! and only a piece within one sensor is a stuck sensor. Any piece longer than the threshold lies in a
//! run longer than the threshold, so it is enough to split the runs that passed the device's length
//! filter at the sensor boundaries (known from the census: rows per sensor) and keep the pieces that are
//! still long. This is exact, and touches only the short list of long runs.
use crate::backend::{Census, LongRuns, StuckRange};

/// The pieces, one sensor each, of `runs` that are longer than `longer_than` rows, in row order.
pub fn stuck_ranges(runs: &LongRuns, census: &Census, longer_than: u64) -> Vec<StuckRange> {
    // ends[i]: one past the last row of the i-th sensor.
    let ends: Vec<u64> = census
        .iter()
        .scan(0u64, |end, &(_, rows)| {
            *end += rows;
            Some(*end)
        })
        .collect();
    let mut ranges = Vec::new();
    for (&offset, &length) in runs.offsets.iter().zip(&runs.lengths) {
        let (mut start, end) = (offset, offset + length);
        // The sensor holding `start`: the first whose end lies beyond it.
        let mut i = ends.partition_point(|&e| e <= start);
        while start < end && i < ends.len() {
            let piece_end = end.min(ends[i]);
            if piece_end - start > longer_than {
                ranges.push(StuckRange {
                    sensor: census[i].0,
                    start: start as usize,
                    len: (piece_end - start) as usize,
                });
            }
            start = piece_end;
            i += 1;
        }
    }
    ranges
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(pairs: &[(u64, u64)]) -> LongRuns {
        LongRuns {
            offsets: pairs.iter().map(|p| p.0).collect(),
            lengths: pairs.iter().map(|p| p.1).collect(),
            non_trivial: pairs.len() as u64,
        }
    }

    #[test]
    fn runs_are_cut_at_sensor_boundaries() {
        // Sensors 7, 8, 9 hold rows 0..100, 100..130, 130..300.
        let census = vec![(7, 100), (8, 30), (9, 170)];
        // Inside sensor 7; spanning 7|8 with a long piece in 7 only; spanning 7|8|9 with long 7 and 9 pieces;
        // spanning 8|9 with both pieces short.
        let found = stuck_ranges(&runs(&[(0, 20), (60, 45), (80, 150)]), &census, 10);
        let want = [
            StuckRange { sensor: 7, start: 0, len: 20 },
            StuckRange { sensor: 7, start: 60, len: 40 },
            StuckRange { sensor: 7, start: 80, len: 20 },
            StuckRange { sensor: 8, start: 100, len: 30 },
            StuckRange { sensor: 9, start: 130, len: 100 },
        ];
        assert_eq!(found, want);
        assert_eq!(stuck_ranges(&runs(&[(120, 20)]), &census, 10), []);
        assert_eq!(stuck_ranges(&runs(&[(120, 30)]), &census, 10), [StuckRange { sensor: 9, start: 130, len: 20 }]);
        assert_eq!(stuck_ranges(&runs(&[]), &census, 10), []);
    }
}
