// The max-tree variants' entry points, one per variant file, for the registry (register.cpp).
#pragma once
#include "maxtree/maxtree.hpp"

namespace repix::maxtree {
Result run_seq(const HostImage& image, const Options& opt);        // seq.cpp
Result run_seq_flood(const HostImage& image, const Options& opt);  // seq_flood.cpp
Result run_omp(const HostImage& image, const Options& opt);        // omp.cpp
namespace gpu {
Variant gpu_naive_variant();  // gpu_naive.cu
Variant gpu_tile_variant();   // gpu_tile.cu
Variant gpu_tile_1d_variant();  // gpu_tile_1d.cu
Variant gpu_grid_variant();   // gpu_grid.cu
Variant gpu_border_variant();  // gpu_border.cu
Variant gpu_compressed_variant();  // gpu_compressed.cu
Variant gpu_packed_variant();  // gpu_packed.cu
Variant gpu_monotone_variant();  // gpu_monotone.cu
Variant gpu_settle_copy_variant();  // gpu_settle_copy.cu
Variant gpu_planned_zips_variant();  // gpu_planned_zips.cu
Variant gpu_climbing_merges_variant();  // gpu_climbing_merges.cu
Variant gpu_paired_loads_variant();  // gpu_paired_loads.cu
Variant gpu_tile_settle_variant();  // gpu_tile_settle.cu
Variant gpu_opt_variant();     // gpu_opt.cu
}  // namespace gpu
}  // namespace repix::maxtree
