// `gpu-queue-tq`: Algorithm 6 on the IWPP GPU queue with the tq policy of the ablation ladder:
// per-thread queues in shared memory flushed by warp prefix sums (the paper's TQ queue).
// The propagation kernel of this policy is instantiated here (gpu_queue_common.cuh); the
// plan, seeds and distances are shared by the ladder (gpu_queue_plan.cpp, gpu_tile.cu).
#include "edt/gpu_queue_common.cuh"
#include "edt/variants.hpp"

namespace repix::edt {

template std::unique_ptr<gpu_queue::TileEngine> gpu_queue::make_tile_engine<iwpp::QueuePolicy::thread_queue>();

Variant gpu_queue_tq_variant() {
  return make_queue_variant(iwpp::QueuePolicy::thread_queue, "gpu-queue-tq", "queue-tq",
                            "Algorithm 6, per-thread shared-memory queues + warp prefix sums (the paper's TQ queue)");
}

}  // namespace repix::edt
