// `gpu-opt-hash-bins16` (ablation step `hash-bins16`, issue 43): gpu-opt with its 2D uint16 block
// hash in front of gpu-opt-bins16's 16-bit shared-memory bins instead of the global bins: values of
// few-level and natural images live in the hash, as in gpu-opt; once a key finds no slot the block
// stops claiming and sends the keys not at their home slot to the 16-bit bins, as gpu-opt-bins16
// (BlockKind::hash_bins16 in gpu_opt_kernels.cuh). One block of 24 warps an SM. 3D uint16, uint8
// and float32 run gpu-opt's kernels. NOTES-gpu-opt.md.
#include "ecc/gpu_opt.cuh"

namespace repix::ecc {

Variant gpu_opt_hash_bins16_variant() {
  return make_opt_step_variant("gpu-opt-hash-bins16", "hash-bins16",
                               "gpu-opt, its 2D uint16 block hash in front of 16-bit bins in the block's shared memory "
                               "(gpu-opt-bins16's) instead of the global bins",
                               opt::kModeHashBins16);
}

}  // namespace repix::ecc
