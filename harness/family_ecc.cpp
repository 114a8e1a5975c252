// The ECC family's CLI handlers (`repix run ecc`, `repix profile ecc`) and registry entry; its
// bench cases are in bench_ecc.cpp.
#include <algorithm>
#include <cstdio>

#include "core/atomic_file.hpp"
#include "core/gpu.hpp"
#include "core/nvtx.hpp"
#include "datasets/datasets.hpp"
#include "datasets/io.hpp"
#include "ecc/ecc.hpp"
#include "harness/family.hpp"

namespace repix::bench {
void add_ecc_cases(Context& ctx, std::vector<Case>& cases);
}

namespace repix::family {

namespace {

using cli::Args;
using cli::UsageError;

// True when an in-core GPU variant can hold the input plus its workspace (budgeted at 1.5x the
// input: the float paths keep a key or rank image beside it) in the GPU's free memory.
bool fits_on_gpu(DType dtype, const Shape& shape) {
  if (!gpu_available()) return true;  // the variant itself reports the missing GPU
  std::size_t free_b = 0, total_b = 0;
  REPIX_CUDA(cudaMemGetInfo(&free_b, &total_b));
  const double need = 2.5 * static_cast<double>(shape.size()) * dtype_size(dtype) + (64 << 20);
  return need < static_cast<double>(free_b);
}

void write_curve_json(const ecc::Curve& c, const std::string& path, const nlohmann::json& meta) {
  nlohmann::json j = meta;
  j["values"] = c.values;
  j["ecc"] = c.ecc;
  write_file_atomic(path, j.dump(1) + "\n");
}

int run(const Args& a) {
  a.only({"variant", "input", "output", "json", "threads", "chunk-mib", "streams"});
  if (a.positional.size() != 1) throw UsageError("run takes the family name (e.g. `repix run ecc ...`)");
  std::string variant_id = a.get("variant", gpu_available() ? "gpu-opt" : "omp");
  const std::string input = a.need("input");
  const std::string output = a.get("output");
  const std::string json_out = a.get("json");
  if (output.empty() && json_out.empty()) throw UsageError("run needs --output and/or --json");
  ecc::Options opt;
  opt.threads = a.get_int("threads", 0);
  opt.chunk_bytes = static_cast<std::size_t>(a.get_int("chunk-mib", 0)) << 20;
  opt.streams = std::max(1, a.get_int("streams", 3));

  const ecc::Variant* v = &ecc::find_variant(variant_id);
  ecc::Curve curve;
  // Streaming variants read the input as they go (never whole); the others load it. An
  // in-core GPU variant asked to process an input larger than the GPU's free memory hands over
  // to the streaming variant automatically.
  auto source = datasets::open_file_source(
      datasets::Spec::parse(input.rfind("file:", 0) == 0 ? input : "file:" + input));
  if (v->gpu && !v->run_source && !fits_on_gpu(source->dtype(), source->shape())) {
    std::fprintf(stderr, "repix run: input does not fit in GPU memory; using gpu-stream\n");
    v = &ecc::find_variant("gpu-stream");
  }
  if (v->run_source) {
    curve = v->run_source(*source, opt);
  } else {
    source.reset();
    const HostImage img = datasets::load(input, v->gpu && gpu_available());
    curve = v->run(img, opt);
  }
  if (!output.empty()) ecc::write_csv(curve, output);
  if (!json_out.empty())
    write_curve_json(curve, json_out, {{"family", "ecc"}, {"variant", v->id}, {"input", input}});
  return 0;
}

int profile(const Args& a) {
  a.only({"variant", "dataset", "iterations"});
  if (a.positional.size() != 1) throw UsageError("profile takes the family name");
  const ecc::Variant& v = ecc::find_variant(a.need("variant"));
  const int iterations = std::max(1, a.get_int("iterations", 5));
  const HostImage img = datasets::generate(datasets::Spec::parse(a.need("dataset")), v.gpu);
  {
    nvtx::Range r("warmup");
    v.run(img, {});
  }
  // Each run is one `ecc/<variant>` range with the phases nested inside it, so Nsight Systems
  // timelines and `ncu --nvtx-include` filters line up run by run.
  for (int i = 0; i < iterations; ++i) v.run(img, {});
  if (v.gpu) REPIX_CUDA(cudaDeviceSynchronize());
  std::fprintf(stderr, "repix profile: %d runs of ecc/%s done\n", iterations, v.id.c_str());
  return 0;
}

}  // namespace

Family ecc_family() {
  Family f;
  f.name = "ecc";
  f.run_usage =
      "run ecc --variant V --input F --output OUT.csv [--json OUT.json] [--threads N]\n"
      "        [--chunk-mib N] [--streams N]     Euler characteristic curve as value,ecc CSV";
  f.variants = [] {
    std::vector<registry::VariantInfo> out;
    for (const auto& v : ecc::variants()) out.push_back({"ecc", v.id, v.gpu, v.step, v.description});
    return out;
  };
  f.run = run;
  f.profile = profile;
  f.add_bench_cases = bench::add_ecc_cases;
  return f;
}

}  // namespace repix::family
