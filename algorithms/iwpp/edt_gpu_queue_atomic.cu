// `gpu-queue-atomic`: Algorithm 6 on the IWPP GPU queue with the atomic policy of the ablation ladder:
// one global atomicAdd per queued element (the paper's Naive queue).
// The propagation kernel of this policy is instantiated here (edt_gpu_queue_common.cuh); the
// plan, seeds and distances are shared by the ladder (edt_gpu_queue_plan.cpp, edt_gpu_tile.cu).
#include "iwpp/edt_gpu_queue_common.cuh"
#include "iwpp/edt_gpu_variants.hpp"

namespace repix::edt {

template std::unique_ptr<gpu_queue::TileEngine> gpu_queue::make_tile_engine<iwpp::QueuePolicy::atomic>();

Variant gpu_queue_atomic_variant() {
  return make_queue_variant(iwpp::QueuePolicy::atomic, "gpu-queue-atomic", "queue-atomic",
                            "Algorithm 6, one global atomicAdd per queued element (the paper's Naive queue)");
}

}  // namespace repix::edt
