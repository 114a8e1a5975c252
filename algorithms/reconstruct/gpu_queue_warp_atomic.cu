// `gpu-queue-warp-atomic`: FH_GPU (Algorithm 5) with the warp_atomic queue: the Naive queue's
// source (one atomicAdd on the block's tail per queued element) as nvcc compiles it by default,
// which aggregates the atomics of a warp into one (queue.cuh, AtomicTail). The ablation step
// between the paper's Naive queue and its prefix sums that the compiler takes by itself.
// Options::raster_scans raster + anti-raster passes, then queue episodes (iwpp/queue.cuh).
#include "reconstruct/gpu_common.cuh"
#include "reconstruct/variants.hpp"

namespace repix::reconstruct::gpu {
namespace {
template <class T>
using QueueImpl = LadderImpl<T, iwpp::QueuePolicy::warp_atomic>;
}  // namespace

Variant gpu_queue_warp_atomic_variant() {
  return make_variant<QueueImpl>("gpu-queue-warp-atomic", "queue-warp-atomic",
                                 "FH_GPU, the Naive queue's atomicAdd aggregated per warp by the compiler");
}

}  // namespace repix::reconstruct::gpu
