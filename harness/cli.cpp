// The `repix` command line. Every failure is one line on stderr and a non-zero exit:
// 1 for a failed run or bad input (repix::Error), 2 for a usage error, 3 for an internal error.
#include "harness/cli.hpp"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/gpu.hpp"
#include "core/nvtx.hpp"
#include "datasets/datasets.hpp"
#include "datasets/io.hpp"
#include "ecc/ecc.hpp"
#include "harness/bench.hpp"
#include "harness/env.hpp"
#include "harness/registry.hpp"
#include "harness/report.hpp"
#include "harness/suites.hpp"
#include "harness/tables.hpp"

namespace repix::cli {

namespace {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const char* kUsage = R"(usage: repix <command> [options]

commands:
  list [families|variants|datasets]      what can be run
  gen SPEC -o FILE                       write a generated dataset (.npy or .raw)
  run FAMILY --variant V --input F --output OUT [--json OUT.json] [--threads N]
                                         one variant on one input (ECC: OUT is value,ecc CSV)
  bench [--family F] [--variants a,b] [--exclude a,b] [--dataset SPEC]... [--suite NAME]
        [--scopes kernel,end-to-end] [--samples N] [--cpu-samples N] [--warmup N]
        [--out PATH|auto] [--benchmark_filter=REGEX ...]
                                         verify and time variants, write a JSON report
  table ecc-ablation --report R.json [--out-dir DIR]
                                         regenerate a table from measurements (see `repix list tables`)
  compare A.json B.json                  two reports side by side with ratios
  profile FAMILY --variant V --dataset SPEC [--iterations N]
                                         a fixed number of NVTX-ranged runs for Nsight
  help                                   this text

Dataset specs: uniform:8192x8192:levels=256:dtype=float32:seed=1, grf:512x512x512:alpha=3:seed=4,
const:64x64:value=3, checker:64x64x64:period=2, file:img.npy, file:img.raw:shape=128x128:dtype=float32
(see `repix list datasets`). Suites: )";

// Minimal option parsing: positionals, `--key value`, `--key=value`, and flags.
struct Args {
  std::vector<std::string> positional;
  std::multimap<std::string, std::string> options;
  std::vector<std::string> passthrough;  // --benchmark_* for Google Benchmark

  static Args parse(int argc, char** argv, int first, const std::vector<std::string>& flags) {
    Args a;
    for (int i = first; i < argc; ++i) {
      std::string s = argv[i];
      if (s.rfind("--benchmark_", 0) == 0) {
        a.passthrough.push_back(s);
        continue;
      }
      if (s.size() > 2 && s.rfind("--", 0) == 0) {
        const auto eq = s.find('=');
        std::string key = s.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
        if (eq != std::string::npos) {
          a.options.emplace(key, s.substr(eq + 1));
        } else if (std::find(flags.begin(), flags.end(), key) != flags.end()) {
          a.options.emplace(key, "1");
        } else {
          if (i + 1 >= argc) throw UsageError("option --" + key + " needs a value");
          a.options.emplace(key, argv[++i]);
        }
      } else if (s == "-o") {
        if (i + 1 >= argc) throw UsageError("-o needs a file name");
        a.options.emplace("output", argv[++i]);
      } else {
        a.positional.push_back(s);
      }
    }
    return a;
  }
  std::string get(const std::string& k, const std::string& def = "") const {
    auto it = options.find(k);
    return it == options.end() ? def : it->second;
  }
  std::string need(const std::string& k) const {
    auto it = options.find(k);
    if (it == options.end()) throw UsageError("missing --" + k);
    return it->second;
  }
  std::vector<std::string> all(const std::string& k) const {
    std::vector<std::string> v;
    for (auto [it, end] = options.equal_range(k); it != end; ++it) v.push_back(it->second);
    return v;
  }
  int get_int(const std::string& k, int def) const {
    const std::string s = get(k);
    if (s.empty()) return def;
    try {
      std::size_t used = 0;
      const int v = std::stoi(s, &used);
      if (used != s.size() || v < 0) throw std::invalid_argument(s);
      return v;
    } catch (const std::exception&) {
      throw UsageError("--" + k + " expects a non-negative integer, got '" + s + "'");
    }
  }
  void only(const std::vector<std::string>& known) const {
    for (const auto& [k, v] : options)
      if (std::find(known.begin(), known.end(), k) == known.end())
        throw UsageError("unknown option --" + k);
  }
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep))
    if (!item.empty()) out.push_back(item);
  return out;
}

