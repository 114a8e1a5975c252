// The pieces of harness/distributed/comm.hpp that do not talk to MPI.
#include "harness/distributed/comm.hpp"

namespace repix::distributed {

std::pair<std::int64_t, std::int64_t> part(std::int64_t count, int rank, int size) {
  const std::int64_t base = count / size, extra = count % size;
  const std::int64_t first = rank * base + (rank < extra ? rank : extra);
  return {first, first + base + (rank < extra ? 1 : 0)};
}

void Comm::throw_first_error(const std::string& mine) const {
  const std::string error = first_error(mine);
  if (error.empty()) return;
  if (root()) throw Error(error);
  throw SaidByRoot(error, 1);
}

}  // namespace repix::distributed
