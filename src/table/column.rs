//! [`ColumnRef`] and [`ColumnMut`]: device buffers of any element type, borrowed for one table filter, so
//! that one call takes columns of different types.
use crate::rtc::DeviceType;
use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut, SyncOnDrop};
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

/// A borrowed device buffer with its element type erased: what the launch needs of it.
trait Erased {
    fn stream(&self) -> &Arc<CudaStream>;
    fn ptr<'s>(&'s self, stream: &'s CudaStream) -> (u64, SyncOnDrop<'s>);
}

/// The same for a buffer the call writes.
trait ErasedMut {
    fn stream(&self) -> &Arc<CudaStream>;
    fn ptr_mut<'s>(&'s mut self, stream: &'s CudaStream) -> (u64, SyncOnDrop<'s>);
}

struct Shared<'a, T, D: ?Sized>(&'a D, PhantomData<fn() -> T>);
struct Exclusive<'a, T, D: ?Sized>(&'a mut D, PhantomData<fn() -> T>);

impl<T, D: DevicePtr<T> + ?Sized> Erased for Shared<'_, T, D> {
    fn stream(&self) -> &Arc<CudaStream> {
        self.0.stream()
    }
    fn ptr<'s>(&'s self, stream: &'s CudaStream) -> (u64, SyncOnDrop<'s>) {
        self.0.device_ptr(stream)
    }
}

impl<T, D: DevicePtrMut<T> + ?Sized> ErasedMut for Exclusive<'_, T, D> {
    fn stream(&self) -> &Arc<CudaStream> {
        self.0.stream()
    }
    fn ptr_mut<'s>(&'s mut self, stream: &'s CudaStream) -> (u64, SyncOnDrop<'s>) {
        self.0.device_ptr_mut(stream)
    }
}

/// What the checks know of a column: its length and its items' size and type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shape {
    pub len: usize,
    pub bytes: usize,
    pub type_name: &'static str,
}

/// An input column of a table filter: a device buffer (`CudaSlice<T>`, `CudaView<T>`, …) of any
/// [`DeviceType`] — the element types or your own `#[repr(C)]` structs — borrowed for the call. The
/// filter moves items as their bytes: columns of 1, 2, 4 or 8 bytes per item.
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// use lookback::table::ColumnRef;
/// let prices = stream.clone_htod(&[1.5f64, 2.5, 3.5])?;
/// let column = ColumnRef::new(&prices);
/// assert_eq!((column.len(), column.item_bytes(), column.type_name()), (3, 8, "double"));
/// // A view of part of a buffer is a column too (it need not be 16-byte aligned).
/// let tail = prices.slice(1..);
/// assert_eq!(ColumnRef::new(&tail).len(), 2);
/// # Ok(()) }
/// ```
pub struct ColumnRef<'a> {
    column: Box<dyn Erased + 'a>,
    shape: Shape,
}

impl<'a> ColumnRef<'a> {
    /// The column `column`, borrowed until the `ColumnRef` is dropped.
    pub fn new<T: DeviceType, D: DevicePtr<T>>(column: &'a D) -> Self {
        Self::erase::<T, D>(column, T::CUDA_NAME)
    }

    /// Any buffer of `T` (flags of `bool`, which is no [`DeviceType`]), named `type_name` in errors.
    pub(crate) fn erase<T: 'static, D: DevicePtr<T>>(column: &'a D, type_name: &'static str) -> Self {
        let shape = Shape { len: column.len(), bytes: size_of::<T>(), type_name };
        ColumnRef { column: Box::new(Shared(column, PhantomData)), shape }
    }

    /// Rows.
    pub fn len(&self) -> usize {
        self.shape.len
    }

    /// Whether the column has no rows.
    pub fn is_empty(&self) -> bool {
        self.shape.len == 0
    }

    /// Bytes of one item.
    pub fn item_bytes(&self) -> usize {
        self.shape.bytes
    }

    /// The items' CUDA type (`float`, `uint64_t`, your struct's name).
    pub fn type_name(&self) -> &'static str {
        self.shape.type_name
    }

    pub(crate) fn shape(&self) -> Shape {
        self.shape
    }
    pub(crate) fn stream(&self) -> &Arc<CudaStream> {
        self.column.stream()
    }
    /// The device address, and the guard that records the read on `stream` when dropped.
    pub(crate) fn ptr<'s>(&'s self, stream: &'s CudaStream) -> (u64, SyncOnDrop<'s>) {
        self.column.ptr(stream)
    }
}

impl fmt::Debug for ColumnRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ColumnRef").field("len", &self.shape.len).field("type", &self.shape.type_name).finish()
    }
}

/// An output column of a table filter: a device buffer of any [`DeviceType`] of 1, 2, 4 or 8 bytes,
/// borrowed mutably for the call. It receives the selected rows of the input column in the same place of
/// the call's list, so it must have that column's item size and at least as many rows (every row may be
/// selected). Rows past the count are left alone.
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// use lookback::table::ColumnMut;
/// let mut out = stream.alloc_zeros::<u16>(10)?;
/// let column = ColumnMut::new(&mut out);
/// assert_eq!((column.len(), column.item_bytes()), (10, 2));
/// # Ok(()) }
/// ```
pub struct ColumnMut<'a> {
    column: Box<dyn ErasedMut + 'a>,
    shape: Shape,
}

impl<'a> ColumnMut<'a> {
    /// The column `column`, borrowed mutably until the `ColumnMut` is dropped.
    pub fn new<T: DeviceType, D: DevicePtrMut<T>>(column: &'a mut D) -> Self {
        let shape = Shape { len: column.len(), bytes: size_of::<T>(), type_name: T::CUDA_NAME };
        ColumnMut { column: Box::new(Exclusive(column, PhantomData)), shape }
    }

    /// A byte buffer as a column of items of `shape` (`shape.len · shape.bytes` bytes at most: the
    /// one-shot filter's new columns, which the kernel fills with items moved as their bytes).
    pub(crate) fn bytes(buffer: &'a mut cudarc::driver::CudaSlice<u8>, shape: Shape) -> Self {
        debug_assert!(buffer.len() >= shape.len * shape.bytes);
        ColumnMut { column: Box::new(Exclusive(buffer, PhantomData::<fn() -> u8>)), shape }
    }

    /// Rows it has room for.
    pub fn len(&self) -> usize {
        self.shape.len
    }

    /// Whether it has room for no row.
    pub fn is_empty(&self) -> bool {
        self.shape.len == 0
    }

    /// Bytes of one item.
    pub fn item_bytes(&self) -> usize {
        self.shape.bytes
    }

    pub(crate) fn shape(&self) -> Shape {
        self.shape
    }
    pub(crate) fn stream(&self) -> &Arc<CudaStream> {
        self.column.stream()
    }
    /// The device address, and the guard that records the write on `stream` when dropped.
    pub(crate) fn ptr_mut<'s>(&'s mut self, stream: &'s CudaStream) -> (u64, SyncOnDrop<'s>) {
        self.column.ptr_mut(stream)
    }
}

impl fmt::Debug for ColumnMut<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ColumnMut").field("len", &self.shape.len).field("type", &self.shape.type_name).finish()
    }
}
