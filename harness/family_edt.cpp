// The edt family's CLI handlers (`repix run edt`, `repix profile edt`) and registry entry; its
// bench cases are in bench_edt.cpp.
#include <algorithm>
#include <cstdio>

#include "core/atomic_file.hpp"
#include "core/gpu.hpp"
#include "core/nvtx.hpp"
#include "datasets/datasets.hpp"
#include "datasets/io.hpp"
#include "harness/family.hpp"
#include "harness/tiled_json.hpp"
#include "edt/edt.hpp"
#include "edt/verify.hpp"

namespace repix::bench {
void add_edt_cases(Context& ctx, std::vector<Case>& cases);
}

namespace repix::family {

namespace {

using cli::Args;
using cli::UsageError;

nlohmann::json stats_json(const edt::Stats& s) {
  nlohmann::json j = {{"initially_queued", s.initially_queued}, {"total_queued", s.total_queued},
                      {"passes", s.passes}, {"overflow_reruns", s.overflow_reruns}, {"fallback_rows", s.fallback_rows}};
  harness::add_tiled(j, s.tiled);
  return j;
}

// --gpus, --cpu-groups, --cpu-group-threads: the multi-device variant's workers.
void worker_options(const Args& a, edt::Options& opt) {
  opt.gpus = a.get_int("gpus", 0);
  opt.cpu_groups = a.get_int("cpu-groups", 0);
  opt.cpu_group_threads = a.get_int("cpu-group-threads", 0);
}

int run(const Args& a) {
  a.only({"variant", "input", "output", "sites", "json", "threads", "tile", "queue-capacity", "gpus", "cpu-groups",
          "cpu-group-threads"});
  if (a.positional.size() != 1) throw UsageError("run takes the family name (e.g. `repix run edt ...`)");
  const std::string input = a.need("input");
  const std::string output = a.get("output"), sites_out = a.get("sites"), json_out = a.get("json");
  if (output.empty() && sites_out.empty() && json_out.empty())
    throw UsageError("run edt needs --output, --sites and/or --json");
  // The default is exact: gpu-opt where a GPU exists, the exact CPU oracle otherwise.
  const edt::Variant& v = edt::find_variant(a.get("variant", gpu_available() ? "gpu-opt" : "seq-exact"));
  edt::Options opt;
  opt.threads = a.get_int("threads", 0);
  opt.tile = a.get_int("tile", 0);
  opt.queue_capacity = a.get_int("queue-capacity", 0);
  worker_options(a, opt);
  const bool need_sites = !sites_out.empty() || (!json_out.empty() && !v.exact);
  opt.want_sites = need_sites;
  const HostImage img = datasets::load(input, v.gpu && gpu_available());
  edt::check_input(img);
  const edt::Result r = v.run(img, opt);
  if (!output.empty()) datasets::write_npy(r.distance, output);
  if (!sites_out.empty()) datasets::write_npy_int64(r.sites.data(), img.shape(), sites_out);
  if (!json_out.empty()) {
    nlohmann::json j = {{"family", "edt"}, {"variant", v.id}, {"input", input}, {"shape", img.shape().str()},
                        {"exact", v.exact}, {"stats", stats_json(r.stats)}};
    // Propagation variants: their error against the exact EDT, and the property checks.
    if (!v.exact) {
      const edt::Result exact = edt::find_variant("seq-exact").run(img, {});
      const edt::Check c = edt::check_propagation(img, exact, r);
      j["errors"] = c.errors();
      j["properties_ok"] = c.ok;
      if (!c.ok) j["first_violation"] = c.first_violation;
    }
    write_file_atomic(json_out, j.dump(1) + "\n");
  }
  return 0;
}

int profile(const Args& a) {
  a.only({"variant", "dataset", "iterations", "tile", "gpus", "cpu-groups", "cpu-group-threads"});
  if (a.positional.size() != 1) throw UsageError("profile takes the family name");
  const edt::Variant& v = edt::find_variant(a.need("variant"));
  const int iterations = std::max(1, a.get_int("iterations", 5));
  const HostImage img = datasets::generate(datasets::Spec::parse(a.need("dataset")), v.gpu);
  edt::Options opt;
  opt.want_sites = false;
  opt.tile = a.get_int("tile", 0);
  worker_options(a, opt);
  {
    nvtx::Range r("warmup");
    v.run(img, opt);
  }
  // Each run is one `edt/<variant>` range with its phases nested inside.
  for (int i = 0; i < iterations; ++i) v.run(img, opt);
  if (v.gpu) REPIX_CUDA(cudaDeviceSynchronize());
  std::fprintf(stderr, "repix profile: %d runs of edt/%s done\n", iterations, v.id.c_str());
  return 0;
}

}  // namespace

Family edt_family() {
  Family f;
  f.name = "edt";
  f.run_usage =
      "run edt --variant V --input MASK --output OUT.npy [--sites SITES.npy] [--json OUT.json]\n"
      "        [--threads N] [--tile N] [--queue-capacity N] [--gpus N] [--cpu-groups N] [--cpu-group-threads N]\n"
      "        float32 distance to the nearest zero pixel; sites: int64 index; multi-device's workers as\n"
      "        in run reconstruct (--gpus 0 = every GPU, --cpu-groups default 0)";
  f.variants = [] {
    std::vector<registry::VariantInfo> out;
    for (const auto& v : edt::variants()) out.push_back({"edt", v.id, v.gpu, v.step, v.description});
    return out;
  };
  f.run = run;
  f.profile = profile;
  f.add_bench_cases = bench::add_edt_cases;
  return f;
}

}  // namespace repix::family
