// The auto-mi registry: one line per variant, in ablation order. Adding a variant is one file
// plus one line here; the CLI, the harness and the tests pick it up.
#include "ami/auto_mi/auto_mi.hpp"
#include "ami/auto_mi/variants.hpp"
#include "core/find_by_name.hpp"

namespace repix::ami::auto_mi {

const std::vector<Variant>& variants() {
  static const std::vector<Variant> all = [] {
    std::vector<Variant> v;
    v.push_back({"seq", false, "reference", "one joint histogram per lag, lag by lag (the reference)", run_seq, {}});
    v.push_back({"omp", false, "cpu-parallel", "the thesis's OpenMP: lags in parallel, private histograms", run_omp, {}});
    v.push_back(gpu::gpu_naive_variant());
    v.push_back(gpu::gpu_global_hist_variant());
    v.push_back(gpu::gpu_shared_hist_variant());
    v.push_back(gpu::gpu_shared_warp_agg_variant());
    v.push_back(gpu::gpu_run_merge_variant());
    v.push_back(gpu::gpu_epoch_pipelined_variant());  // measured slower than gpu-opt: kept as a step
    v.push_back(gpu::gpu_epoch_runs_variant());       // likewise
    v.push_back(gpu::gpu_opt_variant());
    v.push_back({"multi-device", true, "multi-device",
                 "gpu-opt on every visible GPU, lags split into ranges of equal pair counts", run_multi_device, {}});
    return v;
  }();
  return all;
}

const Variant& find_variant(const std::string& id) {
  return find_by_name(variants(), id, "auto-mi variant", [](const Variant& v) { return v.id; });
}

}  // namespace repix::ami::auto_mi
