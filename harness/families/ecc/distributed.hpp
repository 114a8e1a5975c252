// ECC's distributed run (`mpirun -np N repix run ecc --distributed --input F --output OUT.csv`).
#pragma once
#include <memory>

#include "ecc/ecc.hpp"
#include "harness/args.hpp"
#include "harness/distributed/driver.hpp"

namespace repix::family::ecc_distributed {

// Slabs along the slowest axis (z in 3-D, rows in 2-D), one contiguous part per rank (sizes
// differing by at most one; ranks past the slab count get none). Each rank reads only its part
// and the halo slab on each side from the file or the chunk-addressable generator
// (datasets::open_source: a volume larger than any one node's memory streams), checks it, and
// adds up each voxel's introduced cells by value (ecc/cell_rules.hpp, the rule every variant
// uses), the halo slabs read as neighbours only: with --variant gpu-stream (the default where a
// GPU is) on GPU rank % GPUs, its pipeline over the part's slabs (the part streams in chunks,
// never whole in memory), with --variant seq (the default without) by the CPU slab code on one
// thread, with --variant omp by the same on the rank's OpenMP threads (--threads). The
// parts merge at rank 0: 8- and 16-bit values are bins (one reduction of their sums), float32
// values each rank's distinct values with their sums (gathered, merged by value). The curve is exactly the single-process one; rank 0
// writes --output; the record (--json) holds the curve.
std::unique_ptr<distributed::Job> job(const cli::Args& a, const ecc::Options& opt);

}  // namespace repix::family::ecc_distributed
