// ami's distributed run (`mpirun -np N repix run ami --distributed --input IMG --output F.csv`).
#pragma once
#include <memory>

#include "ami/ami.hpp"
#include "harness/args.hpp"
#include "harness/distributed/driver.hpp"

namespace repix::family::ami_distributed {

// Windows, one contiguous range of the windows asked per rank (sizes differing by at most one). A
// window's six features depend on its own ranklet planes only, so each rank reads the whole image
// and runs `variant` (on GPU rank % GPUs for a GPU variant) for its windows alone: each feature is
// the single process's, computed by the same code on the same planes, bit for bit. With more
// ranks than windows, each window gets a group of ranks (sizes differing by at most one): every
// rank of the group makes the window's three ranklet planes with the variant's ranklet stage and
// quantises them as the pipeline does, then counts its part of the lags with the variant's auto-mi
// stage (auto-mi's ranges of equal pair counts, as `repix run auto-mi --distributed` splits
// them); rank 0 sums each lag's NMI over the group (nonzero in one part only: exact) and the lags
// in order, as the single process does. Rank 0 gathers the features in window order and writes
// --output.
std::unique_ptr<distributed::Job> job(const cli::Args& a, const ami::Options& opt, const ami::Variant& variant);

}  // namespace repix::family::ami_distributed
