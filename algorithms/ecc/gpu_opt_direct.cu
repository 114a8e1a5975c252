// `gpu-opt-direct` (ablation step `direct-index`, issue 15): gpu-opt with a direct-index histogram
// for uint16 -- each thread's runs of equal values are added by value into the global bins
// (presence and VCEC), with no block hash in between. uint8 is direct-indexed in gpu-opt already
// (256 block-private bins in shared memory) and float32 keeps the hashes, so on those this step
// times the same kernels as gpu-opt. Why the uint16 table is the global one, and what the step
// measures: BlockKind in gpu_opt_kernels.cuh.
//
// Only the plan's engine setting differs from gpu-opt; end to end it runs like the other ladder
// steps (a plan per call), so the ablation compares kernels, not set-up.
#include "ecc/gpu_opt.cuh"

namespace repix::ecc {

namespace {

std::unique_ptr<DevicePlan> make_plan() { return std::make_unique<OptPlan>(/*direct_index=*/true); }

Curve run(const HostImage& img, const Options&) {
  OptPlan plan(/*direct_index=*/true);
  return run_plan_end_to_end(plan, img, "ecc/gpu-opt-direct");
}

}  // namespace

Variant gpu_opt_direct_variant() {
  return {{"gpu-opt-direct", true, "direct-index",
           "gpu-opt, uint16 values added by direct index into the global bins (no block hash)", run, make_plan},
          {}};
}

}  // namespace repix::ecc
