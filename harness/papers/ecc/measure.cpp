// Measuring the ECC paper's tables: what they share (measure.hpp) and the command, `repix table
// ecc-N` (options, session, then the table's measurement in table1/2/3.cpp).
#include "harness/papers/ecc/measure.hpp"

#include <chrono>
#include <filesystem>

#include "core/error.hpp"
#include "core/gpu.hpp"
#include "datasets/spec.hpp"
#include "harness/json_fields.hpp"

namespace repix::tables::ecc_tables {

using nlohmann::json;

json ecc_paper(int n, const std::string& override_path) {
  return load_paper("ecc-table" + std::to_string(n), override_path, "ecc-" + std::to_string(n));
}

double context_ms() {
  static const double ms = [] {
    if (!gpu_available()) return -1.0;
    const auto t0 = std::chrono::steady_clock::now();
    REPIX_CUDA(cudaFree(nullptr));
    return ms_since(t0);
  }();
  return ms;
}

std::string with_seed(const std::string& spec, int seed) {
  datasets::Spec s = datasets::Spec::parse(spec);
  s.params["seed"] = std::to_string(seed);
  return s.str();
}

std::vector<int> parse_counts(const std::string& s) {
  std::vector<int> v;
  for (const auto& x : cli::split(s, ',')) {
    try {
      const int n = std::stoi(x);
      if (n <= 0) throw std::invalid_argument(x);
      v.push_back(n);
    } catch (const std::exception&) {
      throw cli::UsageError("expected a list of positive integers, got '" + s + "'");
    }
  }
  return v;
}

TempDir::TempDir(const std::string& tag) {
  path = std::filesystem::temp_directory_path() /
         ("repix-" + tag + "-" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
  std::filesystem::create_directories(path);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

}  // namespace repix::tables::ecc_tables

namespace repix::tables {

const char* ecc_table_usage(int n) {
  switch (n) {
    case 1: return "[--quick | --sizes quick|default|paper|big] [--dataset SPEC]... [--samples N] [--cpu-samples N] [--out-dir DIR] [--paper P.json] | --from JOURNAL [--out-dir DIR] (--out: the same as --out-dir)";
    case 2: return "[--quick | --sizes quick|default|paper] [--iterations 1,10,100] [--dataset SPEC] [--out-dir DIR] [--paper P.json] | --from JOURNAL [--out-dir DIR] (--out: the same as --out-dir)";
    default: return "[--quick | --sizes quick|default|paper] [--counts-2d 1,100] [--counts-3d 1,10] [--dataset-2d SPEC] "
                    "[--dataset-3d SPEC] [--batch-path auto|small-kernel|per-image] [--out-dir DIR] [--paper P.json] | --from JOURNAL [--out-dir DIR] (--out: the same as --out-dir)";
  }
}

int run_ecc_table(int n, const cli::Args& given) {
  using namespace ecc_tables;
  const std::string id = "ecc-" + std::to_string(n);
  Session session(id, given);
  const cli::Args& a = session.args();
  a.only({"sizes", "quick", "dataset", "samples", "cpu-samples", "iterations", "counts-2d", "counts-3d", "dataset-2d",
          "dataset-3d", "batch-path", "out-dir", "out", "paper"});
  if (a.has("out") && a.has("out-dir")) throw cli::UsageError("give --out or --out-dir, not both");
  ecc_paper(n, a.get("paper"));  // a bad --paper is refused before anything is measured
  // Before anything else creates the CUDA context (the environment capture queries the GPU), so
  // the one-time cost the tables report apart is measured rather than already paid.
  if (!session.replaying()) context_ms();
  const std::string sizes = a.has("quick") ? "quick" : a.get("sizes", "default");
  if (a.has("quick") && a.has("sizes") && a.get("sizes") != "quick") throw cli::UsageError("--quick and --sizes disagree");
  if (n != 1 && (a.has("samples") || a.has("cpu-samples"))) throw cli::UsageError("--samples belongs to ecc-1");
  if (n != 2 && a.has("iterations")) throw cli::UsageError("--iterations belongs to ecc-2");
  if (n != 3 && (a.has("counts-2d") || a.has("counts-3d") || a.has("dataset-2d") || a.has("dataset-3d") ||
                 a.has("batch-path")))
    throw cli::UsageError("--counts-2d/3d, --dataset-2d/3d and --batch-path belong to ecc-3");
  Meta meta = session.meta("repix table " + id, sizes);
  const std::string out_dir = a.get("out", a.get("out-dir", session.default_out_dir()));
  session.start(out_dir, n == 1 ? table1_name(sizes) : "ecc-table" + std::to_string(n), meta);
  const int code = n == 1 ? table1(a, meta, out_dir, session)
                   : n == 2 ? table2(a, meta, out_dir, session)
                            : table3(a, meta, out_dir, session);
  session.done();  // the table is written (whatever the verdict): its journal has served
  return code;
}

}  // namespace repix::tables
