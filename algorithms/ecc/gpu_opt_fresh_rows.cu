// `gpu-opt-fresh-rows` (ablation step `fresh-row-words`, issue 43): gpu-opt's kernels with each 2D
// row's comparisons with the row above made afresh at every row step (change4_2d), and in 3D row y's
// with plane z-1 at every plane step (change4_3d), as gpu-opt did before it carried them from the
// step before (change4_2d_carried, change4_3d_carried: the same differences, so the same words bit
// for bit). The step right before gpu-opt, so the ablation table shows what the carry buys; it keeps
// the dynamic schedule (kModeFreshRows in gpu_opt_2d.cu and gpu_opt_3d.cu). gpu-opt-static makes
// them afresh too; the steps after gpu-opt carry.
#include "ecc/gpu_opt.cuh"

namespace repix::ecc {

Variant gpu_opt_fresh_rows_variant() {
  return make_opt_step_variant("gpu-opt-fresh-rows", "fresh-row-words",
                               "gpu-opt with each row compared with the row above (2D) or the plane below (3D) afresh, "
                               "not carried from the step before",
                               opt::kModeFreshRows);
}

}  // namespace repix::ecc
