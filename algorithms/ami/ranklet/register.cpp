// The ranklet registry: one line per variant, in ablation order. Adding a variant is one file
// (named after its id) plus one line here; the CLI, the harness and the tests pick it up.
#include "ami/ranklet/ranklet.hpp"
#include "ami/ranklet/variants.hpp"
#include "core/find_by_name.hpp"

namespace repix::ami::ranklet {

const std::vector<Variant>& variants() {
  static const std::vector<Variant> all = [] {
    std::vector<Variant> v;
    v.push_back({{"seq", false, "reference",
                  "the thesis's sequential algorithm: sort each window (std::sort), 1-based midranks (the reference)",
                  run_seq, {}}});
    v.push_back({{"seq-hist", false, "distribution-counting",
                  "quadrant histograms slid along each row, 2U by the Mann-Whitney form over 256 bins", run_seq_hist,
                  {}}});
    v.push_back({{"omp", false, "cpu-parallel", "the thesis's parallel loop B: seq's per-pixel sort, rows over OpenMP threads",
                  run_omp, {}}});
    v.push_back({{"omp-hist", false, "cpu-parallel-hist",
                  "seq-hist's rows (sliding quadrant histograms) over OpenMP threads: the fastest exact CPU form",
                  run_omp_hist, {}}});
    v.push_back(gpu_naive_variant());
    v.push_back(gpu_opt_variant());
    return v;
  }();
  return all;
}

const Variant& find_variant(const std::string& id) {
  return find_by_name(variants(), id, "ranklet variant", [](const Variant& v) { return v.id; });
}

}  // namespace repix::ami::ranklet
