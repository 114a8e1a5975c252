// The ami registry: one line per pipeline variant (its file names its (ranklet, auto-mi) pair).
// Adding one is a file plus a line here; the CLI, the harness and the tests pick it up.
//
// omp pairs the thesis's parallel loops (ranklet omp: per-window sorts; auto-mi omp: lags in
// parallel); omp-hist swaps in ranklet omp-hist (sliding quadrant histograms over OpenMP), the
// fastest exact CPU ranklet, bit-identical to seq: the honest fast CPU pipeline.
#include "ami/ami.hpp"
#include "ami/variants.hpp"
#include "core/find_by_name.hpp"

namespace repix::ami {

const std::vector<Variant>& variants() {
  static const std::vector<Variant> all = [] {
    std::vector<Variant> v;
    v.push_back(seq_variant());           // (ranklet seq, auto-mi seq)
    v.push_back(omp_variant());           // (omp, omp)
    v.push_back(omp_hist_variant());      // (omp-hist, omp)
    v.push_back(gpu_naive_variant());     // (gpu-naive, gpu-naive)
    v.push_back(gpu_opt_variant());       // (gpu-opt, gpu-opt)
    v.push_back(multi_device_variant());  // (gpu-opt, multi-device)
    return v;
  }();
  return all;
}

const Variant& find_variant(const std::string& id) {
  return find_by_name(variants(), id, "ami variant", [](const Variant& v) { return v.id; });
}

}  // namespace repix::ami
