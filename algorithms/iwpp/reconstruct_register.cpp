// The reconstruct family's variants, in ablation order.
#include "core/find_by_name.hpp"
#include "core/error.hpp"
#include "iwpp/reconstruct.hpp"
#include "iwpp/reconstruct_cpu_variants.hpp"
#include "iwpp/reconstruct_gpu_variants.hpp"

namespace repix::reconstruct {

const std::vector<Variant>& variants() {
  static const std::vector<Variant> all = [] {
    std::vector<Variant> v;
    v.push_back({"seq", false, "reference", "Vincent's fast hybrid (FH, Algorithm 2): raster + anti-raster scans, then a FIFO", run_seq, nullptr});
    v.push_back({"seq-sr", false, "raster-scans", "Vincent's SR: raster and anti-raster scans until stable", run_seq_sr, nullptr});
    v.push_back({"seq-qb", false, "queue-from-maxima", "Vincent's QB: FIFO seeded from the marker's maxima, no scans", run_seq_qb, nullptr});
    v.push_back({"omp-nontiled", false, "cpu-nontiled", "wavefront dealt round-robin to threads, atomic CAS updates (paper's contrast)", run_omp_nontiled, nullptr});
    v.push_back({"omp-tiled", false, "cpu-tiled", "per-tile FH in parallel, then border propagation rounds (sections 4, 5.1)", run_omp_tiled, nullptr});
    append_gpu_variants(v);
    return v;
  }();
  return all;
}

const Variant& find_variant(const std::string& id) {
  return find_by_name(variants(), id, "reconstruct variant", [](const Variant& v) { return v.id; });
}

}  // namespace repix::reconstruct
