// The auto-mi variants' entry points for the registry (register.cpp): CPU variants are functions
// (auto_mi.hpp), GPU ones factories, one file each named after the variant id.
#pragma once
#include "ami/auto_mi/auto_mi.hpp"

namespace repix::ami::auto_mi::gpu {
Variant gpu_naive_variant();        // gpu_naive.cu
Variant gpu_global_hist_variant();  // gpu_global_hist.cu
Variant gpu_shared_hist_variant();  // gpu_shared_hist.cu
Variant gpu_shared_warp_agg_variant();  // gpu_shared_warp_agg.cu
Variant gpu_run_merge_variant();    // gpu_run_merge.cu
Variant gpu_epoch_pipelined_variant();  // gpu_epoch_pipelined.cu
Variant gpu_epoch_runs_variant();   // gpu_epoch_runs.cu
Variant gpu_opt_variant();          // gpu_opt.cu
}  // namespace repix::ami::auto_mi::gpu
