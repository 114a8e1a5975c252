// harness/distributed/comm.hpp over MPI (Open MPI here and on the GPU hosts).
#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <limits>

#include "core/error.hpp"
#include "harness/distributed/comm.hpp"

namespace repix::distributed {

namespace {

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int n = 0;
  MPI_Error_string(rc, text, &n);
  throw Error(std::string(what) + " failed: " + std::string(text, static_cast<std::size_t>(n)));
}

void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

int to_int(std::size_t n, const char* what) {
  if (n > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw Error(std::string(what) + ": " + std::to_string(n) + " bytes are more than one MPI message carries here");
  return static_cast<int>(n);
}

}  // namespace

bool built_with_mpi() { return true; }

std::string mpi_library() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int n = 0;
  MPI_Get_library_version(text, &n);
  std::string s(text, static_cast<std::size_t>(n));
  const std::size_t line = s.find_first_of("\r\n");
  return line == std::string::npos ? s : s.substr(0, line);
}

Comm& Comm::world() {
  static Comm* comm = [] {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      int provided = 0;
      check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
      std::atexit(finalize_at_exit);
    }
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    return new Comm(rank, size);
  }();
  return *comm;
}

void Comm::barrier() const { check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }
double Comm::wtime() const { return MPI_Wtime(); }

void Comm::sum_to_root(std::vector<std::int64_t>& v) const {
  const int n = to_int(v.size(), "a reduction");
  if (root())
    check(MPI_Reduce(MPI_IN_PLACE, v.data(), n, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD), "MPI_Reduce");
  else
    check(MPI_Reduce(v.data(), nullptr, n, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD), "MPI_Reduce");
}

std::vector<std::vector<char>> Comm::gather_to_root(const std::vector<char>& mine) const {
  const int n = to_int(mine.size(), "a gather");
  std::vector<int> counts(root() ? static_cast<std::size_t>(size_) : 0), displs(counts.size());
  check(MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Gather");
  std::vector<char> all;
  if (root()) {
    std::size_t total = 0;
    for (std::size_t r = 0; r < counts.size(); ++r) {
      displs[r] = to_int(total, "a gather");
      total += static_cast<std::size_t>(counts[r]);
    }
    all.resize(total);
  }
  check(MPI_Gatherv(mine.data(), n, MPI_CHAR, all.data(), counts.data(), displs.data(), MPI_CHAR, 0, MPI_COMM_WORLD),
        "MPI_Gatherv");
  std::vector<std::vector<char>> out;
  for (std::size_t r = 0; r < counts.size(); ++r)
    out.emplace_back(all.begin() + displs[r], all.begin() + displs[r] + counts[r]);
  return out;
}

std::vector<double> Comm::gather_to_root(double mine) const {
  std::vector<double> out(root() ? static_cast<std::size_t>(size_) : 0);
  check(MPI_Gather(&mine, 1, MPI_DOUBLE, out.data(), 1, MPI_DOUBLE, 0, MPI_COMM_WORLD), "MPI_Gather");
  return out;
}

std::int64_t Comm::sum_all(std::int64_t mine) const {
  std::int64_t out = 0;
  check(MPI_Allreduce(&mine, &out, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
  return out;
}

std::int64_t Comm::max_all(std::int64_t mine) const {
  std::int64_t out = 0;
  check(MPI_Allreduce(&mine, &out, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
  return out;
}

std::string Comm::broadcast_from_root(const std::string& s) const {
  int n = root() ? to_int(s.size(), "a broadcast") : 0;
  check(MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
  std::string text = root() ? s : std::string(static_cast<std::size_t>(n), '\0');
  check(MPI_Bcast(text.data(), n, MPI_CHAR, 0, MPI_COMM_WORLD), "MPI_Bcast");
  return text;
}

std::vector<std::vector<char>> Comm::gather_to_all(const std::vector<char>& mine) const {
  const int n = to_int(mine.size(), "a gather");
  std::vector<int> counts(static_cast<std::size_t>(size_)), displs(counts.size());
  check(MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD), "MPI_Allgather");
  std::size_t total = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    displs[r] = to_int(total, "a gather");
    total += static_cast<std::size_t>(counts[r]);
  }
  std::vector<char> all(total);
  check(MPI_Allgatherv(mine.data(), n, MPI_CHAR, all.data(), counts.data(), displs.data(), MPI_CHAR, MPI_COMM_WORLD),
        "MPI_Allgatherv");
  std::vector<std::vector<char>> out;
  for (std::size_t r = 0; r < counts.size(); ++r)
    out.emplace_back(all.begin() + displs[r], all.begin() + displs[r] + counts[r]);
  return out;
}

void Comm::exchange(int peer, const std::vector<char>& send, std::vector<char>& recv) const {
  if (peer < 0) return;
  check(MPI_Sendrecv(send.data(), to_int(send.size(), "an exchange"), MPI_CHAR, peer, 0, recv.data(),
                     to_int(recv.size(), "an exchange"), MPI_CHAR, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
        "MPI_Sendrecv");
}

std::string Comm::first_error(const std::string& mine) const {
  // The lowest rank with a message, then that message broadcast from it.
  int have = mine.empty() ? size_ : rank_, first = size_;
  check(MPI_Allreduce(&have, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce");
  if (first == size_) return "";
  int n = rank_ == first ? to_int(mine.size(), "an error") : 0;
  check(MPI_Bcast(&n, 1, MPI_INT, first, MPI_COMM_WORLD), "MPI_Bcast");
  std::string text = rank_ == first ? mine : std::string(static_cast<std::size_t>(n), '\0');
  check(MPI_Bcast(text.data(), n, MPI_CHAR, first, MPI_COMM_WORLD), "MPI_Bcast");
  return text;
}

}  // namespace repix::distributed
