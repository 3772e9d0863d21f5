//! The NCCL transport (feature `nccl`): cudarc's safe `Comm`, one per local rank, and one `ncclAllGather`
//! of [`SUMMARY_WORDS`] words per rank per call (grouped when this process drives several ranks).
//!
//! cudarc loads libnccl at its first NCCL call and panics if it is missing; every constructor here first
//! checks that the library loads and returns [`Error::NcclNotFound`] if not. NVLink SHARP (multicast) is
//! of no use for a few words: run with `NCCL_NVLS_ENABLE=0`.
use super::exchange::{Exchange, SUMMARY_WORDS, check_buffers};
use crate::error::{Error, Result};
use cudarc::driver::{CudaSlice, CudaStream};
use cudarc::nccl::{Comm, Id, result::NcclError};
use std::sync::Arc;

/// Whether cudarc can load libnccl on this machine (what the `nccl` transport needs at run time).
///
/// cudarc looks for `libnccl.so` (or `libnccl.so.13`, `.12`, …), not `libnccl.so.2`, the only name
/// NVIDIA's packages ship (`pip install nvidia-nccl-cu13`: `nvidia/nccl/lib/libnccl.so.2`): a folder on
/// `LD_LIBRARY_PATH` needs a link `libnccl.so -> libnccl.so.2`.
///
/// # Example
/// ```
/// if !lookback::shard::nccl_available() {
///     let err = lookback::shard::NcclId::new().unwrap_err();
///     assert!(matches!(err, lookback::Error::NcclNotFound));
/// }
/// ```
pub fn nccl_available() -> bool {
    use std::env::consts::{DLL_PREFIX, DLL_SUFFIX};
    // The names cudarc tries (its `get_lib_name_candidates`, which exists only while cudarc loads its
    // libraries at run time, which another crate of the build may have switched to linking), so that a
    // `true` here means cudarc's first NCCL call does not panic.
    ["", ".13", ".12", ".11", ".10", ".9", ".1"].into_iter().any(|version| {
        let name = format!("{DLL_PREFIX}nccl{DLL_SUFFIX}{version}");
        // SAFETY: opening the library runs its initialisers, as cudarc's first NCCL call would.
        unsafe { libloading::Library::new(name) }.is_ok()
    })
}

fn require_nccl() -> Result<()> {
    if nccl_available() { Ok(()) } else { Err(Error::NcclNotFound) }
}

fn nccl_error(what: &'static str) -> impl FnOnce(NcclError) -> Error {
    move |e| Error::Nccl { what, message: format!("{e:?}") }
}

/// An NCCL unique id: rank 0 of a multi-process world creates it and hands its 128 bytes to every other
/// process (a file, a socket: the caller's choice).
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// use lookback::shard::NcclId;
/// if lookback::shard::nccl_available() {
///     let id = NcclId::new()?;
///     assert_eq!(NcclId::from_bytes(id.to_bytes()).to_bytes(), id.to_bytes());
/// }
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct NcclId(Id);

impl NcclId {
    /// A new id (`ncclGetUniqueId`).
    ///
    /// # Errors
    /// [`Error::NcclNotFound`], [`Error::Nccl`].
    pub fn new() -> Result<Self> {
        require_nccl()?;
        Id::new().map(NcclId).map_err(nccl_error("ncclGetUniqueId"))
    }

    /// Its 128 bytes.
    pub fn to_bytes(&self) -> [u8; 128] {
        self.0.internal().map(|c| c as u8)
    }

    /// The id whose bytes [`to_bytes`](Self::to_bytes) gave.
    pub fn from_bytes(bytes: [u8; 128]) -> Self {
        NcclId(Id::uninit(bytes.map(|b| b as std::ffi::c_char)))
    }
}

/// The NCCL transport: one communicator per rank this process drives.
#[derive(Debug)]
pub struct NcclExchange {
    comms: Vec<Comm>,
    streams: Vec<Arc<CudaStream>>,
}

impl NcclExchange {
    /// One process drives every rank: rank `i` on `streams[i]`, one GPU each (`ncclCommInitAll`).
    ///
    /// # Errors
    /// [`Error::NcclNotFound`]; [`Error::ShardMismatch`] without streams; [`Error::Nccl`] (NCCL refuses
    /// two ranks on one GPU).
    pub fn all_ranks(streams: Vec<Arc<CudaStream>>) -> Result<Self> {
        require_nccl()?;
        if streams.is_empty() {
            return Err(Error::ShardMismatch { reason: "a group needs at least one rank".into() });
        }
        let comms = Comm::from_devices(streams.clone()).map_err(nccl_error("ncclCommInitAll"))?;
        Ok(NcclExchange { comms, streams })
    }

    /// This process drives rank `rank` of `world_size` on `stream` (`ncclCommInitRank`); every process
    /// of the world calls this with the same `id`. Blocks until every rank has joined.
    ///
    /// # Errors
    /// [`Error::NcclNotFound`]; [`Error::ShardMismatch`] if `rank >= world_size`; [`Error::Nccl`].
    pub fn one_rank(stream: Arc<CudaStream>, rank: usize, world_size: usize, id: NcclId) -> Result<Self> {
        require_nccl()?;
        if rank >= world_size || i32::try_from(world_size).is_err() {
            return Err(Error::ShardMismatch { reason: format!("rank {rank} of a world of {world_size}") });
        }
        // cudarc's `from_rank` binds no context: NCCL takes the current one.
        stream.context().bind_to_thread()?;
        let comm = Comm::from_rank(stream.clone(), rank, world_size, id.0).map_err(nccl_error("ncclCommInitRank"))?;
        Ok(NcclExchange { comms: vec![comm], streams: vec![stream] })
    }
}

impl Exchange for NcclExchange {
    fn world_size(&self) -> usize {
        self.comms[0].world_size()
    }
    fn streams(&self) -> &[Arc<CudaStream>] {
        &self.streams
    }
    fn rank(&self, local: usize) -> usize {
        self.comms[local].rank()
    }
    fn all_gather(&mut self, send: &[CudaSlice<u64>], recv: &mut [CudaSlice<u64>]) -> Result<()> {
        check_buffers(self.comms.len(), self.world_size(), send, recv)?;
        debug_assert!(send.iter().all(|s| s.len() == SUMMARY_WORDS));
        // One thread driving several ranks must group their calls, or the first would wait for the others.
        cudarc::nccl::result::group_start().map_err(nccl_error("ncclGroupStart"))?;
        let gathered: Result<()> = self
            .comms
            .iter()
            .zip(send)
            .zip(recv.iter_mut())
            .try_for_each(|((comm, s), r)| comm.all_gather(s, r).map(drop).map_err(nccl_error("ncclAllGather")));
        let ended = cudarc::nccl::result::group_end().map_err(nccl_error("ncclGroupEnd"));
        gathered.and(ended.map(drop))
    }
}
