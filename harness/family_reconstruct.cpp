// The reconstruct family's CLI handlers (`repix run reconstruct`, `repix profile reconstruct`) and
// registry entry; its bench cases are in bench_reconstruct.cpp.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "core/atomic_file.hpp"
#include "core/gpu.hpp"
#include "core/nvtx.hpp"
#include "datasets/datasets.hpp"
#include "datasets/io.hpp"
#include "harness/family.hpp"
#include "harness/iwpp_verify.hpp"
#include "reconstruct/reconstruct.hpp"

namespace repix::bench {
void add_reconstruct_cases(Context& ctx, std::vector<Case>& cases);
}

namespace repix::family {

namespace {

using cli::Args;
using cli::UsageError;

// The options every reconstruct command shares.
reconstruct::Options options_from(const Args& a) {
  reconstruct::Options opt;
  opt.connectivity = a.get_int("connectivity", 8);
  if (opt.connectivity != 4 && opt.connectivity != 8)
    throw UsageError("--connectivity must be 4 or 8, got " + a.get("connectivity"));
  const std::string clip = a.get("clip", "0");
  if (clip != "0" && clip != "1" && clip != "true" && clip != "false")
    throw UsageError("--clip is a flag (or --clip=1/0), got '" + clip + "'");
  opt.clip = clip == "1" || clip == "true";
  opt.threads = a.get_int("threads", 0);
  opt.tile = a.get_int("tile", 0);
  opt.raster_scans = std::max(1, a.get_int("raster-scans", 1));
  opt.queue_capacity = a.get_int("queue-capacity", 0);
  opt.queue_blocks_per_sm = a.get_int("queue-blocks-per-sm", 0);  // get_int refuses negatives
  opt.gpus = a.get_int("gpus", 0);
  opt.cpu_groups = a.get_int("cpu-groups", 0);
  opt.cpu_group_threads = a.get_int("cpu-group-threads", 0);
  return opt;
}

const char* default_variant() { return gpu_available() ? "gpu-opt" : "omp-tiled"; }

int run(const Args& a) {
  a.only({"variant", "marker", "mask", "connectivity", "clip", "threads", "tile", "raster-scans",
          "queue-capacity", "queue-blocks-per-sm", "gpus", "cpu-groups", "cpu-group-threads", "output", "json"});
  if (a.positional.size() != 1) throw UsageError("run takes the family name (e.g. `repix run reconstruct ...`)");
  const reconstruct::Options opt = options_from(a);
  std::string id = a.get("variant");
  if (id.empty()) {
    id = default_variant();
    bool known = false;
    for (const auto& v : reconstruct::variants()) known = known || v.id == id;
    if (!known) id = "omp-tiled";
  }
  const reconstruct::Variant& v = reconstruct::find_variant(id);
  const std::string marker_in = a.need("marker"), mask_in = a.need("mask");
  const std::string output = a.get("output"), json_out = a.get("json");
  if (output.empty() && json_out.empty()) throw UsageError("run needs --output and/or --json");
  // Files or dataset specs (`--marker noise-mask:512x512:marker=opening`); pinned for GPU uploads.
  const bool pinned = v.gpu && gpu_available();
  const HostImage marker = datasets::load(marker_in, pinned);
  const HostImage mask = datasets::load(mask_in, pinned);
  const auto t0 = std::chrono::steady_clock::now();
  const reconstruct::Result r = v.run(marker, mask, opt);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!output.empty()) datasets::save(r.image, output);
  if (!json_out.empty()) {
    nlohmann::json j = {{"family", "reconstruct"},
                              {"variant", v.id},
                              {"marker", marker_in},
                              {"mask", mask_in},
                              {"shape", mask.shape().str()},
                              {"dtype", dtype_name(mask.dtype())},
                              {"connectivity", opt.connectivity},
                              {"clip", opt.clip},
                              {"ms", ms},
                              {"stats", bench::reconstruct_stats_json(r.stats)}};
    write_file_atomic(json_out, j.dump(1) + "\n");
  }
  return 0;
}

// `--dataset` is a marker spec (noise-mask/tissue with marker=); the mask is the same spec
// without the marker keys.
int profile(const Args& a) {
  a.only({"variant", "dataset", "iterations", "connectivity", "threads", "tile", "raster-scans", "queue-capacity",
          "queue-blocks-per-sm", "gpus", "cpu-groups", "cpu-group-threads"});
  if (a.positional.size() != 1) throw UsageError("profile takes the family name");
  const reconstruct::Variant& v = reconstruct::find_variant(a.need("variant"));
  const reconstruct::Options opt = options_from(a);
  const int iterations = std::max(1, a.get_int("iterations", 5));
  const datasets::Spec spec = datasets::Spec::parse(a.need("dataset"));
  if (!datasets::is_marker_spec(spec))
    throw UsageError("--dataset must be a marker spec, e.g. noise-mask:4096x4096:marker=opening");
  const bool pinned = v.gpu && gpu_available();
  HostImage marker, mask;
  {
    nvtx::Range r("dataset");
    marker = datasets::generate(spec, pinned);
    mask = datasets::generate(datasets::mask_spec(spec), pinned);
  }
  {
    nvtx::Range r("warmup");
    v.run(marker, mask, opt);
  }
  // Each run is one `reconstruct/<variant>` range (the variant opens it) with its phases inside.
  for (int i = 0; i < iterations; ++i) v.run(marker, mask, opt);
  if (v.gpu) REPIX_CUDA(cudaDeviceSynchronize());
  std::fprintf(stderr, "repix profile: %d runs of reconstruct/%s done\n", iterations, v.id.c_str());
  return 0;
}

}  // namespace

Family reconstruct_family() {
  Family f;
  f.name = "reconstruct";
  f.run_usage =
      "run reconstruct --variant V --marker M.npy --mask K.npy [--connectivity 4|8] [--clip]\n"
      "        --output OUT.npy [--json STATS.json] [--threads N] [--tile N] [--raster-scans N]\n"
      "        [--queue-capacity N] [--queue-blocks-per-sm N] [--gpus N] [--cpu-groups N]\n"
      "        [--cpu-group-threads N]\n"
      "        grayscale reconstruction by dilation (marker/mask: files or specs); queue variants:\n"
      "        --queue-blocks-per-sm (persistent blocks per SM, 0 = as many as fit); multi-device:\n"
      "        --gpus (0 = every GPU), --cpu-groups (CPU workers, default 0), --cpu-group-threads\n"
      "        (OpenMP threads each, 0 = share the cores out), --tile (tile edge, 0 = automatic)";
  f.variants = [] {
    std::vector<registry::VariantInfo> out;
    for (const auto& v : reconstruct::variants())
      out.push_back({"reconstruct", v.id, v.gpu, v.step, v.description});
    return out;
  };
  f.run = run;
  f.profile = profile;
  f.add_bench_cases = bench::add_reconstruct_cases;
  return f;
}

}  // namespace repix::family
