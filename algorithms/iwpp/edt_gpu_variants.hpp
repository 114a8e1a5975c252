// The GPU edt variants are appended by edt_gpu_register.cpp, so the CPU registry
// (edt_register.cpp) and the GPU one can grow independently.
#pragma once
#include <memory>
#include <vector>

#include "iwpp/edt.hpp"

namespace repix::edt {
void append_gpu_variants(std::vector<Variant>& v);

// Runs a GPU plan end to end (input already checked): upload, compute, result, with NVTX
// phases init/h2d/kernel/d2h inside the caller's `edt/<variant>` range.
Result run_plan_end_to_end(DevicePlan&& plan, const HostImage& input, const Options& opt);

// One factory per GPU variant file.
Variant gpu_exact_rowfill_variant();   // edt_gpu_exact_rowfill.cpp
Variant gpu_exact_envelope_variant();  // edt_gpu_exact_envelope.cpp
Variant gpu_opt_variant();             // edt_gpu_opt.cu

// The exact separable plans (edt_gpu_opt.cu): one column phase, three ways to do the rows.
enum class SeparableFill {
  band,    // envelopes, then thread per (band, row) fill (gpu-exact-rowfill)
  pixel,   // envelopes, then thread per pixel fill (gpu-exact-envelope)
  window,  // windowed search per pixel, envelopes + pixel fill only on the rows it misses (gpu-opt)
};
Variant separable_variant(const char* id, const char* step, const char* description, SeparableFill fill);
}  // namespace repix::edt
