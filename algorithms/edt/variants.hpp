// The edt variants' entry points (GPU: one factory per variant file, named after the variant
// id) and the engines they share, for the registry (register.cpp).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/tiling/multi_device.hpp"
#include "edt/edt.hpp"
#include "iwpp/queue_policy.hpp"

namespace repix::edt {
// A plan's result: its device distances (float32, the shape's size) and, when d_linear_sites is
// not null, its linear sites (64-bit integers), copied to the host. Synchronises the stream.
Result download_result(const Shape& shape, const float* d_distance, const void* d_linear_sites, cudaStream_t stream);
// The same outputs where they lie (DevicePlan::device_outputs): the distances, and the sites when
// the plan makes them.
std::vector<DeviceOutput> device_outputs_of(const Shape& shape, const float* d_distance, const void* d_linear_sites);

// A GPU variant's `run`: inside an `nvtx_name` range, checks the input, fails with one line where
// there is no GPU, then the plan end to end (core/plan_end_to_end.hpp).
Result run_gpu_variant(const char* nvtx_name, DevicePlan&& plan, const HostImage& input, const Options& opt);

// One factory per GPU variant file.
Variant gpu_queue_atomic_variant();    // gpu_queue_atomic.cu
Variant gpu_queue_warp_atomic_variant();  // gpu_queue_warp_atomic.cu
Variant gpu_queue_scan_variant();      // gpu_queue_scan.cu
Variant gpu_queue_tq_variant();        // gpu_queue_tq.cu
Variant gpu_exact_rowfill_variant();   // gpu_exact_rowfill.cu (on separable.cuh)
Variant gpu_exact_envelope_variant();  // gpu_exact_envelope.cu (on separable.cuh)
Variant gpu_opt_variant();             // gpu_opt.cu (on separable.cuh)
Variant multi_device_variant();        // multi_device.cpp

// The queue ladder's variant (gpu_queue_plan.cpp): Algorithm 6 on a TilePropagator whose
// window is the whole image, with the given queue policy.
Variant make_queue_variant(iwpp::QueuePolicy policy, const std::string& id, const std::string& step,
                           const std::string& description);

// multi-device with an explicit engine configuration (tests: chosen workers and tiles). Checks
// the input like every variant; cfg.diagonal is always set (sites go to 8 neighbours).
Result run_multi_device_with(const HostImage& input, const Options& opt, tiling::EngineConfig cfg);
}  // namespace repix::edt
