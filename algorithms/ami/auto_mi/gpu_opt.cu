// `gpu-opt`: the epoch kernel of epoch_hist.cuh as it is: one shared atomic per pair, no return
// value, no per-atomic overflow check, 16-pair items from 16-byte-pitched rows. Measured against its
// two variations on the H100 (8192^2 kernel scope, both directions): 518 ms
// uniform / 514 ms smooth (1.06e12 pairs/s), against gpu-epoch-pipelined 568 / 562 ms and
// gpu-epoch-runs 600 / 619 ms, and gpu-run-merge (the previous gpu-opt) 951 / 938 ms.
#include "ami/auto_mi/epoch_hist.cuh"
#include "ami/auto_mi/variants.hpp"

namespace repix::ami::auto_mi::gpu {

Variant gpu_opt_variant() {
  return make_lag_variant<EpochPlan<false, false>>(
      "gpu-opt", "epoch-flush",
      "16-pair items from 16-byte-pitched rows, byte-permuted bins, 16-bit counters kept exact by epoch scans");
}

}  // namespace repix::ami::auto_mi::gpu
