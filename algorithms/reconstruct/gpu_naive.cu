// `gpu-naive`: the definition run literally. Every iteration computes, for every pixel, the max over
// its 3x3 (or cross) neighbourhood followed by the min with the mask, from one buffer into the
// other; iterations repeat until one changes nothing (checked on the host through a device flag).
// Terminates: values only grow, are bounded by the mask, and an iteration that changes nothing
// ends the loop.
#include "reconstruct/gpu_common.cuh"
#include "reconstruct/variants.hpp"

namespace repix::reconstruct::gpu {
namespace {

template <class T, class S>
__global__ void __launch_bounds__(kBlockX * kBlockY)
    dilate_min_kernel(const S* __restrict__ in, S* __restrict__ out, const T* __restrict__ I, Geom g,
                      unsigned* changed) {
  bool any = false;
  for_each_pixel(g, [&](std::int64_t x, std::int64_t y) {
    const std::int64_t p = y * g.nx + x;
    const std::uint32_t jp = in[p];
    std::uint32_t m = jp;
    for_each_neighbour(g, x, y, [&](std::int64_t q) { m = max(m, static_cast<std::uint32_t>(in[q])); });
    const std::uint32_t v = min(m, to_key(I[p]));  // >= jp since jp <= I(p)
    out[p] = static_cast<S>(v);
    any |= v != jp;
  });
  if (__syncthreads_or(any) && threadIdx.x == 0 && threadIdx.y == 0) atomicOr(changed, 1u);
}

template <class T>
class NaiveImpl final : public TypedPlan<T> {
  using S = Key<T>;

 public:
  void setup(const Geom& g, const Options&, cudaStream_t) override {
    g_ = g;
    a_.allocate(static_cast<std::size_t>(g.n()));
    b_.allocate(static_cast<std::size_t>(g.n()));
    flag_.allocate(1);
  }
  void compute(const T* marker, const T* mask, T* out, Stats& st, cudaStream_t s) override {
    const dim3 grid = grid2d(g_), block(kBlockX, kBlockY);
    {
      nvtx::Range r("init");
      init_kernel<T, S><<<grid, block, 0, s>>>(marker, mask, a_.get(), g_);
      REPIX_CUDA_LAUNCH();
    }
    S* cur = a_.get();
    S* next = b_.get();
    {
      nvtx::Range r("propagate");
      for (;;) {
        REPIX_CUDA(cudaMemsetAsync(flag_.get(), 0, sizeof(unsigned), s));
        dilate_min_kernel<T, S><<<grid, block, 0, s>>>(cur, next, mask, g_, flag_.get());
        REPIX_CUDA_LAUNCH();
        ++st.passes;
        std::swap(cur, next);  // `cur` is now the newest image
        if (read_device(flag_.get(), s) == 0) break;
      }
    }
    finalize_kernel<T, S><<<grid, block, 0, s>>>(cur, out, g_);
    REPIX_CUDA_LAUNCH();
  }

 private:
  Geom g_;
  DeviceBuffer<S> a_, b_;
  DeviceBuffer<unsigned> flag_;
};

}  // namespace

Variant gpu_naive_variant() {
  return make_variant<NaiveImpl>("gpu-naive", "naive",
                                 "full-image 3x3 dilation + min with the mask, repeated until nothing changes");
}

}  // namespace repix::reconstruct::gpu
