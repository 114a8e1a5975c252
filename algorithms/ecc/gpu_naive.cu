// `gpu-naive`: the paper's hypothetical naive GPU port of Algorithm 1 (section 4.3, the start of
// the optimisation ladder). One thread per voxel; the 8 (2D) / 26 (3D) neighbours are read from
// global memory with bounds checks; every cell the voxel introduces is one global atomicAdd of
// (-1)^dim on the voxel's bin, plus one atomic per voxel for the occurrence count.
#include "ecc/gpu_common.cuh"

namespace repix::ecc::gpu {
namespace {

// Plain global loads (see for_each_voxel_wins on why `img` is not __restrict__).
template <class T, int Dims>
__global__ void __launch_bounds__(kLadderThreads)
    naive_kernel(const T* img, Geometry g, TileGrid tiles, long long* vcec,
                 unsigned long long* count) {
  for_each_voxel_wins<Dims>(img, g, tiles, [&](T c, const bool (&wins)[3][3][3]) {
    const std::uint32_t bin = static_cast<std::uint32_t>(c);
    for_each_introduced_cell<Dims>(wins, [&](int sign) { global_add_vcec(vcec, bin, sign); });
    if constexpr (kCountsOccurrences<T>) global_add_count(count, bin);
  });
}

class NaivePlan final : public LadderPlan {
 protected:
  void launch(const LadderLaunch& a, cudaStream_t stream) override {
    visit_launch(a, [&](auto img, auto dims) {
      using T = std::remove_const_t<std::remove_pointer_t<decltype(img)>>;
      naive_kernel<T, decltype(dims)::value>
          <<<tile_grid_dim(a.tiles), tile_block_dim(a.tiles), 0, stream>>>(img, a.geom, a.tiles,
                                                                           a.vcec, a.count);
      REPIX_CUDA_LAUNCH();
    });
  }
};

}  // namespace

Variant gpu_naive_variant() {
  return make_ladder_variant<NaivePlan>(
      "gpu-naive", "naive",
      "one thread per voxel, global loads, one global atomicAdd per introduced cell");
}

}  // namespace repix::ecc::gpu
