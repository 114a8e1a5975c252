// `gpu-epoch`: the epoch kernel of epoch_hist.cuh without run merging: one shared atomic per pair,
// no return value, no per-atomic overflow check (the ablation step between gpu-run-merge and
// gpu-opt: what the instruction diet alone buys).
#include "ami/auto_mi/epoch_hist.cuh"
#include "ami/auto_mi/variants.hpp"

namespace repix::ami::auto_mi::gpu {

Variant gpu_epoch_variant() {
  return make_lag_variant<EpochPlan<false, false>>(
      "gpu-epoch", "epoch-flush",
      "16-pair items from 16-byte-pitched rows, byte-permuted bins, 16-bit counters kept exact by epoch scans");
}

}  // namespace repix::ami::auto_mi::gpu
