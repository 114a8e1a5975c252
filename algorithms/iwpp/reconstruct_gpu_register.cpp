// The GPU reconstruct variants, in ablation order (one line each).
#include "iwpp/reconstruct_gpu_variants.hpp"

namespace repix::reconstruct {

void append_gpu_variants(std::vector<Variant>& v) {
  v.push_back(gpu::gpu_naive_variant());
  v.push_back(gpu::gpu_sr_variant());
  v.push_back(gpu::gpu_queue_atomic_variant());
  v.push_back(gpu::gpu_queue_warp_atomic_variant());
  v.push_back(gpu::gpu_queue_scan_variant());
  v.push_back(gpu::gpu_queue_tq_variant());
  v.push_back(gpu::gpu_opt_variant());
  v.push_back(gpu::multi_device_variant());
}

}  // namespace repix::reconstruct
