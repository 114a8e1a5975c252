// maxtree's and area-opening's distributed runs (`mpirun -np N repix run maxtree --distributed
// --input IMG --output PARENT.npy`, the same for area-opening with --area A).
#pragma once
#include <memory>
#include <string>

#include "harness/args.hpp"
#include "harness/distributed/driver.hpp"
#include "maxtree/maxtree.hpp"

namespace repix::family::maxtree_distributed {

// Rows, one contiguous part per rank (sizes differing by at most one; ranks past the row count
// get none), each rank reading only its rows and building their max-tree alone with the tree
// variant `variant_id` (on GPU rank % GPUs for a GPU variant), as if its part were the whole
// image. Then the boundary-tree merge of maxtree/parts.hpp: each rank sends the nodes of its edge
// rows and their ancestors (with their areas for the area opening), one all-gather gives every
// rank all of them, and each rank merges them into the whole image's tree at those nodes, then
// rewrites its part: the parent image in the whole image's normal form (indices of the whole
// image), or the area opening (the filter on the rank's CPU threads, the merged nodes' levels
// taken from the merge). Both equal the single process's bit for bit. Each rank writes its rows
// of the one --output .npy (shared_npy.hpp).
std::unique_ptr<distributed::Job> job(const cli::Args& a, const maxtree::Options& opt, const std::string& variant_id,
                                      bool area_opening);

}  // namespace repix::family::maxtree_distributed
