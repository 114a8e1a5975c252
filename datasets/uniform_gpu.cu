#include "datasets/uniform_gpu.hpp"

#include "core/gpu.hpp"
#include "core/philox.hpp"
#include "datasets/datasets.hpp"

namespace repix::datasets::detail {

namespace {

// One thread a Philox block: the (up to) four elements of block b that fall in [begin, end).
// A block costs ten rounds of two 32-bit multiplies; computing it once for its four words keeps
// the kernel bound by its stores.
template <class T, class Conv>
__global__ void fill_blocks(std::uint64_t seed, std::int64_t begin, std::int64_t end, T* out, Conv conv) {
  const std::int64_t first_block = begin >> 2;
  const std::int64_t blocks = ((end + 3) >> 2) - first_block;
  for (std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; k < blocks;
       k += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t b = first_block + k;
    const philox::Block w = philox::draw(seed, static_cast<std::uint64_t>(b), kStreamUniform);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const std::int64_t i = 4 * b + j;
      if (i >= begin && i < end) out[i - begin] = conv(w.v[j]);
    }
  }
}

struct ToFloat01 {
  __device__ float operator()(std::uint32_t w) const { return philox::uniform_float(w); }
};
template <class T>
struct ToLevel {
  std::uint32_t levels;
  __device__ T operator()(std::uint32_t w) const { return static_cast<T>(philox::uniform_below(w, levels)); }
};

template <class T, class Conv>
void launch(std::uint64_t seed, std::int64_t begin, std::int64_t end, void* dst, cudaStream_t stream, Conv conv) {
  const std::int64_t blocks = ((end + 3) >> 2) - (begin >> 2);
  constexpr int kThreads = 256;
  const auto grid = static_cast<unsigned>(std::min<std::int64_t>((blocks + kThreads - 1) / kThreads, 1 << 16));
  fill_blocks<<<grid, kThreads, 0, stream>>>(seed, begin, end, static_cast<T*>(dst), conv);
  REPIX_CUDA(cudaGetLastError());
}

}  // namespace

void fill_uniform_on_device(std::uint64_t seed, std::uint32_t levels, DType dtype, std::int64_t begin, std::int64_t end,
                            void* dst, cudaStream_t stream) {
  if (end <= begin) return;
  if (levels == 0) return launch<float>(seed, begin, end, dst, stream, ToFloat01{});
  dispatch_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch<T>(seed, begin, end, dst, stream, ToLevel<T>{levels});
  });
}

}  // namespace repix::datasets::detail
