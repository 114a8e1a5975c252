// User-facing errors. Everything the CLI reports as "repix: error: ..." is a repix::Error;
// anything else escaping to main() is a bug and is reported as such.
#pragma once
#include <stdexcept>
#include <string>

namespace repix {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Raised when a CUDA call fails; out-of-memory gets its own type so callers can fall back
// (for example to the streaming ECC variant) or report it as a clean message.
struct CudaError : Error {
  using Error::Error;
};
struct CudaOutOfMemory : CudaError {
  using CudaError::CudaError;
};

}  // namespace repix
