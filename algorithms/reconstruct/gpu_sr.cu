// `gpu-sr`: the paper's SR_GPU baseline (Karas): separable raster and anti-raster passes (rows then
// columns, forward then backward; gpu_common.cuh) repeated until a whole pass changes
// nothing. Stats::passes counts raster + anti-raster passes, the last one (which proves stability)
// included.
#include "reconstruct/gpu_common.cuh"
#include "reconstruct/variants.hpp"

namespace repix::reconstruct::gpu {
namespace {

template <class T>
class SrImpl final : public TypedPlan<T> {
  using S = Key<T>;

 public:
  void setup(const Geom& g, const Options&, cudaStream_t) override {
    g_ = g;
    J_.allocate(static_cast<std::size_t>(g.n()));
    flag_.allocate(1);
  }
  void compute(const T* marker, const T* mask, T* out, Stats& st, cudaStream_t s) override {
    const dim3 grid = grid2d(g_), block(kBlockX, kBlockY);
    {
      nvtx::Range r("init");
      init_kernel<T, S><<<grid, block, 0, s>>>(marker, mask, J_.get(), g_);
      REPIX_CUDA_LAUNCH();
    }
    {
      nvtx::Range r("raster");
      // Terminates: each pass that does not end the loop raised some pixel, and values are bounded.
      for (;;) {
        REPIX_CUDA(cudaMemsetAsync(flag_.get(), 0, sizeof(unsigned), s));
        raster_pass<T, S>(J_.get(), mask, g_, flag_.get(), s);
        ++st.passes;
        if (read_device(flag_.get(), s) == 0) break;
      }
    }
    finalize_kernel<T, S><<<grid, block, 0, s>>>(J_.get(), out, g_);
    REPIX_CUDA_LAUNCH();
  }

 private:
  Geom g_;
  DeviceBuffer<S> J_;
  DeviceBuffer<unsigned> flag_;
};

}  // namespace

Variant gpu_sr_variant() {
  return make_variant<SrImpl>("gpu-sr", "raster-scans",
                              "SR_GPU: separable raster + anti-raster passes (rows, columns) until stable");
}

}  // namespace repix::reconstruct::gpu
