// The maxtree family's registry: one line per variant, in ablation order. Adding a variant is one
// file (named after its id) plus one line here; its area-opening variant follows from it.
#include <chrono>

#include "core/error.hpp"
#include "core/find_by_name.hpp"
#include "core/nvtx.hpp"
#include "maxtree/maxtree.hpp"
#include "maxtree/variants.hpp"

namespace repix::maxtree {

const std::vector<Variant>& variants() {
  static const std::vector<Variant> all = [] {
    std::vector<Variant> v;
    v.push_back({{"seq", false, "reference",
                  "Berger et al. 2007: counting sort, union-find from the top level down (rank, compression), canonicalisation",
                  run_seq, {}}, /*parallel=*/false, /*make_area=*/{}});
    v.push_back({{"seq-flood", false, "sequential",
                  "Salembier et al. 1998: hierarchical-queue flooding without recursion, then canonicalisation",
                  run_seq_flood, {}}, /*parallel=*/false, /*make_area=*/{}});
    v.push_back({{"omp", false, "cpu-parallel",
                  "tiled map-reduce: Berger trees per tile, pairwise border merges over the tile grid, parallel canonicalisation",
                  run_omp, {}}, /*parallel=*/true, /*make_area=*/{}});
    v.push_back(gpu::gpu_naive_variant());
    v.push_back(gpu::gpu_tile_variant());
    v.push_back(gpu::gpu_tile_1d_variant());
    v.push_back(gpu::gpu_grid_variant());
    v.push_back(gpu::gpu_border_variant());
    v.push_back(gpu::gpu_compressed_variant());
    v.push_back(gpu::gpu_packed_variant());
    v.push_back(gpu::gpu_monotone_variant());
    v.push_back(gpu::gpu_settle_copy_variant());
    v.push_back(gpu::gpu_planned_zips_variant());
    v.push_back(gpu::gpu_climbing_merges_variant());
    v.push_back(gpu::gpu_paired_loads_variant());
    v.push_back(gpu::gpu_tile_settle_variant());
    v.push_back(gpu::gpu_opt_variant());
    return v;
  }();
  return all;
}

const Variant& find_variant(const std::string& id) {
  return find_by_name(variants(), id, "maxtree variant", [](const Variant& v) { return v.id; });
}

// Each tree variant, then the area attribute and the filter: a GPU variant's on the GPU (its
// make_area), a CPU variant's on the CPU (in parallel after a parallel tree).
const std::vector<AreaVariant>& area_variants() {
  static const std::vector<AreaVariant> all = [] {
    std::vector<AreaVariant> out;
    for (const Variant& v : variants()) {
      if (v.make_area) {
        out.push_back(v.make_area());
        continue;
      }
      const Variant* tree = &v;  // the registry is a function-local static: stable
      out.push_back({v.id, v.gpu, v.step,
                     "the " + v.id + " tree, then the area attribute and the filter" +
                         (v.parallel ? " (OpenMP)" : " (sequential)"),
                     [tree, name = "area-opening/" + v.id](const HostImage& image, const Options& opt) {
                       nvtx::Range range(name.c_str());
                       check_area_input(image, opt);
                       Result r = tree->run(image, opt);
                       const auto t0 = std::chrono::steady_clock::now();
                       nvtx::Range filter("filter");
                       AreaResult a{area_opening(image, r.parent, opt.area, tree->parallel ? opt.threads : 1), r.stats};
                       a.stats.filter_ms =
                           std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
                       return a;
                     },
                     {}});
    }
    return out;
  }();
  return all;
}

const AreaVariant& find_area_variant(const std::string& id) {
  return find_by_name(area_variants(), id, "area-opening variant", [](const AreaVariant& v) { return v.id; });
}

}  // namespace repix::maxtree
