#include "core/gpu.hpp"

#include <cstdlib>
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
    if (e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice) {
      // The runtime says "CUDA driver version is insufficient" also where there is no NVIDIA
      // driver at all, which reads as "upgrade your driver".
      r.reason = std::string("no NVIDIA GPU and driver usable here (the CUDA runtime says: ") + cudaGetErrorString(e) + ")";
      cudaGetLastError();
    } else if (e != cudaSuccess) {
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

void require_gpu() {
  if (!gpu_available()) throw Error("this variant needs a GPU: " + gpu_unavailable_reason());
}

void* device_malloc(std::size_t bytes) {
  std::size_t limit = 0;
  // Test hook (recorded in a report's env.test_hooks): allocations above N bytes fail as on a
  // smaller GPU.
  if (const char* forced = std::getenv("REPIX_TEST_DEVICE_MEMORY")) limit = std::strtoull(forced, nullptr, 10);
  void* p = nullptr;
  const cudaError_t err = limit > 0 && bytes > limit ? cudaErrorMemoryAllocation : cudaMalloc(&p, bytes);
  if (err == cudaSuccess) return p;
  if (err != cudaErrorMemoryAllocation) throw_cuda_error(err, "cudaMalloc", __FILE__, __LINE__);
  cudaGetLastError();  // clear it: the device stays usable
  std::size_t free_b = 0, total_b = 0;
  cudaMemGetInfo(&free_b, &total_b);
  if (limit > 0 && limit < free_b) free_b = limit;
  std::ostringstream o;
  o << "GPU out of memory: an allocation of " << bytes << " bytes (" << (bytes >> 20) << " MiB) failed with "
    << (free_b >> 20) << " MiB free of " << (total_b >> 20) << " MiB"
    << (limit > 0 ? " (free memory limited by REPIX_TEST_DEVICE_MEMORY)" : "");
  throw CudaOutOfMemory(o.str());
}

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
