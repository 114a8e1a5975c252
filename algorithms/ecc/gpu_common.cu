// LadderPlan (setup / compute / result shared by the ladder variants) and the float binning:
// order-preserving keys -> CUB radix sort -> CUB unique -> a rank image.
#include <cub/cub.cuh>

#include <algorithm>
#include <vector>

#include "core/nvtx.hpp"
#include "ecc/gpu_common.cuh"

namespace repix::ecc::gpu {

TileGrid ladder_tiles(const Shape& s) {
  if (s.ndim == 3 && s.nz > 1) return TileGrid::make(s, 32, 4, 2);
  return TileGrid::make(s, 32, 8, 1);
}

namespace {

constexpr int kHelperThreads = 256;

// Blocks for a grid-stride loop over n items: enough to fill the GPU, never more than needed.
unsigned helper_blocks(std::int64_t n, int sm_count) {
  const std::int64_t want = (n + kHelperThreads - 1) / kHelperThreads;
  const std::int64_t cap = static_cast<std::int64_t>(sm_count) * 32;
  return static_cast<unsigned>(std::max<std::int64_t>(1, std::min(want, cap)));
}

__global__ void __launch_bounds__(kHelperThreads)
    float_keys_kernel(const float* __restrict__ in, std::uint32_t* __restrict__ keys, std::int64_t n) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    keys[i] = float_order_key(in[i]);
}

// Rank of each voxel among the m distinct keys (its key is always among them).
__global__ void __launch_bounds__(kHelperThreads)
    float_ranks_kernel(const float* __restrict__ in, const std::uint32_t* __restrict__ distinct,
                       const std::int64_t* __restrict__ d_m, std::uint32_t* __restrict__ ranks,
                       std::int64_t n) {
  const std::int64_t m = *d_m;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    ranks[i] = static_cast<std::uint32_t>(lower_bound_key(distinct, m, float_order_key(in[i])));
}

// Zeroes vcec[0, *d_m): for float images only the bins that exist are touched (the buffer is
// sized for the worst case, one bin per voxel).
__global__ void __launch_bounds__(kHelperThreads)
    zero_bins_kernel(long long* __restrict__ vcec, const std::int64_t* __restrict__ d_m) {
  const std::int64_t m = *d_m;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < m;
       i += stride)
    vcec[i] = 0;
}

std::int64_t max_float_bins(std::int64_t n) {
  // Distinct finite floats (with -0 folded) are fewer than 2^32, so ranks fit in uint32.
  return std::min<std::int64_t>(n, std::int64_t(1) << 32);
}

}  // namespace

// ---- FloatRanker ------------------------------------------------------------------------------

void FloatRanker::setup(std::int64_t n, int sm_count) {
  n_ = n;
  sm_count_ = sm_count;
  ranks_ = distinct_ = nullptr;
  // The big buffers first: an impossible size fails here, with CudaOutOfMemory.
  a_.allocate(static_cast<std::size_t>(n));
  b_.allocate(static_cast<std::size_t>(n));
  count_.allocate(1);
  // Temp storage for the sort (DoubleBuffer form: no third image-sized buffer) and the unique.
  std::size_t sort_bytes = 0, unique_bytes = 0;
  cub::DoubleBuffer<std::uint32_t> keys(a_.get(), b_.get());
  REPIX_CUDA(cub::DeviceRadixSort::SortKeys(nullptr, sort_bytes, keys, n_));
  REPIX_CUDA(cub::DeviceSelect::Unique(nullptr, unique_bytes, a_.get(), b_.get(), count_.get(), n_));
  temp_bytes_ = std::max<std::size_t>({sort_bytes, unique_bytes, 1});
  temp_.allocate(temp_bytes_);
}

void FloatRanker::run(const float* d_in, cudaStream_t stream) {
  if (!a_.get()) throw Error("internal: FloatRanker::run before setup");
  const unsigned blocks = helper_blocks(n_, sm_count_);
  float_keys_kernel<<<blocks, kHelperThreads, 0, stream>>>(d_in, a_.get(), n_);
  REPIX_CUDA_LAUNCH();
  cub::DoubleBuffer<std::uint32_t> keys(a_.get(), b_.get());
  std::size_t bytes = temp_bytes_;
  REPIX_CUDA(cub::DeviceRadixSort::SortKeys(temp_.get(), bytes, keys, n_, 0, 32, stream));
  // Sorted keys are in keys.Current(); the distinct ones go to the other buffer, and the rank
  // image then overwrites the sorted keys (no longer needed).
  std::uint32_t* sorted = keys.Current();
  std::uint32_t* other = keys.Alternate();
  bytes = temp_bytes_;
  REPIX_CUDA(cub::DeviceSelect::Unique(temp_.get(), bytes, sorted, other, count_.get(), n_, stream));
  float_ranks_kernel<<<blocks, kHelperThreads, 0, stream>>>(d_in, other, count_.get(), sorted, n_);
  REPIX_CUDA_LAUNCH();
  distinct_ = other;
  ranks_ = sorted;
}

