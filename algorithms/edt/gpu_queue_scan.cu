// `gpu-queue-scan`: Algorithm 6 on the IWPP GPU queue with the scan policy of the ablation ladder:
// a block-wide prefix sum (CUB BlockScan) per dequeued batch, no atomics (the paper's PF queue).
// The propagation kernel of this policy is instantiated here (gpu_queue_common.cuh); the
// plan, seeds and distances are shared by the ladder (gpu_queue_plan.cpp, gpu_tile.cu).
#include "edt/gpu_queue_common.cuh"
#include "edt/variants.hpp"

namespace repix::edt {

template std::unique_ptr<gpu_queue::TileEngine> gpu_queue::make_tile_engine<iwpp::QueuePolicy::scan>();

Variant gpu_queue_scan_variant() {
  return make_queue_variant(iwpp::QueuePolicy::scan, "gpu-queue-scan", "queue-scan",
                            "Algorithm 6, block-wide prefix sum (CUB BlockScan) per dequeued batch (the paper's PF queue)");
}

}  // namespace repix::edt
