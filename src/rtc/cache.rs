//! Compiled cubins, cached in memory (per process) and on disk (across processes).
//!
//! A cubin is found by its *key*: the complete program text, the NVRTC options (the architecture among
//! them), NVRTC's version and this crate's version. The program text includes the user's code and names
//! the element type and the kernel family; the engine's headers are part of the crate version's sources
//! and are hashed in too, so a changed header cannot be served an old cubin by a build of the same
//! version. On disk the file name is a 64-bit hash of the key and the file holds the key itself, compared
//! in full on every load, so a hash collision is a miss, never a wrong kernel.
//!
//! The disk cache lives in `LOOKBACK_CACHE_DIR`, else `$XDG_CACHE_HOME/lookback`, else
//! `$HOME/.cache/lookback`. `LOOKBACK_CACHE_DIR=off` (or an empty value) keeps compiles in memory only.
//! A cache that cannot be read or written costs a compile, never an error.
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

/// The first bytes of a cache file (a format change bumps the digit).
const MAGIC: &[u8] = b"lookback-rtc-cache 1\n";

/// Where a cubin came from, for [`crate::rtc::CompileReport`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheHit {
    /// Compiled earlier in this process.
    Memory,
    /// Read from the disk cache.
    Disk,
    /// Compiled by NVRTC now.
    Compiled,
}

/// The in-process images: index = runtime image id (`crate::kernels::Kernel::runtime`).
struct Images {
    by_key: HashMap<String, usize>,
    cubins: Vec<Arc<Vec<u8>>>,
}

fn images() -> &'static Mutex<Images> {
    static IMAGES: OnceLock<Mutex<Images>> = OnceLock::new();
    IMAGES.get_or_init(|| Mutex::new(Images { by_key: HashMap::new(), cubins: Vec::new() }))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The cubin of runtime image `id`.
pub(crate) fn cubin(id: usize) -> Option<Arc<Vec<u8>>> {
    lock(images()).cubins.get(id).cloned()
}

/// The runtime image id of `key` if this process has it.
pub(crate) fn in_memory(key: &str) -> Option<usize> {
    lock(images()).by_key.get(key).copied()
}

/// Registers `cubin` under `key` (the first registration wins) and returns its image id.
pub(crate) fn register(key: &str, cubin: Vec<u8>) -> usize {
    let mut images = lock(images());
    if let Some(&id) = images.by_key.get(key) {
        return id;
    }
    let id = images.cubins.len();
    images.cubins.push(Arc::new(cubin));
    images.by_key.insert(key.to_string(), id);
    id
}

/// The disk cache folder, or None when turned off or no home is known.
pub(crate) fn dir() -> Option<PathBuf> {
    match std::env::var_os("LOOKBACK_CACHE_DIR") {
        Some(v) if v.is_empty() || v == "off" => None,
        Some(v) => Some(PathBuf::from(v)),
        None => std::env::var_os("XDG_CACHE_HOME")
            .filter(|v| !v.is_empty())
            .map(|v| PathBuf::from(v).join("lookback"))
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache").join("lookback"))),
    }
}

/// FNV-1a, 64 bits: stable across Rust versions and platforms (the file name must not change with them).
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3))
}

fn file_for(dir: &std::path::Path, key: &str) -> PathBuf {
    dir.join(format!("{:016x}.cubin", fnv1a(key.as_bytes())))
}

/// The cubin cached on disk for `key`, if its file holds exactly this key.
pub(crate) fn load(key: &str) -> Option<Vec<u8>> {
    load_from(&dir()?, key)
}

fn load_from(dir: &std::path::Path, key: &str) -> Option<Vec<u8>> {
    let bytes = std::fs::read(file_for(dir, key)).ok()?;
    let rest = bytes.strip_prefix(MAGIC)?;
    let (len, rest) = rest.split_first_chunk::<8>()?;
    let len = usize::try_from(u64::from_le_bytes(*len)).ok()?;
    if rest.len() < len || &rest[..len] != key.as_bytes() {
        return None;
    }
    Some(rest[len..].to_vec())
}

/// Writes `cubin` for `key` to the disk cache: to a temporary file renamed into place, so that a reader
/// in another process sees a whole file or none. Failures are ignored (the next process compiles again).
pub(crate) fn store(key: &str, cubin: &[u8]) {
    if let Some(dir) = dir() {
        store_in(&dir, key, cubin);
    }
}

fn store_in(dir: &std::path::Path, key: &str, cubin: &[u8]) {
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let file = file_for(dir, key);
    let tmp = file.with_extension(format!("tmp{}", std::process::id()));
    let mut bytes = Vec::with_capacity(MAGIC.len() + 8 + key.len() + cubin.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&(key.len() as u64).to_le_bytes());
    bytes.extend_from_slice(key.as_bytes());
    bytes.extend_from_slice(cubin);
    if std::fs::write(&tmp, &bytes).is_ok() && std::fs::rename(&tmp, &file).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_is_the_published_function() {
        // Test vectors of FNV-1a 64.
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn a_stored_cubin_loads_back_only_for_its_own_key() {
        let dir = std::env::temp_dir().join(format!("lookback-cache-test-{}", std::process::id()));
        store_in(&dir, "key one", b"cubin one");
        assert_eq!(load_from(&dir, "key one").as_deref(), Some(&b"cubin one"[..]));
        assert_eq!(load_from(&dir, "key two"), None);
        // A file whose key differs (as after a hash collision) is a miss.
        std::fs::copy(file_for(&dir, "key one"), file_for(&dir, "key two")).unwrap();
        assert_eq!(load_from(&dir, "key two"), None);
        // A truncated file too.
        std::fs::write(file_for(&dir, "key one"), &MAGIC[..5]).unwrap();
        assert_eq!(load_from(&dir, "key one"), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn registering_a_key_twice_keeps_the_first_image() {
        let a = register("test key: registering twice", vec![1, 2, 3]);
        let b = register("test key: registering twice", vec![9]);
        assert_eq!(a, b);
        assert_eq!(*cubin(a).unwrap(), [1, 2, 3]);
        assert_eq!(in_memory("test key: registering twice"), Some(a));
        assert_eq!(in_memory("test key: never registered"), None);
    }
}
