//! The table filter's kernel (`cuda/rtc/table.cuh`), compiled for a call's column signature and decision:
//! a template over the columns' byte sizes, so each signature is its own kernel, found in the caches after
//! its first compile.
use super::pred2::Code2;
use super::{CompileReport, UserCode, compile};
use crate::error::{Error, Result};
use crate::kernels::{DType, Kernel};
use cudarc::driver::CudaContext;
use std::sync::Arc;

/// How a table filter decides each row, as its program needs it.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Decision<'a> {
    /// A mask column, one byte per row.
    Flags,
    /// A built-in predicate over a column of this type and size in bytes (its program comes with the
    /// launch).
    Program(DType, usize),
    /// A user predicate over one column, whose items have this size in bytes.
    User(&'a UserCode, usize),
    /// A user predicate over two columns.
    User2(&'a Code2),
}

impl Decision<'_> {
    /// Bytes of the widest column the decision reads.
    pub(crate) fn bytes(&self) -> usize {
        match self {
            Decision::Flags => 1,
            Decision::Program(_, bytes) | Decision::User(_, bytes) => *bytes,
            Decision::User2(code) => code.a.size.max(code.b.size),
        }
    }

    /// The decision policy of `cuda/classic/table.cuh` and the code it needs first.
    fn policy(&self) -> (String, String) {
        match self {
            Decision::Flags => (String::new(), "lookback::DecideByFlags".into()),
            Decision::Program(dtype, _) => {
                (String::new(), format!("lookback::DecideByColumn<{}, lookback::ProgramPredicate>", dtype.c_type()))
            }
            Decision::User(code, _) => (
                code.functor("lookback_user_pred", compile::USER_FILE),
                format!(
                    "lookback::DecideByColumn<{}, lookback::FunctorPredicate<lookback_user_pred>>",
                    code.dtype.c_type()
                ),
            ),
            Decision::User2(code) => (
                code.functor("lookback_user_pred2"),
                format!("lookback::DecideByColumns<{}, {}, lookback_user_pred2>", code.a.name, code.b.name),
            ),
        }
    }

    fn half(&self) -> bool {
        match self {
            Decision::Flags => false,
            Decision::Program(dtype, _) => super::half(*dtype),
            Decision::User(code, _) => code.half(),
            Decision::User2(code) => code.half(),
        }
    }

    fn map_error(&self, e: Error) -> Error {
        match self {
            Decision::User2(code) => code.map_error(e),
            _ => e,
        }
    }
}

/// A table filter's kernel signature: the decision and the column codes (`B > 0`: items of `B` bytes
/// copied; `-B`: row indices of `B` bytes), in output order.
#[derive(Clone, Debug)]
pub(crate) struct TableSignature<'a> {
    pub decision: Decision<'a>,
    pub columns: Vec<i32>,
}

/// Column sizes the agent moves in whole 16-byte chunks (a thread's 16 or 32 rows).
const COLUMN_SIZES: [usize; 4] = [1, 2, 4, 8];

impl TableSignature<'_> {
    /// Bytes of the widest column, decision columns included: the tile's selection row.
    pub(crate) fn bytes(&self) -> usize {
        self.columns.iter().map(|c| c.unsigned_abs() as usize).fold(self.decision.bytes(), usize::max)
    }

    /// The typed error for decision columns the agent cannot move, before anything is compiled (payload
    /// columns are checked by `crate::table` where it knows their types).
    fn check_sizes(&self) -> Result<()> {
        let unsupported = |role, type_name, bytes| {
            Err(Error::UnsupportedSize { role, type_name, bytes, allowed: "1, 2, 4 or 8 bytes" })
        };
        if let Decision::User2(code) = self.decision {
            for (role, t) in [("first predicate column", &code.a), ("second predicate column", &code.b)] {
                if !COLUMN_SIZES.contains(&t.size) {
                    return unsupported(role, t.name, t.size);
                }
            }
        }
        Ok(())
    }

    /// The program: the decision's code, the policy and the columns, then the entry header.
    pub(crate) fn program(&self) -> String {
        let (code, policy) = self.decision.policy();
        let columns: Vec<String> = self.columns.iter().map(|c| c.to_string()).collect();
        format!(
            "// lookback: a table filter of columns [{list}]\n#include \"core/types.cuh\"\n\
             #include \"core/predicate.cuh\"\n{code}#define LOOKBACK_RTC_DECIDE {policy}\n\
             #define LOOKBACK_RTC_COLUMNS {list}\n#include \"rtc/table.cuh\"\n",
            list = columns.join(", "),
        )
    }
}

/// The table filter's kernel for `signature` on the GPU of `ctx` (compiled now, or found in the caches).
pub(crate) fn table_kernel(ctx: &Arc<CudaContext>, signature: &TableSignature) -> Result<(Kernel, CompileReport)> {
    signature.check_sizes()?;
    let compiled = compile::compile(ctx, &signature.program(), signature.decision.half())
        .map_err(|e| signature.decision.map_error(e))?;
    Ok((Kernel::runtime("lookback_rtc_table", compiled.image), compiled.report))
}

/// The table filter's kernel for `signature`, compiled for architecture `arch` (`sm_90`) without a GPU.
pub(crate) fn table_for_arch(signature: &TableSignature, arch: &str) -> Result<CompileReport> {
    signature.check_sizes()?;
    compile::compile_for(arch, &signature.program(), signature.decision.half())
        .map(|c| c.report)
        .map_err(|e| signature.decision.map_error(e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_names_the_columns_and_the_decision() {
        let sig = TableSignature { decision: Decision::Flags, columns: vec![4, 8, -8] };
        let p = sig.program();
        assert!(p.contains("#define LOOKBACK_RTC_COLUMNS 4, 8, -8\n"));
        assert!(p.contains("#define LOOKBACK_RTC_DECIDE lookback::DecideByFlags\n"));
        assert_eq!(sig.bytes(), 8);
        let count_only = TableSignature { decision: Decision::Program(DType::I16, 2), columns: vec![] };
        assert!(count_only.program().contains("DecideByColumn<int16_t, lookback::ProgramPredicate>"));
        assert_eq!(count_only.bytes(), 2);
    }
}
