// ami's distributed run (`mpirun -np N repix run ami --distributed --input IMG --output F.csv`).
#pragma once
#include <memory>

#include "ami/ami.hpp"
#include "harness/args.hpp"
#include "harness/distributed/driver.hpp"

namespace repix::family::ami_distributed {

// Windows, one contiguous range of the windows asked per rank (sizes differing by at most one;
// ranks past the window count get none). A window's six features depend on its own ranklet
// planes only, so each rank reads the whole image and runs `variant` (on GPU rank % GPUs for a
// GPU variant) for its windows alone: each feature is the single process's, computed by the same
// code on the same planes, bit for bit. Rank 0 gathers the features in window order and writes
// --output. At most as many ranks as windows (4 by default) have work: the decomposition the
// issue names for larger rank counts (the ranklet stage by rows, the feature stage by lags) is
// still to come.
std::unique_ptr<distributed::Job> job(const cli::Args& a, const ami::Options& opt, const ami::Variant& variant);

}  // namespace repix::family::ami_distributed
