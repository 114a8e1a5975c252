// edt's distributed run (`mpirun -np N repix run edt --distributed --input F --output D.npy
// [--sites S.npy]`).
#pragma once
#include <memory>

#include "edt/edt.hpp"
#include "harness/args.hpp"
#include "harness/distributed/driver.hpp"

namespace repix::family::edt_distributed {

// Rows, one contiguous part per rank (sizes differing by at most one; ranks past the row count
// get none), each rank reading only its rows. The exact separable EDT needs whole columns for its
// first pass and whole rows for its second: rows are whole in a part, and a column's only news
// from the other parts is the nearest background row above and below the part. So each rank
// sends every column's first and last background row (8 bytes a column), every rank gathers them
// all, and runs the exact EDT of its rows from those bounds: seq-exact's two passes on its CPU
// threads (edt::exact_rows; the default without a GPU), or an exact separable GPU variant on GPU
// rank % GPUs (gpu-opt, the default with a GPU; edt::Options::column_bounds). The distances are
// seq-exact's on the whole image bit for bit either way, the sites those of the single process
// running the same variant (each variant breaks ties between equally near sites its own way).
// No border rounds are needed: one gather is the whole exchange. Each rank writes its rows of
// --output and --sites (shared_npy.hpp).
std::unique_ptr<distributed::Job> job(const cli::Args& a, const edt::Options& opt, const edt::Variant& variant);

}  // namespace repix::family::edt_distributed
