#include "core/gpu/first_where.hpp"

#include <cmath>

#include "core/gpu.hpp"

namespace repix::gpu {

namespace {

// A grid-stride pass whose threads fold the smallest bad index they see into one word. The word
// starts at n; atomicMin keeps the smallest, so the answer does not depend on the launch. These
// checks run once per call on inputs already on the device: one read of the input at memory speed
// is all they cost, so nothing cleverer (no early exit, no block-level reduction) is worth its code.
template <class Bad>
__global__ void first_where_kernel(std::int64_t n, Bad bad, unsigned long long* first) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    if (bad(i)) {
      atomicMin(first, static_cast<unsigned long long>(i));
      return;  // a later index of this thread is larger
    }
}

struct NonFinite {
  const float* d;
  __device__ bool operator()(std::int64_t i) const { return !isfinite(d[i]); }
};
struct Above {
  const std::uint16_t* d;
  std::uint16_t limit;
  __device__ bool operator()(std::int64_t i) const { return d[i] > limit; }
};
template <class T>
struct Greater {
  const T* a;
  const T* b;
  __device__ bool operator()(std::int64_t i) const { return a[i] > b[i]; }
};

template <class Bad>
std::int64_t first_where(std::int64_t n, Bad bad, cudaStream_t stream) {
  if (n <= 0) return n;
  DeviceBuffer<unsigned long long> word(1);
  const auto start = static_cast<unsigned long long>(n);
  REPIX_CUDA(cudaMemcpyAsync(word.get(), &start, sizeof start, cudaMemcpyHostToDevice, stream));
  constexpr int kThreads = 256;
  const std::int64_t wanted = (n + kThreads - 1) / kThreads;
  const int blocks = static_cast<int>(wanted < 4096 ? wanted : 4096);
  first_where_kernel<<<blocks, kThreads, 0, stream>>>(n, bad, word.get());
  REPIX_CUDA_LAUNCH();
  unsigned long long first = start;
  REPIX_CUDA(cudaMemcpyAsync(&first, word.get(), sizeof first, cudaMemcpyDeviceToHost, stream));
  REPIX_CUDA(cudaStreamSynchronize(stream));
  return static_cast<std::int64_t>(first);
}

template <class T>
T element(const T* data, std::int64_t i, cudaStream_t stream) {
  T v{};
  REPIX_CUDA(cudaMemcpyAsync(&v, data + i, sizeof v, cudaMemcpyDeviceToHost, stream));
  REPIX_CUDA(cudaStreamSynchronize(stream));
  return v;
}

}  // namespace

std::int64_t first_nonfinite(const float* data, std::int64_t n, bool* is_nan, cudaStream_t stream) {
  const std::int64_t i = first_where(n, NonFinite{data}, stream);
  if (i < n) *is_nan = std::isnan(element(data, i, stream));
  return i;
}

std::int64_t first_above(const std::uint16_t* data, std::int64_t n, std::uint16_t limit, std::uint16_t* value,
                         cudaStream_t stream) {
  const std::int64_t i = first_where(n, Above{data, limit}, stream);
  if (i < n) *value = element(data, i, stream);
  return i;
}

std::int64_t first_greater(DType dtype, const void* a, const void* b, std::int64_t n, double* a_value,
                           double* b_value, cudaStream_t stream) {
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const T* pa = static_cast<const T*>(a);
    const T* pb = static_cast<const T*>(b);
    const std::int64_t i = first_where(n, Greater<T>{pa, pb}, stream);
    if (i < n) {
      *a_value = static_cast<double>(element(pa, i, stream));
      *b_value = static_cast<double>(element(pb, i, stream));
    }
    return i;
  };
  switch (dtype) {
    case DType::u8: return run(std::uint8_t{});
    case DType::u16: return run(std::uint16_t{});
    case DType::f32: return run(float{});
  }
  throw Error("internal: first_greater on an unknown element type");
}

}  // namespace repix::gpu
