// `gpu-cached` (paper section 4.3, "Texture cache", "The danger of register spilling",
// "Branching"; Algorithm 2, generalised to 3D and to any number of bins): gpu-shared-hist plus
// the paper's neighbour handling. Neighbours are read through the read-only data cache (__ldg,
// the same cache that serves texture fetches on current GPUs), the 4- (2D) / 6-neighbour (3D)
// truth values -- and in 3D those of the 12 edge-neighbours -- are held in registers and reused
// across the comparisons, the loops are unrolled and the change is updated by adding truth
// values. Borders are handled by predicated loads (PredicatedNeighbours) instead of the paper's
// collar of infinite values, so no padded copy of the image is made. Image extents are kernel
// parameters, which live in the constant bank (the paper's __constant__ image_width/height).
#include "ecc/gpu_common.cuh"

namespace repix::ecc::gpu {
namespace {

template <class T, int Dims>
__global__ void __launch_bounds__(kLadderThreads)
    cached_kernel(const T* __restrict__ img, Geometry g, TileGrid tiles, long long* vcec,
                  unsigned long long* count, std::int64_t nbins,
                  const std::int64_t* __restrict__ d_nbins) {
  extern __shared__ int smem_bins[];
  const BlockHistogram<kCountsOccurrences<T>> hist(
      smem_bins, smem_window(nbins, d_nbins, smem_window_capacity<T>()));
  hist.init();
  __syncthreads();
  // No early return: every thread must reach both barriers.
  for (std::int64_t t = blockIdx.x; t < tiles.total; t += gridDim.x) {
    std::int64_t x, y, z;
    tiles.voxel(t, threadIdx.x, threadIdx.y, threadIdx.z, x, y, z);
    if (x >= g.nx || y >= g.ny || z >= g.nz) continue;
    const T* p = img + g.index(x, y, z);
    const T c = load_readonly(p);
    const PredicatedNeighbours<T> nb(p, g, x, y, z);
    hist.add(static_cast<std::uint32_t>(c), cached_change<Dims>(c, nb), vcec, count);
  }
  __syncthreads();
  hist.finish(vcec, count);
}

class CachedPlan final : public LadderPlan {
 protected:
  void launch(const LadderLaunch& a, cudaStream_t stream) override {
    visit_launch(a, [&](auto img, auto dims) {
      using T = std::remove_const_t<std::remove_pointer_t<decltype(img)>>;
      cached_kernel<T, decltype(dims)::value>
          <<<tile_grid_dim(a.tiles), tile_block_dim(a.tiles), smem_window_bytes<T>(), stream>>>(
              img, a.geom, a.tiles, a.vcec, a.count, a.nbins, a.d_nbins);
      REPIX_CUDA_LAUNCH();
    });
  }
};

}  // namespace

Variant gpu_cached_variant() {
  return make_ladder_variant<CachedPlan>(
      "gpu-cached", "cached-neighbours",
      "gpu-shared-hist with read-only-cache loads, neighbours in registers, branch-free updates");
}

}  // namespace repix::ecc::gpu
