// `gpu-queue-tq`: FH_GPU (Algorithm 5) with the tq queue of the ladder: per-thread shared-memory queues
// + warp prefix sums (the paper's TQ queue).
// Options::raster_scans raster + anti-raster passes, then queue episodes (iwpp/queue.cuh).
// Stats::passes = raster passes + the longest block's propagation rounds, summed over episodes.
#include "reconstruct/gpu_common.cuh"
#include "reconstruct/variants.hpp"

namespace repix::reconstruct::gpu {
namespace {
template <class T>
using QueueImpl = LadderImpl<T, iwpp::QueuePolicy::thread_queue>;
}  // namespace

Variant gpu_queue_tq_variant() {
  return make_variant<QueueImpl>("gpu-queue-tq", "queue-tq",
                                 "FH_GPU, per-thread shared-memory queues + warp prefix sums (the paper's TQ queue)");
}

}  // namespace repix::reconstruct::gpu
