// The ECC registry: one line per variant, in ablation order. Adding a variant is one file
// plus one line here; the CLI, the harness, the tests and the tables pick it up.
#include "core/find_by_name.hpp"
#include "ecc/ecc.hpp"
#include "ecc/variants.hpp"

namespace repix::ecc {

const std::vector<Variant>& variants() {
  static const std::vector<Variant> all = [] {
    std::vector<Variant> v;
    v.push_back({{"seq", false, "reference", "Algorithm 1, one thread (the reference)", run_seq, {}}, {}});
    v.push_back({{"omp", false, "cpu-parallel", "OpenMP over slabs, thread-private histograms merged", run_omp, {}}, {}});
    v.push_back(gpu::gpu_naive_variant());
    v.push_back(gpu::gpu_register_variant());
    v.push_back(gpu::gpu_shared_hist_variant());
    v.push_back(gpu::gpu_cached_variant());
    v.push_back(gpu_opt_static_variant());
    v.push_back(gpu_opt_fresh_rows_variant());
    v.push_back({{"gpu-opt", true, "beyond-paper",
                  "one pass, 4 voxels/thread, byte-sliced win words, block hash + global hash (exact sort fallback)",
                  run_gpu_opt, make_gpu_opt_plan},
                 {}});
    v.push_back(gpu_opt_direct_variant());
    v.push_back(gpu_opt_warp_variant());
    v.push_back(gpu_opt_cluster_variant());
    v.push_back(gpu_opt_bins16_variant());
    v.push_back(gpu_opt_hash_bins16_variant());
    v.push_back(gpu_opt_sampled16_variant());
    v.push_back({{"gpu-stream", true, "streaming",
                  "out-of-core: slab chunks with halos through pinned buffers on several streams, gpu-opt kernels",
                  run_gpu_stream, {}},
                 run_gpu_stream_source});
    return v;
  }();
  return all;
}

const Variant& find_variant(const std::string& id) {
  return find_by_name(variants(), id, "ecc variant", [](const Variant& v) { return v.id; });
}

}  // namespace repix::ecc
