// `gpu-epoch-runs`: gpu-epoch-pipelined plus run merging inside a thread's 16-pair item
// (epoch_hist.cuh): runs of equal consecutive bins cost one shared atomic instead of one per pair.
// Kept as a measured loser (H100, 8192^2): 600 ms uniform, 619 ms smooth, against
// gpu-opt's 518 / 514 ms; at 2048^2 on the camera texture too (5.15 ms against 4.77 ms). The
// compare per pair costs more than the atomics it saves, even on smooth images: a 16-pair item
// rarely holds long runs after the lag shifts the partners.
#include "ami/auto_mi/epoch_hist.cuh"
#include "ami/auto_mi/variants.hpp"

namespace repix::ami::auto_mi::gpu {

Variant gpu_epoch_runs_variant() {
  return make_lag_variant<EpochPlan<true, true>>(
      "gpu-epoch-runs", "epoch-runs", "gpu-epoch-pipelined with runs of equal consecutive bins in a thread's item added once");
}

}  // namespace repix::ami::auto_mi::gpu
