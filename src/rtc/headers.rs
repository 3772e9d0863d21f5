//! The engine's headers for NVRTC, under one name each.
//!
//! NVRTC finds in-memory headers by the exact text of an `#include`, and treats two names as two files,
//! so `#pragma once` would not stop `"../core/params.cuh"` and `"params.cuh"` from defining everything
//! twice. Each header is therefore handed over as `dir/file.cuh`, with its own quoted includes rewritten
//! to that form (a line for a line, so NVRTC's line numbers match the files under `cuda/`).
use std::sync::OnceLock;

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/rtc_headers.rs"));
}

/// (name, text) of every header, its includes in `dir/file.cuh` form.
pub(crate) fn headers() -> &'static [(String, String)] {
    static HEADERS: OnceLock<Vec<(String, String)>> = OnceLock::new();
    HEADERS.get_or_init(|| {
        embedded::HEADERS.iter().map(|&(name, text)| (name.to_string(), canonical_includes(name, text))).collect()
    })
}

/// `text` of header `name` (`dir/file.cuh`) with each `#include "x"` resolved against `dir`.
fn canonical_includes(name: &str, text: &str) -> String {
    let dir = name.rsplit_once('/').map_or("", |(d, _)| d);
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let rest = line.trim_start().strip_prefix("#include \"").and_then(|r| r.split_once('"'));
        match rest {
            Some((target, tail)) => {
                out += "#include \"";
                out += &resolve(dir, target);
                out += "\"";
                out += tail;
            }
            None => out += line,
        }
    }
    out
}

/// `target` relative to `dir`, with `..` resolved: `("classic", "../core/ops.cuh")` → `core/ops.cuh`.
fn resolve(dir: &str, target: &str) -> String {
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for part in target.split('/') {
        match part {
            ".." => {
                parts.pop();
            }
            "." | "" => {}
            p => parts.push(p),
        }
    }
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn includes_resolve_to_one_name_per_header() {
        assert_eq!(resolve("classic", "../core/ops.cuh"), "core/ops.cuh");
        assert_eq!(resolve("core", "ops.cuh"), "core/ops.cuh");
        assert_eq!(resolve("kernels", "../persistent/select_work.cuh"), "persistent/select_work.cuh");
        let text = "#pragma once\n#include \"../core/ops.cuh\"  // why\n#include <cuda_fp16.h>\nint x;\n";
        assert_eq!(
            canonical_includes("classic/a.cuh", text),
            "#pragma once\n#include \"core/ops.cuh\"  // why\n#include <cuda_fp16.h>\nint x;\n"
        );
    }

    #[test]
    fn every_quoted_include_names_an_embedded_header() {
        let names: Vec<&str> = headers().iter().map(|(n, _)| n.as_str()).collect();
        assert!(names.contains(&"classic/select.cuh") && names.contains(&"rtc/select.cuh"));
        for (name, text) in headers() {
            for line in text.lines() {
                if let Some((target, _)) = line.trim_start().strip_prefix("#include \"").and_then(|r| r.split_once('"'))
                {
                    assert!(names.contains(&target), "{name} includes {target}, which is not embedded");
                }
            }
        }
    }
}
