//! The one table between lookback's element types and Arrow's primitive types.
use crate::element::Element;
use crate::kernels::DType;
use arrow_array::ArrowPrimitiveType;
use arrow_array::types::{
    Float16Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type,
    UInt32Type, UInt64Type,
};
use arrow_buffer::ArrowNativeType;
use arrow_schema::DataType;
use half::f16;

/// An element type that has an Arrow primitive type of the same layout: every [`Element`] except
/// [`half::bf16`], for which Arrow has no type.
///
/// `Arrow` is the primitive type [`download`](super::download) and the run conversions produce; an array
/// of another primitive type with the same native type (`Date32Type`, `TimestampMicrosecondType`, …)
/// uploads through [`upload`](super::upload) and downloads through [`download_as`](super::download_as).
/// Implemented only by this crate (it extends the sealed [`Element`]).
///
/// | element | `Arrow` | [`DataType`] |
/// |---|---|---|
/// | `i8`, `i16`, `i32`, `i64` | `Int8Type` … `Int64Type` | `Int8` … `Int64` |
/// | `u8`, `u16`, `u32`, `u64` | `UInt8Type` … `UInt64Type` | `UInt8` … `UInt64` |
/// | `f32`, `f64` | `Float32Type`, `Float64Type` | `Float32`, `Float64` |
/// | [`half::f16`] | `Float16Type` | `Float16` |
/// | [`half::bf16`] | none | none |
///
/// # Example
/// ```
/// use arrow_array::types::{Float16Type, Int32Type};
/// use arrow_schema::DataType;
/// use lookback::arrow::ArrowElement;
/// use lookback::half::f16;
/// fn arrow_type_of<T: ArrowElement>() -> DataType {
///     <T::Arrow as arrow_array::ArrowPrimitiveType>::DATA_TYPE
/// }
/// assert_eq!(arrow_type_of::<i32>(), DataType::Int32);
/// assert_eq!(arrow_type_of::<f16>(), DataType::Float16);
/// let _: Option<<i32 as ArrowElement>::Arrow> = None::<Int32Type>;
/// let _: Option<<f16 as ArrowElement>::Arrow> = None::<Float16Type>;
/// ```
pub trait ArrowElement: Element + ArrowNativeType {
    /// The Arrow primitive type whose native type is `Self`.
    type Arrow: ArrowPrimitiveType<Native = Self>;
}

/// The table: element type, its Arrow primitive type, and the two enums' names for it.
macro_rules! arrow_elements {
    ($($t:ty => $arrow:ty, $dtype:ident, $data_type:ident);* $(;)?) => {
        $(impl ArrowElement for $t {
            type Arrow = $arrow;
        })*

        /// The Arrow [`DataType`] of a lookback element type; `None` for [`DType::Bf16`], which Arrow
        /// lacks.
        ///
        /// # Example
        /// ```
        /// use arrow_schema::DataType;
        /// use lookback::DType;
        /// use lookback::arrow::data_type;
        /// assert_eq!(data_type(DType::U16), Some(DataType::UInt16));
        /// assert_eq!(data_type(DType::F16), Some(DataType::Float16));
        /// assert_eq!(data_type(DType::Bf16), None);
        /// ```
        pub fn data_type(dtype: DType) -> Option<DataType> {
            match dtype {
                $(DType::$dtype => Some(DataType::$data_type),)*
                _ => None,
            }
        }

        /// The lookback element type of an Arrow [`DataType`]: the eleven numeric types of
        /// [`ArrowElement`]'s table; `None` for every other type, including logical types stored as
        /// integers (`Date32`, `Timestamp`, …: upload those with [`upload`](super::upload), which takes
        /// any primitive array of an element type).
        ///
        /// # Example
        /// ```
        /// use arrow_schema::{DataType, TimeUnit};
        /// use lookback::DType;
        /// use lookback::arrow::dtype;
        /// assert_eq!(dtype(&DataType::Int64), Some(DType::I64));
        /// assert_eq!(dtype(&DataType::Float16), Some(DType::F16));
        /// assert_eq!(dtype(&DataType::Timestamp(TimeUnit::Microsecond, None)), None);
        /// assert_eq!(dtype(&DataType::Utf8), None);
        /// ```
        pub fn dtype(data_type: &DataType) -> Option<DType> {
            match data_type {
                $(DataType::$data_type => Some(DType::$dtype),)*
                _ => None,
            }
        }

        /// Runs `visitor` with the element type of `data_type` (the table's types only).
        pub(super) fn visit<V: ElementVisitor>(data_type: &DataType, visitor: V) -> Option<V::Out> {
            match data_type {
                $(DataType::$data_type => Some(visitor.visit::<$t>()),)*
                _ => None,
            }
        }
    };
}

/// Code generic over the element type of an Arrow array known only at run time ([`visit`]).
pub(super) trait ElementVisitor {
    type Out;
    fn visit<T: ArrowElement + crate::rtc::DeviceType>(self) -> Self::Out;
}

arrow_elements! {
    i8 => Int8Type, I8, Int8;
    i16 => Int16Type, I16, Int16;
    i32 => Int32Type, I32, Int32;
    i64 => Int64Type, I64, Int64;
    u8 => UInt8Type, U8, UInt8;
    u16 => UInt16Type, U16, UInt16;
    u32 => UInt32Type, U32, UInt32;
    u64 => UInt64Type, U64, UInt64;
    f32 => Float32Type, F32, Float32;
    f64 => Float64Type, F64, Float64;
    f16 => Float16Type, F16, Float16;
}
