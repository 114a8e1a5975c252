// `gpu-queue-atomic`: FH_GPU (Algorithm 5) with the atomic queue of the ladder: one global atomicAdd per
// queued element (the paper's Naive queue).
// Options::raster_scans raster + anti-raster passes, then queue episodes (iwpp/queue.cuh).
// Stats::passes = raster passes + the longest block's propagation rounds, summed over episodes.
#include "reconstruct/gpu_common.cuh"
#include "reconstruct/variants.hpp"

namespace repix::reconstruct::gpu {
namespace {
template <class T>
using QueueImpl = LadderImpl<T, iwpp::QueuePolicy::atomic>;
}  // namespace

Variant gpu_queue_atomic_variant() {
  return make_variant<QueueImpl>("gpu-queue-atomic", "queue-atomic",
                                 "FH_GPU, one global atomicAdd per queued element (the paper's Naive queue)");
}

}  // namespace repix::reconstruct::gpu
