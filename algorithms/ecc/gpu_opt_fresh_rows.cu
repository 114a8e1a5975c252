// `gpu-opt-fresh-rows` (ablation step `fresh-row-words`, issue 43): gpu-opt's kernels with each 2D
// row's comparisons with the row above made afresh at every row step (change4_2d), as gpu-opt did
// before it carried them from the step of the row above (change4_2d_carried: the same differences,
// so the same words bit for bit). The step right before gpu-opt, so the ablation table shows what
// the carry buys; it keeps the dynamic schedule. 3D kernels and every other step are unchanged
// (kModeFreshRows in gpu_opt_2d.cu).
#include "ecc/gpu_opt.cuh"

namespace repix::ecc {

Variant gpu_opt_fresh_rows_variant() {
  return make_opt_step_variant("gpu-opt-fresh-rows", "fresh-row-words",
                               "gpu-opt with each 2D row compared with the row above afresh (not carried from the "
                               "step of the row above)",
                               opt::kModeFreshRows);
}

}  // namespace repix::ecc
