//! User code over one element type, as it goes into a program. `pub` in a private module: the sealed
//! [`Predicate`](crate::Predicate) trait hands it to the crate without making it part of the API.
use super::memo::Memo;
use crate::element::Element;
use crate::kernels::DType;

/// User code over one element type, as it goes into a program: the text around it and the user's own
/// lines (kept apart so that NVRTC's messages point at the user's lines: `#line`).
#[derive(Clone, Debug)]
pub struct UserCode {
    /// The element type.
    pub(crate) dtype: DType,
    /// The user's text.
    pub(crate) user: String,
    /// Generated lines before and after it, inside `bool operator()(const T x) const { … }`.
    before: &'static str,
    after: &'static str,
    /// Its cubins so far.
    pub(crate) memo: Memo,
}

impl UserCode {
    /// A function body (`return …;` statements).
    pub(crate) fn body<T: Element>(user: &str) -> Self {
        UserCode { dtype: T::DTYPE, user: user.trim_end().to_string(), before: "", after: "", memo: Memo::default() }
    }

    /// An expression.
    pub(crate) fn expression<T: Element>(user: &str) -> Self {
        UserCode {
            dtype: T::DTYPE,
            user: user.trim_end().to_string(),
            before: "return (",
            after: ");",
            memo: Memo::default(),
        }
    }

    /// The functor `name` whose call operator runs the code.
    pub(crate) fn functor(&self, name: &str, file: &str) -> String {
        format!(
            "struct {name} {{\n    __device__ __forceinline__ bool operator()(const {ty} x) const {{\n        {before}\n\
             #line 1 \"{file}\"\n{user}\n#line 1 \"lookback-generated\"\n        {after}\n    }}\n}};\n",
            ty = self.dtype.c_type(),
            before = self.before,
            user = self.user,
            after = self.after,
        )
    }

    pub(crate) fn half(&self) -> bool {
        super::half(self.dtype)
    }
}
