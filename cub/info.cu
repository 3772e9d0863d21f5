// What the benches print about the shim: CUB's version and the text of an error code.
#include "shim.cuh"

// CUB_VERSION: major * 100000 + minor * 100 + subminor (300001 is 3.0.1).
extern "C" int lookback_cub_version() { return CUB_VERSION; }

// cudaGetErrorString's static text for a code the other entry points returned.
extern "C" const char* lookback_cub_error_string(int code) {
  return cudaGetErrorString(static_cast<cudaError_t>(code));
}
