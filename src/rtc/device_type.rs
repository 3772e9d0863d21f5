//! [`DeviceType`]: a Rust type that user code ([`UserScanOp`](super::UserScanOp)) may take and return,
//! with its CUDA C++ name and declaration.
use crate::error::Error;
use cudarc::driver::DeviceRepr;
use half::{bf16, f16};

/// A type that user code on the GPU reads or writes: its CUDA C++ name, and the declaration that defines
/// it in the generated program (none for the built-in element types, which the crate's headers define).
///
/// Implemented for the twelve [`Element`](crate::Element) types. Implement it for a `#[repr(C)]` struct
/// to scan it, together with cudarc's [`DeviceRepr`] (so that device buffers of it can be made):
///
/// ```
/// use lookback::rtc::DeviceType;
/// /// One step of a linear recurrence h ↦ a·h + b.
/// #[repr(C)]
/// #[derive(Clone, Copy, Debug, PartialEq)]
/// struct Affine {
///     a: f32,
///     b: f32,
/// }
/// // SAFETY: #[repr(C)], no padding, every bit pattern valid, and the CUDA struct below has the same
/// // fields in the same order.
/// unsafe impl lookback::cudarc::driver::DeviceRepr for Affine {}
/// unsafe impl DeviceType for Affine {
///     const CUDA_NAME: &'static str = "Affine";
///     const CUDA_DECL: &'static str = "struct Affine { float a; float b; };";
/// }
/// ```
///
/// Sizes: input and output items of 1, 2, 4, 8 or 16 bytes (tiles move in 16-byte chunks); accumulators
/// of 1 to 32 bytes for the scans and reductions (a tile's status entry takes one 16-byte unit per 8
/// bytes), of 1, 2, 4 or 8 bytes for the keyed primitives. Other sizes are an
/// [`Error::UnsupportedSize`](crate::Error::UnsupportedSize) before anything is compiled. The size and
/// alignment are checked against the CUDA type's by the compiler: a difference is an
/// [`Error::LayoutMismatch`](crate::Error::LayoutMismatch) at the first compile.
///
/// # Safety
/// The GPU reads and writes values of this type as raw bytes, and the host reads the bytes the GPU
/// wrote, so the implementor promises that
/// - the type is `#[repr(C)]` (or a primitive) with no padding bytes (an exclusive scan's initial value
///   travels as its bytes);
/// - every bit pattern of its size is a valid value (results are read back unchecked);
/// - `CUDA_DECL` declares `CUDA_NAME` with the same fields, types and order, so both sides agree on what
///   each byte means. The size and alignment check catches most slips, not a swapped pair of fields.
pub unsafe trait DeviceType: DeviceRepr + Copy + Send + Sync + 'static {
    /// The CUDA C++ name of the type (`float`, `uint64_t`, `Affine`).
    const CUDA_NAME: &'static str;
    /// CUDA C++ that declares it, or `""` for a type the headers already have.
    const CUDA_DECL: &'static str = "";
}

macro_rules! builtin {
    ($($t:ty => $c:literal),* $(,)?) => {$(
        // SAFETY: a primitive of the same size, alignment and representation as the CUDA type, every bit
        // pattern valid.
        unsafe impl DeviceType for $t {
            const CUDA_NAME: &'static str = $c;
        }
    )*};
}
builtin!(i8 => "int8_t", i16 => "int16_t", i32 => "int32_t", i64 => "int64_t", u8 => "uint8_t",
    u16 => "uint16_t", u32 => "uint32_t", u64 => "uint64_t", f32 => "float", f64 => "double",
    f16 => "__half", bf16 => "__nv_bfloat16");

/// A type as a generated program needs it: name, declaration, Rust's size and alignment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TypeInfo {
    pub name: &'static str,
    pub decl: &'static str,
    pub size: usize,
    pub align: usize,
}

impl TypeInfo {
    pub(crate) fn of<T: DeviceType>() -> Self {
        TypeInfo { name: T::CUDA_NAME, decl: T::CUDA_DECL, size: size_of::<T>(), align: align_of::<T>() }
    }

    /// Whether programs over this type need the CUDA headers of the half types.
    pub(crate) fn half(&self) -> bool {
        matches!(self.name, "__half" | "__nv_bfloat16")
    }

