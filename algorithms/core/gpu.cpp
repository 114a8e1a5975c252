#include "core/gpu.hpp"

#include <mutex>
#include <sstream>

namespace repix {

namespace {
struct Probe {
  bool ok = false;
  std::string reason;
};
const Probe& probe() {
  static Probe p = [] {
    Probe r;
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
      r.reason = std::string("no usable CUDA device (") + cudaGetErrorString(e) + ")";
      cudaGetLastError();
    } else if (n == 0) {
      r.reason = "no CUDA device";
    } else {
      r.ok = true;
    }
    return r;
  }();
  return p;
}
}  // namespace

bool gpu_available() { return probe().ok; }
std::string gpu_unavailable_reason() { return probe().reason; }

void throw_cuda_error(cudaError_t err, const char* what, const char* file, int line) {
  std::ostringstream o;
  if (err == cudaErrorMemoryAllocation) {
    size_t free_b = 0, total_b = 0;
    cudaGetLastError();
    cudaMemGetInfo(&free_b, &total_b);
    o << "GPU out of memory (" << (free_b >> 20) << " MiB free of " << (total_b >> 20)
      << " MiB) in " << what;
    throw CudaOutOfMemory(o.str());
  }
  o << "CUDA error " << cudaGetErrorName(err) << " (" << cudaGetErrorString(err) << ") in "
    << what << " at " << file << ":" << line;
  throw CudaError(o.str());
}

}  // namespace repix
