// `gpu-opt-cluster` (ablation step `cluster-bins`, issue 43): gpu-opt-warp with uint16 values added
// by direct index into bins in shared memory after all -- the 65536 bins (256 KiB of int32 VCECs, more
// than an SM's shared memory) spread over the 8 blocks of a thread block cluster, each run a RED into
// another block's shared memory (distributed shared memory, sm_90), a global reduction a value and
// cluster at the end -- against gpu-opt-direct's global REDs, one a run, which bind on high-entropy
// uint16. A measured loser: the remote REDs are slower than the L2's (3x on 65536 levels at 8192^2,
// H200; BlockKind::cluster_bins in gpu_opt_kernels.cuh has the numbers). uint8 and float32 run
// gpu-opt-warp's kernels unchanged. NOTES-gpu-opt.md.
#include "ecc/gpu_opt.cuh"

namespace repix::ecc {

Variant gpu_opt_cluster_variant() {
  return make_opt_step_variant("gpu-opt-cluster", "cluster-bins",
                               "gpu-opt-warp, uint16 values added by direct index into bins spread over a thread block "
                               "cluster's shared memory",
                               opt::kModeDirect16 | opt::kModeWarpAgg | opt::kModeCluster16);
}

}  // namespace repix::ecc
