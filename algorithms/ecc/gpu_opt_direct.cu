// `gpu-opt-direct` (ablation step `direct-index`, issue 15): gpu-opt without the small block hash in
// front of its uint16 global bins -- each thread's runs of equal values are added by value into the
// global bins, their presence in a block-private bitmap (gpu-opt's uint16 path's first design,
// until the block hash was added in front). The step measures what that hash buys: nothing on
// high-entropy data, everything on few-level and smooth images. uint8 is direct-indexed in gpu-opt
// already (256 block-private bins in shared memory) and float32 keeps the hashes, so on those this
// step times the same kernels as gpu-opt. BlockKind in gpu_opt_kernels.cuh; NOTES-gpu-opt.md.
#include "ecc/gpu_opt.cuh"

namespace repix::ecc {

Variant gpu_opt_direct_variant() {
  return make_opt_step_variant("gpu-opt-direct", "direct-index",
                               "gpu-opt, uint16 values added by direct index into the global bins without its block hash in front",
                               opt::kModeDirect16);
}

}  // namespace repix::ecc