// ---- LadderPlan -------------------------------------------------------------------------------

void LadderPlan::setup(const InputDesc& in, const Options&, cudaStream_t) {
  const DType dtype = in.dtype;
  const Shape& shape = in.shape;
  ready_ = computed_ = false;
  if (shape.size() <= 0) throw Error("empty image");
  dtype_ = dtype;
  shape_ = shape;
  int dev = 0;
  REPIX_CUDA(cudaGetDevice(&dev));
  REPIX_CUDA(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, dev));
  switch (dtype) {
    case DType::u8: nbins_ = 256; break;
    case DType::u16: nbins_ = 65536; break;
    case DType::f32: nbins_ = max_float_bins(shape.size()); break;
  }
  // Release the previous shape's workspace before allocating the new one.
  vcec_.reset();
  count_.reset();
  ranker_ = FloatRanker();
  if (dtype == DType::f32) ranker_.setup(shape.size(), sm_count_);
  vcec_.allocate(static_cast<std::size_t>(nbins_));
  if (dtype != DType::f32) count_.allocate(static_cast<std::size_t>(nbins_));
  ready_ = true;
}

void LadderPlan::compute(const DeviceInputs& in, cudaStream_t stream) {
  const void* d_input = in.at(0);
  if (!ready_) throw Error("internal: ecc plan compute() before setup()");
  computed_ = false;
  LadderLaunch a;
  a.shape = shape_;
  a.dims = rule_dims(shape_);
  a.geom = Geometry::of(shape_);
  a.tiles = ladder_tiles(shape_);
  a.vcec = vcec_.get();
  a.nbins = nbins_;
  a.sm_count = sm_count_;
  if (dtype_ == DType::f32) {
    nvtx::Range r("bin", shape_.size());
    ranker_.run(static_cast<const float*>(d_input), stream);
    a.elem = Elem::u32;
    a.image = ranker_.ranks();
    a.d_nbins = ranker_.d_count();
  } else {
    a.elem = dtype_ == DType::u8 ? Elem::u8 : Elem::u16;
    a.image = d_input;
    a.count = count_.get();
  }
  {
    nvtx::Range r("kernel", shape_.size());
    if (dtype_ == DType::f32) {
      zero_bins_kernel<<<helper_blocks(nbins_, sm_count_), kHelperThreads, 0, stream>>>(
          vcec_.get(), ranker_.d_count());
      REPIX_CUDA_LAUNCH();
    } else {
      REPIX_CUDA(cudaMemsetAsync(vcec_.get(), 0, vcec_.bytes(), stream));
      REPIX_CUDA(cudaMemsetAsync(count_.get(), 0, count_.bytes(), stream));
    }
    launch(a, stream);
  }
  computed_ = true;
}

Curve LadderPlan::result(cudaStream_t stream) {
  if (!computed_) throw Error("internal: ecc plan result() before compute()");
  std::vector<float> values;
  std::vector<std::int64_t> vcec, present;
  if (dtype_ == DType::f32) {
    std::int64_t m = 0;
    REPIX_CUDA(cudaMemcpyAsync(&m, ranker_.d_count(), sizeof m, cudaMemcpyDeviceToHost, stream));
    REPIX_CUDA(cudaStreamSynchronize(stream));
    if (m <= 0 || m > nbins_) throw Error("internal: distinct count " + std::to_string(m));
    std::vector<std::uint32_t> keys(static_cast<std::size_t>(m));
    vcec.resize(static_cast<std::size_t>(m));
    REPIX_CUDA(cudaMemcpyAsync(keys.data(), ranker_.distinct_keys(), keys.size() * sizeof(std::uint32_t),
                               cudaMemcpyDeviceToHost, stream));
    REPIX_CUDA(cudaMemcpyAsync(vcec.data(), vcec_.get(), vcec.size() * sizeof(std::int64_t),
                               cudaMemcpyDeviceToHost, stream));
    REPIX_CUDA(cudaStreamSynchronize(stream));
    values.resize(keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i) values[i] = float_from_order_key(keys[i]);
    present.assign(values.size(), 1);  // every distinct value occurs
  } else {
    const std::size_t nb = static_cast<std::size_t>(nbins_);
    std::vector<unsigned long long> count(nb);
    vcec.resize(nb);
    REPIX_CUDA(cudaMemcpyAsync(vcec.data(), vcec_.get(), nb * sizeof(std::int64_t),
                               cudaMemcpyDeviceToHost, stream));
    REPIX_CUDA(cudaMemcpyAsync(count.data(), count_.get(), nb * sizeof(unsigned long long),
                               cudaMemcpyDeviceToHost, stream));
    REPIX_CUDA(cudaStreamSynchronize(stream));
    values.resize(nb);
    present.resize(nb);
    for (std::size_t i = 0; i < nb; ++i) {
      values[i] = static_cast<float>(i);
      present[i] = static_cast<std::int64_t>(count[i]);
    }
  }
  return curve_from_bins(values, vcec, present);
}

}  // namespace repix::ecc::gpu
