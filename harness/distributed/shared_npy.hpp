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

// One run of this rank's bytes: `bytes` bytes of `data`, `offset` bytes into the array's data.
struct Segment {
  std::uint64_t offset = 0;
  const void* data = nullptr;
  std::size_t bytes = 0;
};

// `dims`: the whole array, slowest first (numpy's order); `descr`: numpy's dtype ("<f4", "<i8");
// `mine`: this rank's part (several runs where its rows recur in each plane of a stack).
// Called by every rank. Standard output and special files are refused (each rank would need them).
void write_npy_parts(const Comm& comm, const std::string& path, const std::string& descr,
                     const std::vector<std::int64_t>& dims, const std::vector<Segment>& mine);
// The same with one run.
inline void write_npy_parts(const Comm& comm, const std::string& path, const std::string& descr,
                            const std::vector<std::int64_t>& dims, std::uint64_t offset, const void* data,
                            std::size_t bytes) {
  write_npy_parts(comm, path, descr, dims, std::vector<Segment>{{offset, data, bytes}});
}

}  // namespace repix::distributed
