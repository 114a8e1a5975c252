// `gpu-naive`: the thesis's CUDA design (chapter 4): one thread per lag walks all of its lag's
// pairs and increments its own joint histogram in global memory (no atomics: the histogram is
// private); the NMI ("reduction") kernel follows. Little parallelism (one thread per lag) and
// scattered global read-modify-writes: the start of the ladder.
#include "ami/auto_mi/gpu_common.cuh"
#include "core/error.hpp"
#include "ami/auto_mi/variants.hpp"

namespace repix::ami::auto_mi::gpu {
namespace {

// 1-D blocks of Options::block threads (default kNaiveThreads; the thesis's Table 5.6 varies it).
template <class T>
__global__ void __launch_bounds__(1024) naive_kernel(Batch b) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= b.lags) return;
  const T* l = static_cast<const T*>(b.labels);
  const LagGeometry g = lag_geometry(b.h, b.w, b.direction, b.lag0 + j);
  std::uint32_t* hist = b.hist + static_cast<std::size_t>(j) * b.k * b.k;
  for (std::int64_t y = 0; y < g.rows; ++y)
    for (std::int64_t x = 0; x < g.cols; ++x) {
      const std::int64_t p = y * b.w + x;
      ++hist[label_at(l, p) * b.k + label_at(l, p + g.offset)];
    }
}

class NaivePlan final : public LagPlan {
 public:
  void setup(const InputDesc& in, const Options& opt, cudaStream_t stream) override {
    if (opt.block < 0 || opt.block > 1024) throw Error("auto-mi: --block must be 1..1024 threads (0: the default)");
    threads_ = opt.block > 0 ? opt.block : kNaiveThreads;
    LagPlan::setup(in, opt, stream);
  }

 protected:
  void count(const Batch& b, cudaStream_t stream) override {
    const int blocks = (b.lags + threads_ - 1) / threads_;
    if (b.u16) naive_kernel<std::uint16_t><<<blocks, threads_, 0, stream>>>(b);
    else naive_kernel<std::uint8_t><<<blocks, threads_, 0, stream>>>(b);
    REPIX_CUDA_LAUNCH();
  }

 private:
  int threads_ = kNaiveThreads;
};

}  // namespace

Variant gpu_naive_variant() {
  return make_lag_variant<NaivePlan>("gpu-naive", "naive",
                                     "the thesis's design: one thread per lag, private histogram in global memory, "
                                     "then the reduction kernel");
}

}  // namespace repix::ami::auto_mi::gpu