std::string command_line(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) s += (i ? " " : "") + std::string(argv[i]);
  return s;
}

int cmd_list(const Args& a) {
  const std::string what = a.positional.empty() ? "all" : a.positional[0];
  if (what == "all" || what == "families") {
    std::cout << "families:\n";
    for (const auto& f : registry::families()) std::cout << "  " << f << "\n";
  }
  if (what == "all" || what == "variants") {
    std::cout << "variants (family  id  device  ablation step  description):\n";
    for (const auto& v : registry::variants())
      std::printf("  %-6s %-18s %-4s %-22s %s\n", v.family.c_str(), v.id.c_str(), v.gpu ? "gpu" : "cpu",
                  v.step.c_str(), v.description.c_str());
  }
  if (what == "all" || what == "datasets") {
    std::cout << "dataset kinds:\n";
    for (const auto& [k, d] : datasets::kinds()) std::printf("  %-10s %s\n", k.c_str(), d.c_str());
    std::cout << "suites (repix bench --suite NAME):\n";
    for (const auto& s : suites::all()) std::printf("  %-10s %s\n", s.name.c_str(), s.description.c_str());
  }
  if (what == "all" || what == "tables") {
    std::cout << "tables (repix table ID):\n";
    for (const auto& t : tables::all()) std::printf("  %-14s %s\n", t.id.c_str(), t.description.c_str());
  }
  if (what != "all" && what != "families" && what != "variants" && what != "datasets" && what != "tables")
    throw UsageError("list what? (families, variants, datasets or tables)");
  return 0;
}

int cmd_gen(const Args& a) {
  a.only({"output"});
  if (a.positional.size() != 1) throw UsageError("gen takes one dataset spec");
  const std::string out = a.need("output");
  const datasets::Spec spec = datasets::Spec::parse(a.positional[0]);
  const HostImage img = datasets::generate(spec);
  datasets::save(img, out);
  std::fprintf(stderr, "repix gen: %s -> %s (%s %s)\n", spec.str().c_str(), out.c_str(),
               img.shape().str().c_str(), dtype_name(img.dtype()).c_str());
  return 0;
}

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

int cmd_run(const Args& a) {
  a.only({"variant", "input", "output", "json", "threads", "chunk-mib", "streams"});
  if (a.positional.size() != 1) throw UsageError("run takes the family name (e.g. `repix run ecc ...`)");
  const std::string family = a.positional[0];
  registry::check_family(family);
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
    write_curve_json(curve, json_out, {{"family", family}, {"variant", v->id}, {"input", input}});
  return 0;
}

std::string machine_slug() {
  std::string name = "cpu-only";
  if (gpu_available()) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, 0) == cudaSuccess) name = p.name;
  }
  std::string slug;
  for (char ch : name) {
    if (std::isalnum(static_cast<unsigned char>(ch))) slug += static_cast<char>(std::tolower(ch));
    else if (!slug.empty() && slug.back() != '-') slug += '-';
  }
  while (!slug.empty() && slug.back() == '-') slug.pop_back();
  return slug;
}

