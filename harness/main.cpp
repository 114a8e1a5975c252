// repix command line: see harness/cli.cpp.
#include <unistd.h>

#include <cstdlib>

#include "harness/cli.hpp"

namespace {

// OpenMP's idle threads sleep (OMP_WAIT_POLICY=PASSIVE) in every repix process, unless the caller
// chose a policy. libgomp's default spins before it sleeps, and a spinning thread keeps its core
// while the thread it waits for may not have one: on a 2-core machine with one core busy
// elsewhere, `ami omp` on the quick suite's 37x23 image had an IQR of 85 % of its median and
// `area-opening omp` on a 17x9 constant image 98 600 % (medians 0.02 ms, samples up to 40 ms);
// passive, 5.5 % and 6.7 %. On an idle machine the cost is a futex wake a parallel region:
// reconstruct omp-tiled at 1024^2 4.4 -> 5.2 ms, ecc, maxtree and omp-nontiled unchanged within
// noise. libgomp reads the policy once, when it is loaded, so it is set here and the program
// started again; REPIX_OPENMP_DEFAULTS marks the second start (and tells the report, env.cpp, that
// repix chose the policy). Where the new start fails the program carries on with the default.
void apply_openmp_defaults(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") || std::getenv("REPIX_OPENMP_DEFAULTS")) return;
  ::setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
  ::setenv("REPIX_OPENMP_DEFAULTS", "1", 1);
  ::execv("/proc/self/exe", argv);
  ::unsetenv("OMP_WAIT_POLICY");  // not started again: the policy in force is libgomp's default
  ::unsetenv("REPIX_OPENMP_DEFAULTS");
}

}  // namespace

int main(int argc, char** argv) {
  apply_openmp_defaults(argv);
  return repix::cli::main(argc, argv);
}
