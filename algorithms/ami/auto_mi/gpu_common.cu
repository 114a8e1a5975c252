// LagPlan: batches of lags, their histograms zeroed, counted (the variant), and reduced to NMIs.
#include <algorithm>

#include "ami/auto_mi/gpu_common.cuh"
#include "core/error.hpp"
#include "core/nvtx.hpp"

namespace repix::ami::auto_mi::gpu {
namespace {

// Histograms of one batch live together: at most this many bytes (4096 lags at k = 256).
constexpr std::size_t kBatchBytes = std::size_t(1) << 30;
// The NMI kernel: one block per lag, one thread per column (k <= 257 -> 9 warps).
constexpr int kNmiThreads = 288;

// Thread j sums column j (rows ascending: the canonical order) and, a warp at a time, adds its
// count of row a to that row's total; thread 0 then finishes the lag through nmi_from_columns,
// the same function seq calls. Any subset of a lag's bins sums to at most its pairs (< 2^32).
__global__ void __launch_bounds__(kNmiThreads) nmi_kernel(const std::uint32_t* hist, int k, std::int64_t h,
                                                           std::int64_t w, int direction, std::int64_t lag0,
                                                           double* nmi) {
  __shared__ double col_terms[kNmiThreads];
  __shared__ std::uint64_t col_counts[kNmiThreads], row_counts[kNmiThreads];
  const int j = threadIdx.x;
  const std::uint64_t n = static_cast<std::uint64_t>(lag_geometry(h, w, direction, lag0 + blockIdx.x).pairs());
  const std::uint32_t* hh = hist + static_cast<std::size_t>(blockIdx.x) * k * k;
  row_counts[j] = 0;
  __syncthreads();
  double terms = 0;
  std::uint64_t cc = 0;
  for (int a = 0; a < k; ++a) {
    const std::uint32_t c = j < k ? hh[static_cast<std::size_t>(a) * k + j] : 0u;
    if (c != 0) {
      terms = add_rn(terms, entropy_term(c, n));
      cc += c;
    }
    const unsigned part = __reduce_add_sync(0xFFFFFFFFu, c);
    if ((j & 31) == 0 && part != 0) atomicAdd(reinterpret_cast<unsigned long long*>(&row_counts[a]), part);
  }
  col_terms[j] = terms;
  col_counts[j] = cc;
  __syncthreads();
  if (j == 0) nmi[lag0 - 1 + blockIdx.x] = nmi_from_columns(col_terms, col_counts, row_counts, k, n);
}

__global__ void check_labels_kernel(const std::uint16_t* l, std::int64_t n, unsigned long long* bad) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n; i += std::int64_t(gridDim.x) * blockDim.x)
    if (l[i] > 256) *bad = 1;
}

}  // namespace

void LagPlan::setup(const InputDesc& in, const Options& opt, cudaStream_t) {
  if (in.shape.ndim != 2 || (in.dtype != DType::u8 && in.dtype != DType::u16) || in.shape.size() == 0)
    throw Error("auto-mi: the label image must be a non-empty 2-D uint8 or uint16 image");
  // The histograms count in uint32 and the kernels index pairs within one image.
  if (in.shape.size() >= (std::int64_t(1) << 32))
    throw Error("auto-mi: GPU variants take images below 2^32 pixels");
  if (opt.parts < 1 || opt.part < 0 || opt.part >= opt.parts) throw Error("auto-mi: internal: lag part out of range");
  if (opt.flush_level < 0 || opt.flush_level > static_cast<int>(kMaxFlushLevel))
    throw Error("auto-mi: flush level must be 0 (default) or 1.." + std::to_string(kMaxFlushLevel));
  in_ = in;
  opt_ = opt;
  k_ = label_bins(in.dtype);
  const std::int64_t h = in.shape.ny, w = in.shape.nx;
  const std::int64_t most = std::max<std::int64_t>({lag_count(h, w, kHorizontal), lag_count(h, w, kVertical), 1});
  const std::size_t per_lag = static_cast<std::size_t>(k_) * k_ * sizeof(std::uint32_t);
  batch_lags_ = static_cast<int>(std::min<std::int64_t>(most, std::max<std::size_t>(1, kBatchBytes / per_lag)));
  hist_.ensure(static_cast<std::size_t>(batch_lags_) * k_ * k_);
  nmi_.ensure(static_cast<std::size_t>(std::max<std::int64_t>(1, lag_count(h, w, kHorizontal) + lag_count(h, w, kVertical))));
  counters_.ensure(2);
}

