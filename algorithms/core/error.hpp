// User-facing errors. Everything the CLI reports as "repix: error: ..." is a repix::Error;
// anything else escaping to main() is a bug and is reported as such.
#pragma once
#include <new>
#include <stdexcept>
#include <string>

namespace repix {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A name that names nothing in its list (a family, variant, suite, table): a bad value on the
// command line, which the CLI reports as a usage error (exit 2).
struct UnknownName : Error {
  using Error::Error;
};

// An input of an element type repix does not read (an int32 array, a float64 one): the command
// line says it as any other error; the Python module raises TypeError for it.
struct WrongType : Error {
  using Error::Error;
};

// Raised when a CUDA call fails; out-of-memory gets its own type so callers can fall back
// (for example to the streaming ECC variant) or report it as a clean message.
struct CudaError : Error {
  using Error::Error;
};
struct CudaOutOfMemory : CudaError {
  using CudaError::CudaError;
};

// An exception's one line for a user: std::bad_alloc as what it means (a limit such as
// `ulimit -v` reached), anything else as it says.
inline std::string message_of(const std::exception& e) {
  if (dynamic_cast<const std::bad_alloc*>(&e)) return "out of host memory (an allocation failed)";
  return e.what();
}

}  // namespace repix
