// The ami pipeline's engine, for the registry (register.cpp).
#pragma once
#include <string>

#include <memory>

#include "ami/ami.hpp"
#include "ami/auto_mi/auto_mi.hpp"
#include "ami/ranklet/ranklet.hpp"

namespace repix::ami {

// A pipeline variant chaining ranklet variant `ranklet_id` and auto-mi variant `auto_mi_id`
// (pipeline.cpp): the ranklet stage's run() on the host image, each plane quantised to Q - 1 on
// the host, the feature stage's run() per plane. GPU when either stage is. When both stages have
// device plans the variant runs through make_gpu_plan instead, end to end and in the kernel scope.
Variant make_pipeline(std::string id, std::string step, std::string description, std::string ranklet_id,
                      std::string auto_mi_id);

// The pipeline variants, one file each named after the id, each naming its (ranklet, auto-mi) pair.
Variant seq_variant();           // seq.cpp: (seq, seq)
Variant omp_variant();           // omp.cpp: (omp, omp)
Variant omp_hist_variant();      // omp_hist.cpp: (omp-hist, omp)
Variant gpu_naive_variant();     // gpu_naive.cpp: (gpu-naive, gpu-naive)
Variant gpu_opt_variant();       // gpu_opt.cpp: (gpu-opt, gpu-opt)
Variant multi_device_variant();  // multi_device.cpp: (gpu-opt, multi-device)

// The device-resident pipeline (pipeline_gpu.cu): the ranklet plan's device planes
// (ranklet::PlanBase::device_output(); the ranklet variant's plan must be one) quantised on the
// device into a uint8 label buffer (label_of), the auto-mi plan's compute on that buffer and its
// result() (the per-lag NMIs, a few KB) per plane. compute() synchronises once per plane.
std::unique_ptr<DevicePlan> make_gpu_plan(const ranklet::Variant& rv, const auto_mi::Variant& av);
// That plan end to end from a host image: upload, compute, result (NVTX range `nvtx_name`, phases
// init, h2d, kernel, d2h).
Result run_gpu_plan(const ranklet::Variant& rv, const auto_mi::Variant& av, const HostImage& input, const Options& opt,
                    const char* nvtx_name);

}  // namespace repix::ami
