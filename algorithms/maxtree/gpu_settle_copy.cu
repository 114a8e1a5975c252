// `gpu-settle-copy`: gpu-monotone with its one-pass flatten out of place (settle_copy_kernel): the same
// walks read the finished tree through L1 and write the second buffer, where gpu-monotone's in-place
// walks load with relaxed atomics from L2. On the H200 at 6000x4000 (8-bit, 4-connectivity; in one
// process beside gpu-monotone; NOTES.md): kernel 2.614 -> 2.557 ms, the
// flatten's warp instructions 133 M -> 116 M; 1-3 % faster kernels on all eight seminar inputs.
#include "maxtree/packed_engine.cuh"
#include "maxtree/variants.hpp"

namespace repix::maxtree::gpu {

Variant gpu_settle_copy_variant() {
  return make_gpu_variant<PackedTiles<SettleCopyPolicy>::type>(
      "gpu-settle-copy", "settle-copy", "gpu-monotone with its one-pass flatten reading the tree and writing a second buffer");
}

}  // namespace repix::maxtree::gpu
