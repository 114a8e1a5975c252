// `gpu-opt-direct` (ablation step `direct-index`, issue 15): gpu-opt with a direct-index histogram
// for uint16 -- each thread's runs of equal values are added by value into the global bins
// (presence and VCEC), with no block hash in between. uint8 is direct-indexed in gpu-opt already
// (256 block-private bins in shared memory) and float32 keeps the hashes, so on those this step
// times the same kernels as gpu-opt. Why the uint16 table is the global one, and what the step
// measures: BlockKind in gpu_opt_kernels.cuh; NOTES-gpu-opt.md.
#include "ecc/gpu_opt.cuh"

namespace repix::ecc {

Variant gpu_opt_direct_variant() {
  return make_opt_step_variant("gpu-opt-direct", "direct-index",
                               "gpu-opt, uint16 values added by direct index into the global bins (no block hash)",
                               opt::kModeDirect16);
}

}  // namespace repix::ecc
