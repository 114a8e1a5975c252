// The ECC variants' entry points, for the registry (register.cpp): CPU variants as functions, GPU
// ones as factories, one file each named after the variant id. Everything else reaches them
// through ecc::variants().
#pragma once
#include "ecc/ecc.hpp"
#include "ecc/gpu_common.hpp"  // gpu::gpu_naive_variant() ... gpu::gpu_cached_variant()
#include "ecc/gpu_opt.cuh"     // run_gpu_opt, make_gpu_opt_plan, run_gpu_stream(_source)
