// `gpu-opt-bins16` (ablation step `shared-bins16`, issue 43): gpu-opt-warp with 2D uint16 values
// added by direct index into bins in one block's shared memory after all -- all 65536 as signed
// 16-bit counters (128 KiB, two a 32-bit word), kept exact by taking back an add that leaves its
// counter outside [-8192, 8192) and sending it to the global bin (gpu_opt_core.cuh's bins16 gives the
// bound) -- one block of 24 warps an SM, and a second kernel summing the blocks' counters. It answers
// the global reductions of gpu-opt-direct, one a voxel, which bind on high-entropy uint16 (L2 at 84 %
// of its peak at 8192^2 with 65536 levels), where gpu-opt-cluster's remote shared-memory
// reductions were slower still. Few-level data is its bad case (a counter that fills sends every
// later add to the global bins); gpu-opt's block hash stays the default. 3D uint16 runs
// gpu-opt-direct's kernel, uint8 and float32 gpu-opt-warp's. BlockKind::bins16 in
// gpu_opt_kernels.cuh; NOTES-gpu-opt.md.
#include "ecc/gpu_opt.cuh"

namespace repix::ecc {

Variant gpu_opt_bins16_variant() {
  return make_opt_step_variant("gpu-opt-bins16", "shared-bins16",
                               "gpu-opt-warp, 2D uint16 values added by direct index into 16-bit bins in one block's "
                               "shared memory (an add leaving [-8192, 8192) taken back and sent to the global bins)",
                               opt::kModeDirect16 | opt::kModeWarpAgg | opt::kModeBins16);
}

}  // namespace repix::ecc