void LagPlan::compute(const DeviceInputs& in, cudaStream_t stream) {
  const std::int64_t h = in_.shape.ny, w = in_.shape.nx;
  REPIX_CUDA(cudaMemsetAsync(counters_.get(), 0, 2 * sizeof(unsigned long long), stream));
  REPIX_CUDA(cudaMemsetAsync(nmi_.get(), 0, nmi_.bytes(), stream));  // lags of other parts stay 0
  if (in_.dtype == DType::u16) {
    check_labels_kernel<<<264, 256, 0, stream>>>(static_cast<const std::uint16_t*>(in.at(0)), in_.shape.size(),
                                                 counters_.get() + 1);
    REPIX_CUDA_LAUNCH();
  }
  stats_ = {};
  std::int64_t nmi_base = 0;  // vertical lags follow the horizontal ones in nmi_
  for (int dir : {kHorizontal, kVertical}) {
    const std::int64_t lags = lag_count(h, w, dir);
    // This plan's lags: the contiguous range of its part (all of them with one part).
    std::int64_t first = 1, last = 0;
    lag_range(h, w, dir, opt_.part, opt_.parts, &first, &last);
    stats_.pairs += pairs_before_lag(h, w, dir, last + 1) - pairs_before_lag(h, w, dir, first);
    stats_.lags += last - first + 1;
    for (std::int64_t lag0 = first; lag0 <= last; lag0 += batch_lags_) {
      Batch b;
      b.labels = in.at(0);
      b.u16 = in_.dtype == DType::u16;
      b.h = h;
      b.w = w;
      b.direction = dir;
      b.lag0 = lag0;
      b.lags = static_cast<int>(std::min<std::int64_t>(batch_lags_, last - lag0 + 1));
      b.k = k_;
      b.hist = hist_.get();
      b.hot_flushes = counters_.get();
      b.flush_level = opt_.flush_level > 0 ? static_cast<std::uint32_t>(opt_.flush_level) : kMaxFlushLevel;
      REPIX_CUDA(cudaMemsetAsync(hist_.get(), 0, static_cast<std::size_t>(b.lags) * k_ * k_ * sizeof(std::uint32_t), stream));
      count(b, stream);
      nmi_kernel<<<b.lags, kNmiThreads, 0, stream>>>(hist_.get(), k_, h, w, dir, lag0, nmi_.get() + nmi_base);
      REPIX_CUDA_LAUNCH();
      ++stats_.batches;
    }
    nmi_base += lags;
  }
}

Stats LagPlan::stats() const {
  Stats s = stats_;
  unsigned long long flushes = 0;
  REPIX_CUDA(cudaMemcpy(&flushes, counters_.get(), sizeof flushes, cudaMemcpyDeviceToHost));
  s.hot_flushes = static_cast<std::int64_t>(flushes);
  return s;
}

Features LagPlan::result(cudaStream_t stream) {
  const std::int64_t h = in_.shape.ny, w = in_.shape.nx;
  const std::int64_t lx = lag_count(h, w, kHorizontal), ly = lag_count(h, w, kVertical);
  std::vector<double> nmi(static_cast<std::size_t>(lx + ly));
  unsigned long long counters[2] = {0, 0};
  if (!nmi.empty())
    REPIX_CUDA(cudaMemcpyAsync(nmi.data(), nmi_.get(), nmi.size() * sizeof(double), cudaMemcpyDeviceToHost, stream));
  REPIX_CUDA(cudaMemcpyAsync(counters, counters_.get(), sizeof counters, cudaMemcpyDeviceToHost, stream));
  REPIX_CUDA(cudaStreamSynchronize(stream));
  if (counters[1] != 0) throw Error("auto-mi: a label is above 256");
  Features f;
  f.nmi_x.assign(nmi.begin(), nmi.begin() + lx);
  f.nmi_y.assign(nmi.begin() + lx, nmi.end());
  finish_features(f, h, w);
  f.stats = stats_;  // the pairs and lags this plan counted (its part's)
  f.stats.hot_flushes = static_cast<std::int64_t>(counters[0]);
  return f;
}

}  // namespace repix::ami::auto_mi::gpu
