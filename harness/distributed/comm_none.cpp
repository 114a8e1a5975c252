// harness/distributed/comm.hpp in a build without MPI: every distributed call says so.
#include "core/error.hpp"
#include "harness/distributed/comm.hpp"

namespace repix::distributed {

bool built_with_mpi() { return false; }
std::string mpi_library() { return ""; }

Comm& Comm::world() {
  throw Error(
      "this build of repix has no MPI (CMake found none: install Open MPI, e.g. Debian's openmpi-bin and "
      "libopenmpi-dev, and configure again)");
}
void Comm::barrier() const {}
double Comm::wtime() const { return 0; }
void Comm::sum_to_root(std::vector<std::int64_t>&) const {}
std::vector<std::vector<char>> Comm::gather_to_root(const std::vector<char>& mine) const { return {mine}; }
std::vector<double> Comm::gather_to_root(double mine) const { return {mine}; }
std::int64_t Comm::sum_all(std::int64_t mine) const { return mine; }
std::int64_t Comm::max_all(std::int64_t mine) const { return mine; }
std::string Comm::broadcast_from_root(const std::string& s) const { return s; }
std::vector<std::vector<char>> Comm::gather_to_all(const std::vector<char>& mine) const { return {mine}; }
void Comm::exchange(int, const std::vector<char>&, std::vector<char>&) const {}
std::string Comm::first_error(const std::string& mine) const { return mine; }

}  // namespace repix::distributed
