// CUDA helpers usable from plain C++ translation units: error checks that throw repix errors,
// RAII owners for device memory, streams and events, and device discovery. Nothing here needs
// a GPU to compile or to run: gpu_available() is false on machines without one.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <utility>

#include "core/error.hpp"

namespace repix {

// True when at least one CUDA device is usable. Cached after the first call.
bool gpu_available();
// Why no GPU is usable ("no CUDA device", driver message, ...); empty when one is.
std::string gpu_unavailable_reason();

// Throws repix::Error "this variant needs a GPU: <why not>" when no GPU is usable: what every
// GPU variant's end-to-end run says first on a machine without one.
void require_gpu();

[[noreturn]] void throw_cuda_error(cudaError_t err, const char* what, const char* file, int line);

// cudaMalloc of `bytes`; out of memory throws CudaOutOfMemory naming the bytes asked for and the
// device's free and total memory. Test hook: the environment variable REPIX_TEST_DEVICE_MEMORY
// (bytes) makes any single allocation larger than it fail as out of memory, as on a smaller GPU.
void* device_malloc(std::size_t bytes);

#define REPIX_CUDA(call)                                                   \
  do {                                                                     \
    cudaError_t repix_err_ = (call);                                       \
    if (repix_err_ != cudaSuccess)                                         \
      ::repix::throw_cuda_error(repix_err_, #call, __FILE__, __LINE__);    \
  } while (0)

// After a kernel launch: launch-configuration errors surface here.
#define REPIX_CUDA_LAUNCH() REPIX_CUDA(cudaGetLastError())

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) { allocate(count); }
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)),
                                            count_(std::exchange(o.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { reset(); }

  void allocate(std::size_t count) {
    reset();
    if (count == 0) return;
    ptr_ = static_cast<T*>(device_malloc(count * sizeof(T)));
    count_ = count;
  }
  // Grows (never shrinks) so that repeated calls in a timing loop do not reallocate.
  void ensure(std::size_t count) {
    if (count > count_) allocate(count);
  }
  void reset() noexcept {
    if (ptr_) cudaFree(ptr_);
    ptr_ = nullptr;
    count_ = 0;
  }
  T* get() const { return ptr_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

 private:
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

// A host-to-device copy that has landed when it returns. cudaMemcpy from pageable host memory
// may return before its DMA reaches the device, and CudaStream's streams are non-blocking (they
// do not wait for the legacy default stream the copy ran on): a kernel launched on one right
// after a plain cudaMemcpy can read the old contents.
inline void copy_to_device_sync(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  REPIX_CUDA(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
  REPIX_CUDA(cudaDeviceSynchronize());
}

class CudaStream {
 public:
  CudaStream() { REPIX_CUDA(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~CudaStream() { if (s_) cudaStreamDestroy(s_); }
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  cudaStream_t get() const { return s_; }
  void sync() const { REPIX_CUDA(cudaStreamSynchronize(s_)); }

 private:
  cudaStream_t s_ = nullptr;
};

class CudaEvent {
 public:
  explicit CudaEvent(unsigned flags = cudaEventDefault) { REPIX_CUDA(cudaEventCreateWithFlags(&e_, flags)); }
  ~CudaEvent() { if (e_) cudaEventDestroy(e_); }
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  cudaEvent_t get() const { return e_; }
  void record(cudaStream_t s) { REPIX_CUDA(cudaEventRecord(e_, s)); }
  // Milliseconds from `start` to this event (both must have completed).
  float ms_since(const CudaEvent& start) const {
    float ms = 0;
    REPIX_CUDA(cudaEventElapsedTime(&ms, start.e_, e_));
    return ms;
  }

 private:
  cudaEvent_t e_ = nullptr;
};

}  // namespace repix
