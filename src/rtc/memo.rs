//! The cubins one piece of user code has already been given, so that a call finds its kernels without
//! building the program text again and looking it up in the process cache.
//!
//! That lookup costs more than a small launch: the program holds the user's code, the crate's entry
//! header and, for `#[repr(C)]` types, a layout assertion per possible size; building it and hashing it
//! with its options took 9 µs a call for an f32 sum and 17 µs for the affine recurrence's struct
//! (release build on a two-core build machine), against a 5 µs kernel at 2^16 items. A memo hit is a short
//! scan of a few entries under a lock.
use super::cache::CacheHit;
use super::compile::{CompileReport, Compiled};
use crate::error::Result;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Which program of a piece of code: the same code goes into several (a user operator's scans and its
/// keyed kernel per key size).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Family {
    /// The selection family of a predicate (`cuda/rtc/select.cuh`).
    Select,
    /// The scan kernels of an operator (`cuda/rtc/scan.cuh`).
    Scan,
    /// The keyed kernel of an operator for keys of this many bytes (`cuda/rtc/by_key.cuh`).
    ByKey(usize),
}

/// Shared by the clones of one piece of code (they compile to the same cubins). A new piece of code (a
/// changed load or store) starts with an empty memo.
#[derive(Clone, Default)]
pub(crate) struct Memo(Arc<Mutex<Vec<(Family, String, Compiled)>>>);

impl Memo {
    /// The compiled program of `family` for `arch`: from the memo, else from `compile` (which goes
    /// through the process and disk caches, or NVRTC), then kept. A memo hit reports itself as a memory
    /// hit.
    pub(crate) fn get_or(
        &self,
        family: Family,
        arch: &str,
        compile: impl FnOnce() -> Result<Compiled>,
    ) -> Result<Compiled> {
        let started = Instant::now();
        let found = self.lock().iter().find(|(f, a, _)| *f == family && a == arch).map(|(_, _, c)| c.clone());
        if let Some(c) = found {
            let report = CompileReport { hit: CacheHit::Memory, seconds: started.elapsed().as_secs_f64(), ..c.report };
            return Ok(Compiled { image: c.image, report });
        }
        let compiled = compile()?;
        self.lock().push((family, arch.to_string(), compiled.clone()));
        Ok(compiled)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(Family, String, Compiled)>> {
        // A panic elsewhere while the lock was held leaves nothing half-written: entries are pushed whole.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl fmt::Debug for Memo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Memo")
    }
}

/// Memos never make two pieces of code differ.
impl PartialEq for Memo {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for Memo {}
