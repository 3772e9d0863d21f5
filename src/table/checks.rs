//! The argument checks of a table filter, on shapes only (no device call), so that every typed error is
//! pinned by host tests.
use super::column::Shape;
use crate::error::{Error, Result};
use crate::launch::{TABLE_MAX_COLUMNS, check_room};

/// Item sizes a column may have: the agent moves a thread's 16 or 32 rows of each column in whole 16-byte
/// chunks (`cuda/classic/table.cuh`).
pub(crate) const COLUMN_BYTES: [usize; 4] = [1, 2, 4, 8];

/// A call's shapes: the decision columns (with their names), the input and output columns, the
/// row-index output (if any) and the count's length.
pub(crate) struct Call<'x> {
    pub decide: &'x [(&'static str, Shape)],
    pub inputs: &'x [Shape],
    pub outputs: &'x [Shape],
    pub indices: Option<Shape>,
    pub count_len: usize,
}

/// Checks a call; returns its rows.
///
/// # Errors
/// [`Error::TooManyColumns`]; [`Error::LengthMismatch`] when the outputs are not one per input, or a
/// column (or the mask, or a predicate column) has another length than the first decision column;
/// [`Error::UnsupportedSize`] for an item size other than 1, 2, 4 or 8 bytes, or an output whose items are
/// not its input's size; [`Error::OutputTooSmall`] for an output column, the indices or the count;
/// [`Error::Unsupported`] for `u32` row indices of more than 2^32 rows.
pub(crate) fn check(call: &Call) -> Result<usize> {
    let columns = call.inputs.len() + usize::from(call.indices.is_some());
    if columns > TABLE_MAX_COLUMNS {
        return Err(Error::TooManyColumns { columns, max: TABLE_MAX_COLUMNS });
    }
    if call.outputs.len() != call.inputs.len() {
        return Err(Error::LengthMismatch { what: "outputs", expected: call.inputs.len(), actual: call.outputs.len() });
    }
    let n = call.decide[0].1.len;
    for &(what, shape) in &call.decide[1..] {
        crate::error::check_len(what, n, shape.len)?;
    }
    for input in call.inputs {
        crate::error::check_len("column", n, input.len)?;
    }
    let supported = |role, s: &Shape| {
        if COLUMN_BYTES.contains(&s.bytes) {
            Ok(())
        } else {
            Err(Error::UnsupportedSize { role, type_name: s.type_name, bytes: s.bytes, allowed: "1, 2, 4 or 8 bytes" })
        }
    };
    for (input, output) in call.inputs.iter().zip(call.outputs) {
        supported("column", input)?;
        if output.bytes != input.bytes {
            return Err(Error::UnsupportedSize {
                role: "output column",
                type_name: output.type_name,
                bytes: output.bytes,
                allowed: "the item size of its input column",
            });
        }
        check_room("output column", n, output.len)?;
    }
    if let Some(indices) = call.indices {
        check_room("indices", n, indices.len)?;
        if indices.bytes == 4 && n as u64 > 1 << 32 {
            return Err(Error::Unsupported { operation: "u32 row indices of more than 2^32 rows", dtype: "u32" });
        }
    }
    check_room("num_selected", 1, call.count_len)?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(len: usize, bytes: usize) -> Shape {
        Shape { len, bytes, type_name: "t" }
    }

    fn run(decide: &[(&'static str, Shape)], inputs: &[Shape], outputs: &[Shape]) -> Result<usize> {
        check(&Call { decide, inputs, outputs, indices: None, count_len: 1 })
    }

    #[test]
    fn a_good_call_gives_its_rows() {
        let mask = [("mask", shape(10, 1))];
        assert_eq!(run(&mask, &[shape(10, 1), shape(10, 8)], &[shape(10, 1), shape(12, 8)]).unwrap(), 10);
        // Count only: no columns at all.
        assert_eq!(run(&mask, &[], &[]).unwrap(), 10);
    }

    #[test]
    fn each_bad_argument_has_its_error() {
        let mask = [("mask", shape(10, 1))];
        let eight = vec![shape(10, 4); 8];
        assert!(matches!(run(&mask, &eight, &eight), Ok(10)));
        let nine = vec![shape(10, 4); 9];
        assert!(matches!(run(&mask, &nine, &nine), Err(Error::TooManyColumns { columns: 9, max: 8 })));
        // Eight columns and the indices are nine.
        let call = Call { decide: &mask, inputs: &eight, outputs: &eight, indices: Some(shape(10, 8)), count_len: 1 };
        assert!(matches!(check(&call), Err(Error::TooManyColumns { columns: 9, .. })));
        assert!(matches!(
            run(&mask, &[shape(10, 4)], &[]),
            Err(Error::LengthMismatch { what: "outputs", expected: 1, actual: 0 })
        ));
        assert!(matches!(
            run(&mask, &[shape(9, 4)], &[shape(10, 4)]),
            Err(Error::LengthMismatch { what: "column", expected: 10, actual: 9 })
        ));
        let two = [("first predicate column", shape(10, 4)), ("second predicate column", shape(11, 8))];
        assert!(matches!(
            run(&two, &[], &[]),
            Err(Error::LengthMismatch { what: "second predicate column", expected: 10, actual: 11 })
        ));
        assert!(matches!(
            run(&mask, &[shape(10, 16)], &[shape(10, 16)]),
            Err(Error::UnsupportedSize { role: "column", bytes: 16, .. })
        ));
        assert!(matches!(
            run(&mask, &[shape(10, 4)], &[shape(10, 8)]),
            Err(Error::UnsupportedSize { role: "output column", bytes: 8, .. })
        ));
        assert!(matches!(
            run(&mask, &[shape(10, 4)], &[shape(9, 4)]),
            Err(Error::OutputTooSmall { what: "output column", needed: 10, actual: 9 })
        ));
        let call = Call { decide: &mask, inputs: &[], outputs: &[], indices: Some(shape(3, 4)), count_len: 1 };
        assert!(matches!(check(&call), Err(Error::OutputTooSmall { what: "indices", .. })));
        let call = Call { decide: &mask, inputs: &[], outputs: &[], indices: None, count_len: 0 };
        assert!(matches!(check(&call), Err(Error::OutputTooSmall { what: "num_selected", .. })));
        let huge = [("mask", shape((1 << 32) + 1, 1))];
        let call =
            Call { decide: &huge, inputs: &[], outputs: &[], indices: Some(shape((1 << 32) + 1, 4)), count_len: 1 };
        assert!(matches!(check(&call), Err(Error::Unsupported { .. })));
        let call =
            Call { decide: &huge, inputs: &[], outputs: &[], indices: Some(shape((1 << 32) + 1, 8)), count_len: 1 };
        assert!(check(&call).is_ok());
    }
}
