// `gpu-opt-static` (ablation step `static-schedule`, issue 15): gpu-opt's kernels with the work
// items shared out by fixed strides -- item k of a warp (2D) or block (3D) is its first plus k grid
// strides, 2 items a warp slot in 2D and 1 a block slot in 3D -- as gpu-opt ran until it took them
// by tickets (dynamic schedule). The step before gpu-opt-fresh-rows (and so two before gpu-opt),
// so the ablation table shows what the tickets bought: on GRF data the busiest SM sub-partition executed 22 % more instructions than
// the mean under the fixed shares (Nsight Compute, 8192^2, H100). It makes its rows' words afresh,
// as gpu-opt-fresh-rows (the step between it and gpu-opt) does: each step adds one thing. The device side:
// wants_ticket() and item_after() in gpu_opt_schedule.hpp; the engine passes no queue in this mode.
#include "ecc/gpu_opt.cuh"

namespace repix::ecc {

Variant gpu_opt_static_variant() {
  return make_opt_step_variant("gpu-opt-static", "static-schedule",
                               "gpu-opt-fresh-rows' kernels, work items shared out by fixed grid strides (no tickets)",
                               opt::kModeStaticSchedule | opt::kModeFreshRows);
}

}  // namespace repix::ecc
