// One .npy file the ranks of a distributed run write together, each only its own slabs: rank 0
// creates the file's temporary (core/atomic_file.hpp: in the destination's folder, removed on
// any failure) with the header and the full length, every rank writes its bytes at their place
// by name (pwrite) and syncs them, the ranks agree that every write succeeded, then rank 0
// commits: the file appears whole, or not at all. The folder must be one all ranks see (a
// shared file system across hosts), as MPI-IO's files must.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "harness/distributed/comm.hpp"

namespace repix::distributed {

// `dims`: the whole array, slowest first (numpy's order); `descr`: numpy's dtype ("<f4", "<i8");
// this rank's part: `bytes` bytes of `data` starting `offset` bytes into the array's data.
// Called by every rank. Standard output and special files are refused (each rank would need them).
void write_npy_parts(const Comm& comm, const std::string& path, const std::string& descr,
                     const std::vector<std::int64_t>& dims, std::uint64_t offset, const void* data, std::size_t bytes);

}  // namespace repix::distributed
