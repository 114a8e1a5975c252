// download(): pinned double buffering for large device-to-pageable copies (download.hpp says why).
#include "core/download.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>

#include "core/gpu.hpp"

namespace repix {

namespace {

// The process's two staging buffers, allocated on first use. Not freed at exit: the CUDA context
// may be gone by then, and the driver releases pinned memory with the process.
struct Staging {
  std::mutex lock;
  void* buffer[2] = {nullptr, nullptr};
};

Staging& staging() {
  static Staging* s = new Staging;  // never destroyed (above)
  return *s;
}

}  // namespace

bool is_pinned(const void* host) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, host) != cudaSuccess) {
    cudaGetLastError();  // a plain host pointer on older drivers: not an error
    return false;
  }
  return a.type == cudaMemoryTypeHost;
}

void download(void* host, const void* device, std::size_t bytes, cudaStream_t stream) {
  if (bytes < kDownloadDirectBelow || is_pinned(host)) {
    REPIX_CUDA(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream));
    REPIX_CUDA(cudaStreamSynchronize(stream));
    return;
  }
  Staging& st = staging();
  std::lock_guard<std::mutex> hold(st.lock);
  for (void*& b : st.buffer)
    if (!b) REPIX_CUDA(cudaHostAlloc(&b, kDownloadChunk, cudaHostAllocPortable));
  const auto* src = static_cast<const unsigned char*>(device);
  auto* dst = static_cast<unsigned char*>(host);
  const std::size_t chunk = download_chunk(bytes);
  const std::size_t chunks = (bytes + chunk - 1) / chunk;
  auto length = [&](std::size_t i) { return std::min(chunk, bytes - i * chunk); };
  CudaEvent arrived[2] = {CudaEvent(cudaEventDisableTiming), CudaEvent(cudaEventDisableTiming)};
  auto issue = [&](std::size_t i) {
    REPIX_CUDA(cudaMemcpyAsync(st.buffer[i % 2], src + i * chunk, length(i), cudaMemcpyDeviceToHost, stream));
    arrived[i % 2].record(stream);
  };
  issue(0);
  for (std::size_t i = 0; i < chunks; ++i) {
    // Buffer (i + 1) % 2 last held chunk i - 1, which the host finished copying out below.
    if (i + 1 < chunks) issue(i + 1);
    REPIX_CUDA(cudaEventSynchronize(arrived[i % 2].get()));
    const auto* from = static_cast<const unsigned char*>(st.buffer[i % 2]);
    unsigned char* to = dst + i * chunk;
    const std::size_t n = length(i);
    constexpr std::size_t kSlice = std::size_t(1) << 20;
    const long long slices = static_cast<long long>((n + kSlice - 1) / kSlice);
#pragma omp parallel for schedule(static)
    for (long long k = 0; k < slices; ++k) {
      const std::size_t at = static_cast<std::size_t>(k) * kSlice;
      std::memcpy(to + at, from + at, std::min(kSlice, n - at));
    }
  }
}

void prefault(void* host, std::size_t bytes) {
  constexpr std::size_t kPage = 4096;
  auto* bytes_at = static_cast<volatile unsigned char*>(host);
  const long long pages = static_cast<long long>((bytes + kPage - 1) / kPage);
#pragma omp parallel for schedule(static)
  for (long long k = 0; k < pages; ++k) bytes_at[static_cast<std::size_t>(k) * kPage] = 0;
  if (bytes > 0) bytes_at[bytes - 1] = 0;  // the last page, where `host` is not page-aligned
}

}  // namespace repix
