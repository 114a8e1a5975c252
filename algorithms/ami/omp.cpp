// `omp`: the thesis's OpenMP pair, ranklet omp (its parallel loop B: per-window sorts over rows) ->
// auto-mi omp (lags in parallel, private histograms).
#include "ami/variants.hpp"

namespace repix::ami {

Variant omp_variant() {
  return make_pipeline("omp", "cpu-parallel", "the thesis's pair: ranklet omp -> auto-mi omp", "omp", "omp");
}

}  // namespace repix::ami
