// `gpu-shared-hist` (paper section 4.3, "Shared memory", "Parallel initialization and
// finalization", "Block-level synchronization"): as gpu-register, but each block accumulates
// into a private histogram in shared memory (int32 vcec and count per bin), initialised and
// merged into the global int64 arrays in parallel, one bin per thread, between __syncthreads.
// Bins beyond the shared-memory window go to global atomics (BlockHistogram).
#include "ecc/gpu_common.cuh"

namespace repix::ecc::gpu {
namespace {

// Plain global loads (see for_each_voxel_wins on why `img` is not __restrict__).
template <class T, int Dims>
__global__ void __launch_bounds__(kLadderThreads)
    shared_hist_kernel(const T* img, Geometry g, TileGrid tiles, long long* vcec,
                       unsigned long long* count, std::int64_t nbins,
                       const std::int64_t* __restrict__ d_nbins) {
  extern __shared__ int smem_bins[];
  const BlockHistogram<kCountsOccurrences<T>> hist(
      smem_bins, smem_window(nbins, d_nbins, smem_window_capacity<T>()));
  hist.init();
  __syncthreads();
  // No early return: every thread must reach both barriers.
  for_each_voxel_wins<Dims>(img, g, tiles, [&](T c, const bool (&wins)[3][3][3]) {
    hist.add(static_cast<std::uint32_t>(c), introduced_change<Dims>(wins), vcec, count);
  });
  __syncthreads();
  hist.finish(vcec, count);
}

class SharedHistPlan final : public LadderPlan {
 protected:
  void launch(const LadderLaunch& a, cudaStream_t stream) override {
    visit_launch(a, [&](auto img, auto dims) {
      using T = std::remove_const_t<std::remove_pointer_t<decltype(img)>>;
      shared_hist_kernel<T, decltype(dims)::value>
          <<<tile_grid_dim(a.tiles), tile_block_dim(a.tiles), smem_window_bytes<T>(), stream>>>(
              img, a.geom, a.tiles, a.vcec, a.count, a.nbins, a.d_nbins);
      REPIX_CUDA_LAUNCH();
    });
  }
};

}  // namespace

Variant gpu_shared_hist_variant() {
  return make_ladder_variant<SharedHistPlan>(
      "gpu-shared-hist", "shared-histogram",
      "gpu-register with block-private shared-memory histograms merged at block end");
}

}  // namespace repix::ecc::gpu
