// The ami registry: one line per pipeline variant, naming its (ranklet, auto-mi) pair. The CLI,
// the harness and the tests pick them up.
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
    v.push_back(make_pipeline("seq", "reference", "ranklet seq -> quantise -> auto-mi seq (the reference)", "seq", "seq"));
    v.push_back(make_pipeline("omp", "cpu-parallel", "the thesis's pair: ranklet omp -> auto-mi omp", "omp", "omp"));
    v.push_back(make_pipeline("omp-hist", "cpu-parallel-hist", "ranklet omp-hist (fastest exact CPU) -> auto-mi omp",
                              "omp-hist", "omp"));
    v.push_back(make_pipeline("gpu-naive", "gpu-naive", "the thesis's CUDA pair: ranklet gpu-naive -> auto-mi gpu-naive",
                              "gpu-naive", "gpu-naive"));
    v.push_back(make_pipeline("gpu-opt", "gpu-opt", "ranklet gpu-opt -> auto-mi gpu-opt", "gpu-opt", "gpu-opt"));
    v.push_back(make_pipeline("multi-device", "multi-device", "ranklet gpu-opt -> auto-mi multi-device (lags over every GPU)",
                              "gpu-opt", "multi-device"));
    return v;
  }();
  return all;
}

const Variant& find_variant(const std::string& id) {
  return find_by_name(variants(), id, "ami variant", [](const Variant& v) { return v.id; });
}

}  // namespace repix::ami
