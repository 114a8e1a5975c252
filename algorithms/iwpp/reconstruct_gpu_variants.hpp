// The GPU reconstruct variants are appended by reconstruct_gpu_register.cpp, so the CPU registry
// (reconstruct_register.cpp) and the GPU one can grow independently.
#pragma once
#include <vector>

#include "iwpp/reconstruct.hpp"

namespace repix::reconstruct {
void append_gpu_variants(std::vector<Variant>& v);

namespace gpu {
Variant gpu_naive_variant();         // reconstruct_gpu_naive.cu
Variant gpu_sr_variant();            // reconstruct_gpu_sr.cu
Variant gpu_queue_atomic_variant();  // reconstruct_gpu_queue_atomic.cu
Variant gpu_queue_warp_atomic_variant();  // reconstruct_gpu_queue_warp_atomic.cu
Variant gpu_queue_scan_variant();    // reconstruct_gpu_queue_scan.cu
Variant gpu_queue_tq_variant();      // reconstruct_gpu_queue_tq.cu
Variant gpu_opt_variant();           // reconstruct_gpu_opt.cu
Variant multi_device_variant();      // reconstruct_multi_device.cpp
}  // namespace gpu
}  // namespace repix::reconstruct
