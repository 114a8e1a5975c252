// `omp-hist`: ranklet omp-hist (sliding quadrant histograms over OpenMP, the fastest exact CPU
// ranklet, bit-identical to seq) -> auto-mi omp: the honest fast CPU pipeline, and the bench's
// reference at large sizes.
#include "ami/variants.hpp"

namespace repix::ami {

Variant omp_hist_variant() {
  return make_pipeline("omp-hist", "cpu-parallel-hist", "ranklet omp-hist (fastest exact CPU) -> auto-mi omp", "omp-hist", "omp");
}

}  // namespace repix::ami
