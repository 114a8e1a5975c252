// ranklet's distributed run (`mpirun -np N repix run ranklet --distributed --input IMG --output R.npy`).
#pragma once
#include <memory>

#include "ami/ranklet/ranklet.hpp"
#include "harness/args.hpp"
#include "harness/distributed/driver.hpp"

namespace repix::family::ranklet_distributed {

// Rows, one contiguous part per rank (sizes differing by at most one; ranks past the row count
// get none). The window of output pixel (x, y) covers rows y-h+1 .. y+h (h: half the largest
// window), so each rank reads its rows with h-1 halo rows above and h below (fewer at the image's
// edges), runs `variant` on them (on GPU rank % GPUs for a GPU variant), and keeps its own rows:
// their windows see exactly the rows the whole image gives them, and the image's own edges stay
// its edges (the 255 padding), so the output is the single process's bit for bit (every variant
// computes the same float32 values). Each rank writes its rows of every (window, orientation)
// plane of the one --output .npy (shared_npy.hpp).
std::unique_ptr<distributed::Job> job(const cli::Args& a, const ami::ranklet::Options& opt,
                                      const ami::ranklet::Variant& variant);

}  // namespace repix::family::ranklet_distributed
