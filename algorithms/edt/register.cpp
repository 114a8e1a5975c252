// The edt family's registry: one line per variant, in ablation order. Adding a variant is one
// file (named after its id) plus one line here.
#include "core/find_by_name.hpp"
#include "core/error.hpp"
#include "edt/edt.hpp"
#include "edt/detail.hpp"
#include "edt/variants.hpp"

namespace repix::edt {

const std::vector<Variant>& variants() {
  static const std::vector<Variant> all = [] {
    std::vector<Variant> v;
    v.push_back({{"seq-exact", false, "oracle",
                  "exact separable EDT: nearest background row per column, then the lower envelope of parabolas per row (int64)",
                  run_seq_exact, {}},
                 /*exact=*/true});
    v.push_back({{"seq", false, "reference",
                  "the paper's Algorithm 3: 8-neighbour nearest-site propagation with a FIFO queue", run_seq, {}},
                 /*exact=*/false});
    v.push_back({{"omp-tiled", false, "cpu-parallel",
                  "Algorithm 3 per tile in parallel (OpenMP), then border rounds on a snapshot until stable",
                  run_omp_tiled, {}},
                 /*exact=*/false});
    v.push_back(gpu_queue_atomic_variant());
    v.push_back(gpu_queue_warp_atomic_variant());
    v.push_back(gpu_queue_scan_variant());
    v.push_back(gpu_queue_tq_variant());
    v.push_back(gpu_exact_rowfill_variant());
    v.push_back(gpu_exact_envelope_variant());
    v.push_back(gpu_opt_variant());
    v.push_back(multi_device_variant());
    return v;
  }();
  return all;
}

const Variant& find_variant(const std::string& id) {
  return find_by_name(variants(), id, "edt variant", [](const Variant& v) { return v.id; });
}

}  // namespace repix::edt
