// The GPU edt variants are appended by edt_gpu_register.cpp, so the CPU registry
// (edt_register.cpp) and the GPU one can grow independently.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "iwpp/edt.hpp"
#include "iwpp/queue_policy.hpp"

namespace repix::edt {
void append_gpu_variants(std::vector<Variant>& v);

// Runs a GPU plan end to end (input already checked): upload, compute, result, with NVTX
// phases init/h2d/kernel/d2h inside the caller's `edt/<variant>` range.
Result run_plan_end_to_end(DevicePlan&& plan, const HostImage& input, const Options& opt);

// A plan's result: its device distances (float32, the shape's size) and, when d_linear_sites is
// not null, its linear sites (64-bit integers), copied to the host. Synchronises the stream.
Result download_result(const Shape& shape, const float* d_distance, const void* d_linear_sites, cudaStream_t stream);

// A GPU variant's `run`: inside an `nvtx_name` range, checks the input, fails with one line where
// there is no GPU, then run_plan_end_to_end.
Result run_gpu_variant(const char* nvtx_name, DevicePlan&& plan, const HostImage& input, const Options& opt);

// One factory per GPU variant file.
Variant gpu_queue_atomic_variant();    // edt_gpu_queue_atomic.cu
Variant gpu_queue_warp_atomic_variant();  // edt_gpu_queue_warp_atomic.cu
Variant gpu_queue_scan_variant();      // edt_gpu_queue_scan.cu
Variant gpu_queue_tq_variant();        // edt_gpu_queue_tq.cu
Variant gpu_exact_rowfill_variant();   // edt_gpu_exact_rowfill.cpp
Variant gpu_exact_envelope_variant();  // edt_gpu_exact_envelope.cpp
Variant gpu_opt_variant();             // edt_gpu_opt.cu
Variant multi_device_variant();        // edt_multi_device.cpp

// The queue ladder's variant (edt_gpu_queue_plan.cpp): Algorithm 6 on a TilePropagator whose
// window is the whole image, with the given queue policy.
Variant make_queue_variant(iwpp::QueuePolicy policy, const std::string& id, const std::string& step,
                           const std::string& description);

// The exact separable plans (edt_gpu_opt.cu): one column phase, three ways to do the rows.
enum class SeparableFill {
  band,    // envelopes, then thread per (band, row) fill (gpu-exact-rowfill)
  pixel,   // envelopes, then thread per pixel fill (gpu-exact-envelope)
  window,  // windowed search per pixel, envelopes + pixel fill only on the rows it misses (gpu-opt)
};
Variant separable_variant(const char* id, const char* step, const char* description, SeparableFill fill);
}  // namespace repix::edt
