// `gpu-queue-scan`: FH_GPU (Algorithm 5) with the scan queue of the ladder: a block-wide prefix sum
// (CUB BlockScan) per dequeued batch (the paper's PF queue).
// Options::raster_scans raster + anti-raster passes, then queue episodes (iwpp/queue.cuh).
// Stats::passes = raster passes + the longest block's propagation rounds, summed over episodes.
#include "reconstruct/gpu_common.cuh"
#include "reconstruct/variants.hpp"

namespace repix::reconstruct::gpu {
namespace {
template <class T>
using QueueImpl = LadderImpl<T, iwpp::QueuePolicy::scan>;
}  // namespace

Variant gpu_queue_scan_variant() {
  return make_variant<QueueImpl>("gpu-queue-scan", "queue-scan",
                                 "FH_GPU, block-wide prefix sum (CUB BlockScan) per dequeued batch (the paper's PF queue)");
}

}  // namespace repix::reconstruct::gpu