int cmd_bench(int argc, char** argv, const Args& a) {
  a.only({"family", "variants", "variant", "exclude", "dataset", "datasets", "suite", "scopes",
          "samples", "cpu-samples", "warmup", "out"});
  bench::Request req;
  req.family = a.get("family", "ecc");
  for (const auto& s : a.all("variants"))
    for (const auto& v : split(s, ',')) req.variants.push_back(v);
  for (const auto& v : a.all("variant")) req.variants.push_back(v);
  for (const auto& s : a.all("exclude"))
    for (const auto& v : split(s, ',')) req.exclude.push_back(v);
  for (const auto& d : a.all("dataset")) req.datasets.push_back(d);
  for (const auto& s : a.all("datasets"))
    for (const auto& d : split(s, ',')) req.datasets.push_back(d);
  std::string suite_name = a.get("suite");
  if (req.datasets.empty() && suite_name.empty()) suite_name = "default";
  if (!suite_name.empty()) {
    const suites::Suite& s = suites::find(suite_name);
    for (const auto& d : s.datasets) req.datasets.push_back(d);
  }
  const std::string scopes = a.get("scopes");
  if (!scopes.empty()) req.scopes = split(scopes, ',');
  for (const auto& s : req.scopes)
    if (s != "kernel" && s != "end-to-end") throw UsageError("unknown scope '" + s + "' (kernel, end-to-end)");
  req.gpu_samples = std::max(1, a.get_int("samples", req.gpu_samples));
  req.cpu_samples = std::max(1, a.get_int("cpu-samples", req.cpu_samples));
  req.warmup = a.get_int("warmup", req.warmup);
  req.out_path = a.get("out");
  if (req.out_path == "auto")
    req.out_path = std::string("results/") + machine_slug() + "/bench-" +
                   (suite_name.empty() ? std::string("custom") : suite_name) + ".json";
  req.gbench_args = a.passthrough;
  req.command = command_line(argc, argv);
  return bench::run(req);
}

int cmd_compare(const Args& a) {
  a.only({});
  if (a.positional.size() != 2) throw UsageError("compare takes two report files");
  const report::Report ra = report::read_report(a.positional[0]);
  const report::Report rb = report::read_report(a.positional[1]);
  std::cout << "A: " << a.positional[0] << "\nB: " << a.positional[1] << "\n"
            << report::compare_table(ra, rb);
  return 0;
}

int cmd_table(const Args& a) {
  a.only({"report", "out-dir"});
  if (a.positional.size() != 1) throw UsageError("table takes one table id (see `repix list tables`)");
  const std::string id = a.positional[0];
  if (id == "ecc-ablation") {
    const report::Report r = report::read_report(a.need("report"));
    std::cout << tables::ecc_ablation(r, a.get("out-dir"));
    return 0;
  }
  std::string known;
  for (const auto& t : tables::all()) known += (known.empty() ? "" : ", ") + t.id;
  throw Error("unknown table '" + id + "' (known: " + known + ")");
}

int cmd_profile(const Args& a) {
  a.only({"variant", "dataset", "iterations"});
  if (a.positional.size() != 1) throw UsageError("profile takes the family name");
  registry::check_family(a.positional[0]);
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

int main(int argc, char** argv) {
  try {
    if (argc < 2) throw UsageError("no command given");
    const std::string cmd = argv[1];
    if (cmd == "help" || cmd == "--help" || cmd == "-h") {
      std::cout << kUsage;
      for (const auto& s : suites::all()) std::cout << s.name << " ";
      std::cout << "\n";
      return 0;
    }
    if (cmd == "bench") return cmd_bench(argc, argv, Args::parse(argc, argv, 2, {}));
    const Args a = Args::parse(argc, argv, 2, {});
    if (!a.passthrough.empty()) throw UsageError("--benchmark_* options belong to `repix bench`");
    if (cmd == "list") return cmd_list(a);
    if (cmd == "gen") return cmd_gen(a);
    if (cmd == "run") return cmd_run(a);
    if (cmd == "compare") return cmd_compare(a);
    if (cmd == "table") return cmd_table(a);
    if (cmd == "profile") return cmd_profile(a);
    throw UsageError("unknown command '" + cmd + "'");
  } catch (const UsageError& e) {
    std::fprintf(stderr, "repix: usage error: %s (see `repix help`)\n", e.what());
    return 2;
  } catch (const Error& e) {
    std::fprintf(stderr, "repix: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "repix: internal error: %s\n", e.what());
    return 3;
  }
}

}  // namespace repix::cli
