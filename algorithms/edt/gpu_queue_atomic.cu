// `gpu-queue-atomic`: Algorithm 6 on the IWPP GPU queue with the atomic policy of the ablation ladder:
// one global atomicAdd per queued element (the paper's Naive queue).
// The propagation kernel of this policy is instantiated here (gpu_queue_common.cuh); the
// plan, seeds and distances are shared by the ladder (gpu_queue_plan.cpp, gpu_tile.cu).
#include "edt/gpu_queue_common.cuh"
#include "edt/variants.hpp"

namespace repix::edt {

template std::unique_ptr<gpu_queue::TileEngine> gpu_queue::make_tile_engine<iwpp::QueuePolicy::atomic>();

Variant gpu_queue_atomic_variant() {
  return make_queue_variant(iwpp::QueuePolicy::atomic, "gpu-queue-atomic", "queue-atomic",
                            "Algorithm 6, one global atomicAdd per queued element (the paper's Naive queue)");
}

}  // namespace repix::edt
