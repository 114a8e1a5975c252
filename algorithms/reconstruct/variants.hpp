// The reconstruct variants' entry points, one file each (named after the variant id), for the
// registry (register.cpp). Everything else reaches them through reconstruct::variants().
#pragma once
#include <vector>

#include "core/tiling/multi_device.hpp"
#include "reconstruct/reconstruct.hpp"

namespace repix::reconstruct {
Result run_seq(const HostImage& marker, const HostImage& mask, const Options& opt);           // seq.cpp
Result run_seq_sr(const HostImage& marker, const HostImage& mask, const Options& opt);        // seq_sr.cpp
Result run_seq_qb(const HostImage& marker, const HostImage& mask, const Options& opt);        // seq_qb.cpp
Result run_omp_tiled(const HostImage& marker, const HostImage& mask, const Options& opt);     // omp_tiled.cpp
Result run_omp_nontiled(const HostImage& marker, const HostImage& mask, const Options& opt);  // omp_nontiled.cpp

namespace gpu {
Variant gpu_naive_variant();         // gpu_naive.cu
Variant gpu_sr_variant();            // gpu_sr.cu
Variant gpu_queue_atomic_variant();  // gpu_queue_atomic.cu
Variant gpu_queue_warp_atomic_variant();  // gpu_queue_warp_atomic.cu
Variant gpu_queue_scan_variant();    // gpu_queue_scan.cu
Variant gpu_queue_tq_variant();      // gpu_queue_tq.cu
Variant gpu_opt_variant();           // gpu_opt.cu
Variant multi_device_variant();      // multi_device.cpp
}  // namespace gpu

// multi-device with an explicit engine configuration (the variant derives it from Options through
// tiling::configure): for tests that choose the workers and the tiles, e.g. CPU groups alone on a
// machine with GPUs, or tiles that are not square. Checks the inputs like every variant;
// cfg.diagonal is set from opt.connectivity.
Result run_multi_device_with(const HostImage& marker, const HostImage& mask, const Options& opt,
                             tiling::EngineConfig cfg);
}  // namespace repix::reconstruct