    /// Static assertions that the CUDA type has Rust's size and alignment. Each possible wrong value has
    /// an assertion of its own, so NVRTC's message names the CUDA value (`layout_mismatch` reads it).
    pub(crate) fn layout_checks(&self) -> String {
        let mut s = String::new();
        for k in (1..=64).filter(|&k| k != self.size) {
            s += &format!("static_assert(sizeof({0}) != {k}, \"{LAYOUT_MARK} {0} size {k}\");\n", self.name);
        }
        s += &format!(
            "static_assert(sizeof({0}) <= 64 || sizeof({0}) == {1}, \"{LAYOUT_MARK} {0} size >64\");\n",
            self.name, self.size
        );
        for k in [1, 2, 4, 8, 16].into_iter().filter(|&k| k != self.align) {
            s += &format!("static_assert(alignof({0}) != {k}, \"{LAYOUT_MARK} {0} align {k}\");\n", self.name);
        }
        s
    }
}

/// The declarations and layout assertions of `types`, each name once (the element types have no
/// declaration: the headers define them), the user's declarations under a `#line` of their own.
pub(crate) fn declare_types(types: &[&TypeInfo]) -> String {
    let mut p = String::new();
    let mut declared: Vec<&str> = Vec::new();
    for t in types {
        if declared.contains(&t.name) {
            continue;
        }
        declared.push(t.name);
        if !t.decl.is_empty() {
            p += &format!(
                "#line 1 \"{}-types\"\n{}\n#line 1 \"lookback-generated\"\n",
                super::compile::USER_FILE,
                t.decl
            );
        }
        p += &t.layout_checks();
    }
    p
}

/// A compile error turned into [`Error::LayoutMismatch`] where a layout assertion on one of `types`
/// failed; any other error unchanged.
pub(crate) fn layout_error(e: Error, types: &[&TypeInfo]) -> Error {
    let Error::Compile { log, .. } = &e else { return e };
    let Some((name, cuda_size, cuda_align)) = layout_mismatch(log) else { return e };
    let Some(t) = types.iter().find(|t| t.name == name) else { return e };
    Error::LayoutMismatch { type_name: name, rust_size: t.size, rust_align: t.align, cuda_size, cuda_align }
}

/// The prefix of the layout assertions' messages.
pub(crate) const LAYOUT_MARK: &str = "lookback-layout:";

/// From a failed compile's log, the first type whose layout differs: (name, CUDA size, CUDA alignment),
/// each `None` where it agrees with Rust's (or is over 64 bytes).
pub(crate) fn layout_mismatch(log: &str) -> Option<(String, Option<usize>, Option<usize>)> {
    let mut found: Option<(String, Option<usize>, Option<usize>)> = None;
    for rest in log.split(LAYOUT_MARK).skip(1) {
        let mut words = rest.split_whitespace();
        let (Some(name), Some(what), Some(value)) = (words.next(), words.next(), words.next()) else { continue };
        let value = value.trim_end_matches(|c: char| !c.is_ascii_digit()).parse().ok();
        let entry = found.get_or_insert_with(|| (name.to_string(), None, None));
        if entry.0 != name {
            continue;
        }
        match what {
            "size" => entry.1 = entry.1.or(value),
            "align" => entry.2 = entry.2.or(value),
            _ => {}
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_layout_message_gives_the_cuda_values() {
        let log = "lookback-rtc.cu(70): error: static assertion failed with \"lookback-layout: Pair size 12\"\n\
                   lookback-rtc.cu(90): error: static assertion failed with \"lookback-layout: Pair align 8\"\n";
        assert_eq!(layout_mismatch(log), Some(("Pair".to_string(), Some(12), Some(8))));
        assert_eq!(layout_mismatch("x(1): error: nope"), None);
    }

    #[test]
    fn the_checks_skip_rusts_own_values() {
        let checks = TypeInfo::of::<u64>().layout_checks();
        assert!(checks.contains("sizeof(uint64_t) != 4,") && !checks.contains("sizeof(uint64_t) != 8,"));
        assert!(!checks.contains("alignof(uint64_t) != 8,") && checks.contains("alignof(uint64_t) != 16,"));
    }
}
