// The reconstruct family's registry: one line per variant, in ablation order. Adding a variant
// is one file (named after its id) plus one line here; the CLI, the harness, the tests and the
// tables pick it up.
#include "core/find_by_name.hpp"
#include "core/error.hpp"
#include "reconstruct/reconstruct.hpp"
#include "reconstruct/variants.hpp"

namespace repix::reconstruct {

const std::vector<Variant>& variants() {
  static const std::vector<Variant> all = [] {
    std::vector<Variant> v;
    v.push_back({"seq", false, "reference", "Vincent's fast hybrid (FH, Algorithm 2): raster + anti-raster scans, then a FIFO", run_seq, nullptr});
    v.push_back({"seq-sr", false, "raster-scans", "Vincent's SR: raster and anti-raster scans until stable", run_seq_sr, nullptr});
    v.push_back({"seq-qb", false, "queue-from-maxima", "Vincent's QB: FIFO seeded from the marker's maxima, no scans", run_seq_qb, nullptr});
    v.push_back({"omp-nontiled", false, "cpu-nontiled", "wavefront dealt round-robin to threads, atomic CAS updates (paper's contrast)", run_omp_nontiled, nullptr});
    v.push_back({"omp-tiled", false, "cpu-tiled", "per-tile FH in parallel, then border propagation rounds (sections 4, 5.1)", run_omp_tiled, nullptr});
    v.push_back(gpu::gpu_naive_variant());
    v.push_back(gpu::gpu_sr_variant());
    v.push_back(gpu::gpu_queue_atomic_variant());
    v.push_back(gpu::gpu_queue_warp_atomic_variant());
    v.push_back(gpu::gpu_queue_scan_variant());
    v.push_back(gpu::gpu_queue_tq_variant());
    v.push_back(gpu::gpu_opt_variant());
    v.push_back(gpu::multi_device_variant());
    return v;
  }();
  return all;
}

const Variant& find_variant(const std::string& id) {
  return find_by_name(variants(), id, "reconstruct variant", [](const Variant& v) { return v.id; });
}

}  // namespace repix::reconstruct
