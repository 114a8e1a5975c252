// `gpu-queue-warp-atomic`: Algorithm 6 on the IWPP GPU queue with the warp_atomic policy: the
// Naive queue's atomicAdd per queued element as nvcc compiles it by default, one atomic per warp
// (queue.cuh, AtomicTail). The propagation kernel of this policy is instantiated here.
#include "edt/gpu_queue_common.cuh"
#include "edt/variants.hpp"

namespace repix::edt {

template std::unique_ptr<gpu_queue::TileEngine> gpu_queue::make_tile_engine<iwpp::QueuePolicy::warp_atomic>();

Variant gpu_queue_warp_atomic_variant() {
  return make_queue_variant(iwpp::QueuePolicy::warp_atomic, "gpu-queue-warp-atomic", "queue-warp-atomic",
                            "Algorithm 6, the Naive queue's atomicAdd aggregated per warp by the compiler");
}

}  // namespace repix::edt
