// `gpu-opt-warp` (ablation step `warp-aggregation`, issue 15): gpu-opt-direct plus warp
// aggregation of float32 keys before the block hash: for each of a thread's 4 voxels, the lanes
// of a warp with equal values (__match_any_sync) add their summed change once, through the lowest
// lane. GRF and other smooth images have long x-runs of equal values, which gpu-opt sends to the
// shared hash once per lane (contended atomics on one slot: GRF ran ~2x slower than uniform data);
// on uniform data the match costs instructions and saves nothing, which the ablation table shows.
// The device code: consume() in gpu_opt_kernels.cuh.
#include "ecc/gpu_opt.cuh"

namespace repix::ecc {

Variant gpu_opt_warp_variant() {
  return make_opt_step_variant("gpu-opt-warp", "warp-aggregation",
                               "gpu-opt-direct, float32 keys summed per warp (__match_any_sync) before the block hash",
                               opt::kModeDirect16 | opt::kModeWarpAgg);
}

}  // namespace repix::ecc
