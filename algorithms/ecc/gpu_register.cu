// `gpu-register` (paper section 4.3, "Using registers"): as gpu-naive, but each thread sums the
// change of its voxel in a register and issues one global atomicAdd per voxel (instead of one per
// introduced cell: up to 9 in 2D, 27 in 3D), plus the occurrence-count atomic.
#include "ecc/gpu_common.cuh"

namespace repix::ecc::gpu {
namespace {

// Plain global loads (see for_each_voxel_wins on why `img` is not __restrict__).
template <class T, int Dims>
__global__ void __launch_bounds__(kLadderThreads)
    register_kernel(const T* img, Geometry g, TileGrid tiles, long long* vcec,
                    unsigned long long* count) {
  for_each_voxel_wins<Dims>(img, g, tiles, [&](T c, const bool (&wins)[3][3][3]) {
    const int change = introduced_change<Dims>(wins);  // accumulated in a register
    const std::uint32_t bin = static_cast<std::uint32_t>(c);
    global_add_vcec(vcec, bin, change);  // one atomic per voxel, as in the paper
    if constexpr (kCountsOccurrences<T>) global_add_count(count, bin);
  });
}

class RegisterPlan final : public LadderPlan {
 protected:
  void launch(const LadderLaunch& a, cudaStream_t stream) override {
    visit_launch(a, [&](auto img, auto dims) {
      using T = std::remove_const_t<std::remove_pointer_t<decltype(img)>>;
      register_kernel<T, decltype(dims)::value>
          <<<tile_grid_dim(a.tiles), tile_block_dim(a.tiles), 0, stream>>>(img, a.geom, a.tiles,
                                                                           a.vcec, a.count);
      REPIX_CUDA_LAUNCH();
    });
  }
};

}  // namespace

Variant gpu_register_variant() {
  return make_ladder_variant<RegisterPlan>(
      "gpu-register", "register-accumulation",
      "gpu-naive with the voxel's change summed in a register: one global atomicAdd per voxel");
}

}  // namespace repix::ecc::gpu
