// ECC's distributed run (`mpirun -np N repix run ecc --distributed --input F --output OUT.csv`).
#pragma once
#include "harness/args.hpp"

namespace repix::family::ecc_distributed {

// Slabs along the slowest axis (z in 3-D, rows in 2-D), one contiguous part per rank (sizes
// differing by at most one; ranks past the slab count get none). Each rank reads only its part
// and the halo slab on each side from the file or the chunk-addressable generator
// (datasets::open_source: a volume larger than any one node's memory streams), checks it, and
// adds up each voxel's introduced cells by value (ecc/cell_rules.hpp, the rule every variant
// uses), the halo slabs read as neighbours only. The parts merge at rank 0: 8- and 16-bit
// values are bins (one reduction of their sums), float32 values each rank's distinct values with
// their sums (gathered, merged by value). The curve is exactly the single-process one; rank 0
// writes --output and --json (the rank layout, the MPI library, every rank's time between two
// barriers). Returns the exit code on every rank.
int run(const cli::Args& a);

}  // namespace repix::family::ecc_distributed
