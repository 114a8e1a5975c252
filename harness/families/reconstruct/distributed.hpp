// reconstruct's distributed run (`mpirun -np N repix run reconstruct --distributed --marker M
// --mask K --output OUT.npy`).
#pragma once
#include <memory>

#include "harness/args.hpp"
#include "harness/distributed/driver.hpp"
#include "reconstruct/reconstruct.hpp"

namespace repix::family::reconstruct_distributed {

// Rows, one contiguous part per rank (sizes differing by at most one; ranks past the row count
// get none), each rank reading only its rows of marker and mask (datasets::open_source: files
// stream, chunk-addressable generators make the rows) and reconstructing them with `variant` (on
// GPU rank % GPUs for a GPU variant) as if its part were the whole image. Then border rounds, the
// IWPP paper's scheme over tiles of rows: the ranks swap their edge rows with their neighbours,
// raise each edge pixel p to min(max J(q), I(p)) over its neighbours q across the border (as
// multi-device's tiles do), and propagate the raised pixels inside the part (a FIFO on the host
// up to a budget, else the variant again with J as the marker: J is a lower bound of the answer,
// and the reconstruction of a lower bound stays one); an all-reduce ends the rounds when no rank
// raised a pixel. Every update is a max of a min of existing values, so at that fixpoint J is the
// reconstruction, the unique one: the output equals the single process's bit for bit. Each rank
// writes its rows of the one --output .npy (shared_npy.hpp); the record (--json) holds the
// rounds and each rank's counters.
std::unique_ptr<distributed::Job> job(const cli::Args& a, const reconstruct::Options& opt,
                                      const reconstruct::Variant& variant);

}  // namespace repix::family::reconstruct_distributed
