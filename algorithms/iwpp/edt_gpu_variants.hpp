// The GPU edt variants are appended by edt_gpu_register.cpp, so the CPU registry
// (edt_register.cpp) and the GPU one can grow independently.
#pragma once
#include <vector>

#include "iwpp/edt.hpp"

namespace repix::edt {
void append_gpu_variants(std::vector<Variant>& v);

// Runs a GPU plan end to end (input already checked): upload, compute, result, with NVTX
// phases init/h2d/kernel/d2h inside the caller's `edt/<variant>` range.
Result run_plan_end_to_end(DevicePlan&& plan, const HostImage& input, const Options& opt);

// One factory per GPU variant file.
Variant gpu_opt_variant();
}  // namespace repix::edt
