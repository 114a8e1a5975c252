// The edt family's variants, in ablation order.
#include "core/find_by_name.hpp"
#include "core/error.hpp"
#include "iwpp/edt.hpp"
#include "iwpp/edt_detail.hpp"
#include "iwpp/edt_gpu_variants.hpp"

namespace repix::edt {

const std::vector<Variant>& variants() {
  static const std::vector<Variant> all = [] {
    std::vector<Variant> v;
    v.push_back({"seq-exact", false, true, "oracle",
                 "exact separable EDT: nearest background row per column, then the lower envelope of parabolas per row (int64)",
                 run_seq_exact, {}});
    v.push_back({"seq", false, false, "reference",
                 "the paper's Algorithm 3: 8-neighbour nearest-site propagation with a FIFO queue",
                 run_seq, {}});
    v.push_back({"omp-tiled", false, false, "cpu-parallel",
                 "Algorithm 3 per tile in parallel (OpenMP), then border rounds on a snapshot until stable",
                 run_omp_tiled, {}});
    append_gpu_variants(v);
    return v;
  }();
  return all;
}

const Variant& find_variant(const std::string& id) {
  return find_by_name(variants(), id, "edt variant", [](const Variant& v) { return v.id; });
}

}  // namespace repix::edt
