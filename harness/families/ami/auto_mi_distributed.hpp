// auto-mi's distributed run (`mpirun -np N repix run auto-mi --distributed --input L --output F.csv`).
#pragma once
#include <memory>

#include "ami/auto_mi/auto_mi.hpp"
#include "harness/args.hpp"
#include "harness/distributed/driver.hpp"

namespace repix::family::auto_mi_distributed {

// The lags of both directions shared out over the ranks as multi-device shares them over GPUs:
// contiguous lag ranges with equal pair counts (lag_part, nmi_core.hpp), rank r computing part r
// with `variant` (one GPU a rank: rank r uses GPU r modulo the GPUs it sees) on the whole label
// image, which each rank reads. The parts' per-lag NMIs are disjoint (a lag's NMI is 0 in every
// other part), so adding them at rank 0 and summing the lags in order gives exactly the single
// process's features; rank 0 writes --output; the record (--json) holds the features and each
// rank's lag ranges.
std::unique_ptr<distributed::Job> job(const cli::Args& a, const ami::auto_mi::Options& opt,
                                      const ami::auto_mi::Variant& variant);

}  // namespace repix::family::auto_mi_distributed
