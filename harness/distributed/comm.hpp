// The ranks of one `mpirun` (distributed runs, issue 42), behind an interface without MPI's types
// so that a build without MPI compiles the same callers: comm_mpi.cpp where CMake found MPI,
// comm_none.cpp (every call a clear error) where it did not.
//
// One rank per GPU, or per CPU group on a machine without one. The world communicator is set up
// on first use (MPI_Init_thread, FUNNELED) and finalised at exit; a rank that fails says why in
// one line and the ranks agree on the first failure before any output is written (first_error).
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace repix::distributed {

// An error every rank has, which rank 0 says: the other ranks exit with `code` without a line of
// their own, so that `mpirun -np 4` prints one line, not four.
struct SaidByRoot : Error {
  SaidByRoot(const std::string& what, int exit_code) : Error(what), code(exit_code) {}
  int code;
};

// Whether this build has MPI; the library's own version line where it has ("Open MPI v4.1.4, ...").
bool built_with_mpi();
std::string mpi_library();

class Comm {
 public:
  // MPI_COMM_WORLD. Throws repix::Error ("this build of repix has no MPI ...") without MPI.
  static Comm& world();
  int rank() const { return rank_; }
  int size() const { return size_; }
  bool root() const { return rank_ == 0; }
  void barrier() const;
  double wtime() const;  // seconds, MPI_Wtime
  // The element-wise sum of every rank's `v` (all of one length), at the root; others unchanged.
  void sum_to_root(std::vector<std::int64_t>& v) const;
  // Every rank's bytes, in rank order, at the root (empty elsewhere).
  std::vector<std::vector<char>> gather_to_root(const std::vector<char>& mine) const;
  // Every rank's double, in rank order, at the root (empty elsewhere).
  std::vector<double> gather_to_root(double mine) const;
  // The sum / the maximum of every rank's `mine`, on every rank.
  std::int64_t sum_all(std::int64_t mine) const;
  std::int64_t max_all(std::int64_t mine) const;
  // The root's `s` on every rank.
  std::string broadcast_from_root(const std::string& s) const;
  // Every rank's bytes, in rank order, on every rank.
  std::vector<std::vector<char>> gather_to_all(const std::vector<char>& mine) const;
  // Sends `send` to rank `peer` and receives `recv.size()` bytes from it (both ranks call it with
  // each other as peer); a peer of -1 is no one (nothing sent, `recv` unchanged).
  void exchange(int peer, const std::vector<char>& send, std::vector<char>& recv) const;
  // The message of the lowest rank that has one ("" when none has), on every rank.
  std::string first_error(const std::string& mine) const;
  // first_error, thrown where there is one: by rank 0 as its one line (repix::Error), by the
  // others as SaidByRoot (exit 1, nothing said). Returns where no rank has an error.
  void throw_first_error(const std::string& mine) const;

 private:
  Comm(int rank, int size) : rank_(rank), size_(size) {}
  int rank_ = 0, size_ = 1;
};

// A vector of plain values as the bytes a Comm call carries, and back (a byte count that is not
// a whole number of values throws repix::Error).
template <class T>
std::vector<char> bytes_of(const std::vector<T>& v) {
  std::vector<char> out(v.size() * sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), v.data(), out.size());
  return out;
}
template <class T>
std::vector<T> values_of(const std::vector<char>& bytes) {
  if (bytes.size() % sizeof(T) != 0)
    throw Error("internal: " + std::to_string(bytes.size()) + " bytes from a rank are not whole values");
  std::vector<T> out(bytes.size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

// Rank `rank`'s part of `count` slabs among `size` ranks: [first, last), contiguous, in rank
// order, sizes differing by at most one; a rank past `count` gets an empty part.
std::pair<std::int64_t, std::int64_t> part(std::int64_t count, int rank, int size);

}  // namespace repix::distributed
