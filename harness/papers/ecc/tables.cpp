// The ECC paper's Tables 1-3 (see tables.hpp). Every GPU output is verified against seq:
// per dataset in Table 1 (through `repix bench`), the last pipeline iteration's curve against
// seq on the smoothed image copied back in Table 2, every image of every batch in Table 3.
#include "harness/papers/ecc/tables.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <cmath>
#include <map>
#include <optional>
#include <sstream>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/gpu.hpp"
#include "core/nvtx.hpp"
#include "datasets/datasets.hpp"
#include "datasets/io.hpp"
#include "ecc/batch.hpp"
#include "ecc/ecc.hpp"
#include "ecc/gpu_opt.cuh"
#include "ecc/smooth.hpp"
#include "harness/bench.hpp"
#include "harness/env.hpp"
#include "harness/json_fields.hpp"
#include "harness/tables.hpp"
#include "harness/tables_common.hpp"

namespace repix::tables {

using json_fields::field_or;

using nlohmann::json;

namespace {

// The paper's rows that cannot be reproduced, with the reason.
std::string not_reproducible(const json& paper, json& out) {
  std::ostringstream md;
  for (const auto& row : field_or(paper, "rows", json::array()))
    if (!field_or(row, "reproducible", true)) {
      if (out.empty()) md << "\nNot reproducible (listed with the paper's values):\n\n";
      md << "- " << field_or(row, "input", "") << " " << field_or(row, "shape", "") << ": "
         << field_or(row, "reason", "") << "\n";
      out.push_back({{"input", field_or(row, "input", "")}, {"shape", field_or(row, "shape", "")},
                     {"reason", field_or(row, "reason", "")}, {"paper", row}});
    }
  return md.str();
}

}  // namespace

// ---- Table 1 ---------------------------------------------------------------------------------

std::string ecc_table1(const json& paper, const report::Report& r, const Meta& meta, const std::string& out_dir,
                       const std::string& name) {
  // (dataset, variant, scope) -> result; dataset order as in the report.
  std::vector<std::string> order;
  std::map<std::string, const report::Result*> res;
  for (const auto& x : r.results) {
    if (x.family != "ecc") continue;
    if (std::find(order.begin(), order.end(), x.dataset) == order.end()) order.push_back(x.dataset);
    res[x.dataset + "|" + x.variant + "|" + x.scope] = &x;
  }
  auto get = [&](const std::string& ds, const std::string& v, const std::string& scope) -> const report::Result* {
    auto it = res.find(ds + "|" + v + "|" + scope);
    return it == res.end() ? nullptr : it->second;
  };
  auto secs = [](const report::Result* x) { return x ? json(x->median_ms / 1e3) : json(); };

  std::ostringstream md;
  md << header("ECC paper Table 1: CPU vs GPU, overall and kernel", paper, meta)
     << "Overall = `with-io` scope (the .npy file read inside each sample; the OS page cache is not "
        "dropped, so this is not the paper's cold NVMe read); end-to-end = host memory in, curve out; "
        "kernel = data already in GPU memory (CUDA events, L2 flushed). CPU is our `omp` (the paper's "
        "is CHUNKYEuler on 8 cores). Speedup = CPU / GPU. Medians of the raw samples in the JSON.\n\n"
     << "| input | shape | CPU overall s (paper / ours) | GPU overall s (paper / ours) | speedup (paper / ours) "
        "| ours e2e CPU s / GPU s | kernel ms (paper / ours) | kernel GVox/s (paper / ours) | ours/paper GVox/s "
        "| ours % of read bound | GPU read s (paper / ours) | verified |\n"
     << "| --- | --- | --- | --- | --- | --- | --- | --- | ---: | ---: | --- | --- |\n";
  json rows = json::array();
  const bool no_gpu_machine = no_gpu(meta);
  const std::string no_gpu = no_gpu_machine ? "no GPU" : "-";
  std::string row_notes;
  for (const auto& ds : order) {
    datasets::Spec spec = datasets::Spec::parse(ds);
    const std::string shape = spec.shape.str();
    const json* p = paper_row(paper, [&](const json& row) {
      return field_or(row, "input", "") == spec.kind && field_or(row, "shape", "") == shape;
    });
    const report::Result* cpu_io = get(ds, "omp", "with-io");
    const report::Result* cpu_e2e = get(ds, "omp", "end-to-end");
    const report::Result* gpu_io = get(ds, "gpu-opt", "with-io");
    const report::Result* gpu_e2e = get(ds, "gpu-opt", "end-to-end");
    const report::Result* kern = get(ds, "gpu-opt", "kernel");
    const report::Result* stream = get(ds, "gpu-stream", "end-to-end");  // out-of-core rows
    const json pc = p ? p->value("cpu_overall_s", json()) : json();
    const json pg = p ? p->value("gpu_overall_s", json()) : json();
    const json pk = p ? p->value("gpu_kernel_s", json()) : json();
    const json pt = p ? p->value("gpu_kernel_gvox_s", json()) : json();
    const json oc = secs(cpu_io), og = secs(gpu_io);
    const json oce = secs(cpu_e2e), oge = stream ? secs(stream) : secs(gpu_e2e);
    const json ok = kern ? json(kern->median_ms) : json();
    const json ot = kern ? json(kern->throughput) : json();
    const json speed_paper = ratio(pc, pg), speed_ours = ratio(oc, og), speed_e2e = ratio(oce, oge);
    // Our file-read cost on the GPU path: with-io minus end-to-end of the same variant.
    const json pr = p ? p->value("gpu_disk_read_s", json()) : json();
    const json orr = gpu_io && gpu_e2e ? json(gpu_io->median_ms / 1e3 - gpu_e2e->median_ms / 1e3) : json();
    bool verified = true;
    std::vector<std::string> notes;
    for (const report::Result* x : {cpu_io, cpu_e2e, gpu_io, gpu_e2e, kern, stream})
      if (x && !x->verified) verified = false;
    if (kern && field_or(kern->extra, "used_fallback", false))
      notes.push_back("gpu-opt took its exact sort-based fallback (more distinct values than its 2^21-slot "
                      "global hash table holds): kernel times are the fallback's");
    if (stream)
      notes.push_back("GPU e2e: gpu-stream on " + ds + ", " + field_or(stream->extra, "source", std::string("streamed")) +
                      "; " + stream->verification);
    // Levels matter to the timings (distinct values drive the binning): say them.
    const std::string input = spec.kind + (spec.params.count("levels") ? ", " + spec.params.at("levels") + " levels" : "");
    md << "| " << input << " | " << shape << " | " << cell("%.3g", pc) << " / " << cell("%.3g", oc) << " | "
       << cell("%.3g", pg) << " / " << (og.is_null() ? no_gpu : cell("%.3g", og)) << " | "
       << cell("%.2fx", speed_paper) << " / " << (speed_ours.is_null() ? no_gpu : cell("%.2fx", speed_ours)) << " | "
       << cell("%.3g", oce) << " / " << (oge.is_null() ? no_gpu : cell("%.3g", oge)) << (stream ? " (stream)" : "")
       << " | " << cell("%.3g", p && pk.is_number() ? json(pk.get<double>() * 1e3) : json()) << " / "
       << (ok.is_null() ? no_gpu : cell("%.3g", ok)) << " | " << cell("%.2f", pt) << " / "
       << (ot.is_null() ? no_gpu : cell("%.2f", ot)) << " | " << cell("%.1fx", ratio(ot, pt)) << " | "
       << (kern && kern->pct_of_bound ? fmt("%.1f %%", *kern->pct_of_bound) : "-") << " | "
       << cell("%.3g", pr) << " / " << (orr.is_null() ? no_gpu : cell("%.3g", orr)) << " | "
       << (verified ? "yes" : "NO") << " |\n";
    json row = {{"dataset", ds}, {"input", spec.kind}, {"shape", shape},
                {"paper", p ? *p : json()},
                {"ours", {{"cpu_overall_s", oc}, {"gpu_overall_s", og}, {"cpu_end_to_end_s", oce},
                          {"gpu_end_to_end_s", oge}, {"gpu_read_s", orr}, {"gpu_kernel_ms", ok}, {"gpu_kernel_gvox_s", ot},
                          {"pct_of_read_bound", kern && kern->pct_of_bound ? json(*kern->pct_of_bound) : json()}}},
                {"ratios", {{"paper_speedup", speed_paper}, {"ours_speedup_overall", speed_ours},
                            {"ours_speedup_end_to_end", speed_e2e}, {"kernel_gvox_ours_over_paper", ratio(ot, pt)},
                            {"gpu_read_share_paper", ratio(pr, pg)}, {"gpu_read_share_ours", ratio(orr, og)}}},
                {"verified", verified}, {"notes", notes}};
    rows.push_back(row);
    for (const auto& n : notes) row_notes += "- " + spec.kind + " " + shape + ": " + n + "\n";
  }
  if (!row_notes.empty()) md << "\n" << row_notes;
  std::string missing;
  for (const auto& row : field_or(paper, "rows", json::array())) {
    if (!field_or(row, "reproducible", true)) continue;
    const bool ran = std::any_of(order.begin(), order.end(), [&](const std::string& ds) {
      const datasets::Spec s = datasets::Spec::parse(ds);
      return field_or(row, "input", "") == s.kind && field_or(row, "shape", "") == s.shape.str();
    });
    if (!ran) missing += (missing.empty() ? "" : ", ") + field_or(row, "input", std::string()) + " " + field_or(row, "shape", std::string());
  }
  if (!missing.empty())
    md << "\nPaper rows not run at these sizes: " << missing
       << " (`--sizes paper` adds uniform 1024^3 in core; `--sizes big` streams 2048^3 and 4096^3 from the generator).\n";
  json nr = json::array();
  md << not_reproducible(paper, nr);
  if (no_gpu_machine) md << "\nNo GPU on this machine: GPU columns say \"no GPU\".\n";
  json j = meta_json("ecc-1", paper, meta);
  j["rows"] = rows;
  j["not_reproducible"] = nr;
  j["report"] = report::to_json(r);  // every raw sample, the bounds and the environment
  write_outputs(out_dir, name, md.str(), j);
  return md.str();
}

// ---- Table 2 ---------------------------------------------------------------------------------

std::string ecc_table2(const json& paper, const std::vector<PipelineRun>& runs, const PipelineInfo& info,
                       const Meta& meta, const std::string& out_dir) {
  std::ostringstream md;
  md << header("ECC paper Table 2: GPU-only pipeline (smoothing + ECC) iterated N times", paper, meta)
     << "Input " << info.dataset << ", resident in GPU memory. Each iteration: " << info.smoothing
     << ", then gpu-opt's ECC of the smoothed image (ECC exec: CUDA events around the kernels, including "
        "the float path's 8-byte overflow read-back) and the curve copied to the host and post-processed "
        "(ECC mem: host clock); the paper lists ECC before smoothing, the per-iteration work is the same. "
        "Overall = setup (buffers, plan, one upload; host clock) + the loop (host "
        "clock); it excludes the one-time CUDA context creation ("
     << (info.context_ms >= 0 ? fmt("%.1f ms", info.context_ms) : std::string("not measured"))
     << ") and the file read (disk read column, page cache not dropped). A warm-up pipeline runs first. "
        "Averages are means over the iterations of all repetitions.\n\n"
     << "| N | overall ms (paper / ours) | overall avg ms (paper / ours) | ECC mem avg ms (paper / ours) "
        "| ECC exec avg ms (paper / ours) | smoothing avg ms (paper / ours) | disk read ms (paper / ours) "
        "| smoothing/ECC exec (paper / ours) | overall avg / (exec sum) (paper / ours) | verified |\n"
     << "| ---: | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  json rows = json::array();
  for (const auto& run : runs) {
    const json* p = paper_row(paper, [&](const json& row) { return field_or(row, "iterations", 0) == run.iterations; });
    auto pv = [&](const char* k) { return p ? p->value(k, json()) : json(); };
    const bool g = run.gpu && run.iterations > 0;
    const json overall = num_or_null(run.setup_ms + run.loop_ms, g);
    const json overall_avg = num_or_null((run.setup_ms + run.loop_ms) / std::max(1, run.iterations), g);
    const json mem = num_or_null(mean_of(run.ecc_mem_ms), g), exec = num_or_null(mean_of(run.ecc_exec_ms), g);
    const json sm = num_or_null(mean_of(run.smooth_ms), g);
    const json disk = json(info.disk_read_ms);  // measured with or without a GPU
    const json p_sum = pv("ecc_exec_avg_ms").is_number() && pv("gaussian_exec_avg_ms").is_number()
                           ? json(pv("ecc_exec_avg_ms").get<double>() + pv("gaussian_exec_avg_ms").get<double>())
                           : json();
    const json o_sum = g ? json(mean_of(run.ecc_exec_ms) + mean_of(run.smooth_ms)) : json();
    const json r_sm_paper = ratio(pv("gaussian_exec_avg_ms"), pv("ecc_exec_avg_ms")), r_sm = ratio(sm, exec);
    const json r_ov_paper = ratio(pv("overall_avg_ms"), p_sum), r_ov = ratio(overall_avg, o_sum);
    const std::string na = g ? "-" : "no GPU";
    auto pair = [&](const char* f, const json& a, const json& b) {
      return cell(f, a) + " / " + (b.is_null() ? na : cell(f, b));
    };
    md << "| " << run.iterations << " | " << pair("%.2f", pv("overall_ms"), overall) << " | "
       << pair("%.3f", pv("overall_avg_ms"), overall_avg) << " | " << pair("%.3f", pv("ecc_mem_avg_ms"), mem)
       << " | " << pair("%.3f", pv("ecc_exec_avg_ms"), exec) << " | " << pair("%.3f", pv("gaussian_exec_avg_ms"), sm)
       << " | " << pair("%.2f", pv("disk_read_ms"), disk) << " | " << pair("%.2f", r_sm_paper, r_sm) << " | "
       << pair("%.2f", r_ov_paper, r_ov) << " | " << (g ? (run.verified ? "yes" : "NO") : "-") << " |\n";
    rows.push_back({{"iterations", run.iterations}, {"paper", p ? *p : json()},
                    {"ours", {{"overall_ms", overall}, {"overall_avg_ms", overall_avg}, {"setup_ms", num_or_null(run.setup_ms, g)},
                              {"loop_ms", num_or_null(run.loop_ms, g)}, {"ecc_mem_avg_ms", mem}, {"ecc_exec_avg_ms", exec},
                              {"gaussian_exec_avg_ms", sm}, {"disk_read_ms", disk}}},
                    {"ratios", {{"smoothing_over_ecc_exec_paper", r_sm_paper}, {"smoothing_over_ecc_exec_ours", r_sm},
                                {"overall_avg_over_exec_sum_paper", r_ov_paper}, {"overall_avg_over_exec_sum_ours", r_ov},
                                {"overall_avg_ours_over_paper", ratio(overall_avg, pv("overall_avg_ms"))}}},
                    {"raw", {{"smooth_ms", run.smooth_ms}, {"ecc_exec_ms", run.ecc_exec_ms}, {"ecc_mem_ms", run.ecc_mem_ms}}},
                    {"verified", run.verified}, {"verification", run.verification}});
  }
  std::string missing;
  for (const auto& row : field_or(paper, "rows", json::array())) {
    const int n = field_or(row, "iterations", 0);
    if (std::none_of(runs.begin(), runs.end(), [&](const PipelineRun& r) { return r.iterations == n; }))
      missing += (missing.empty() ? "" : ", ") + std::to_string(n);
  }
  if (!missing.empty()) md << "\nPaper rows not run at these sizes: N = " << missing << " (`--iterations` adds them).\n";
  json j = meta_json("ecc-2", paper, meta);
  j["dataset"] = info.dataset;
  j["smoothing"] = info.smoothing;
  j["disk_read_ms"] = info.disk_read_ms;
  j["cuda_context_ms"] = info.context_ms >= 0 ? json(info.context_ms) : json();
  j["rows"] = rows;
  j["paper_notes"] = field_or(paper, "notes", json::array());
  write_outputs(out_dir, "ecc-table2", md.str(), j);
  return md.str();
}

// ---- Table 3 ---------------------------------------------------------------------------------

std::string ecc_table3(const json& paper, const std::vector<BatchRun>& runs, double context_ms, const Meta& meta,
                       const std::string& out_dir) {
  std::ostringstream md;
  md << header("ECC paper Table 3: batches of small images read from files", paper, meta)
     << "Per-image averages (ms) of the median repetition. GPU overall = pinned host buffer, device "
        "buffer and `ecc::BatchRunner` set up for the batch, the N .npy files read into the pinned buffer "
        "(read column; page cache not dropped), one upload, the ECC of every image, every curve back on the "
        "host. GPU path: `small-kernel` (images of at most 16384 elements, e.g. the uniform 128^2 rows) = one "
        "launch per round of images, one thread block per image, one read-back per round (about 16 MiB of "
        "(value, ECC) pairs); `per-image` (larger images, e.g. GRF 128^3) = one gpu-opt pass per image on 4 "
        "streams, each image's pass and read-back queued without a host synchronisation in between. "
        "Device-resident = the ECC part only (curves on the host included). CPU = read + `omp` per image "
        "(\"-\" above 2^27 voxels per batch: time budget). "
        "The one-time CUDA context creation ("
     << (context_ms >= 0 ? fmt("%.1f ms", context_ms) : std::string("not measured"))
     << ") is outside; the paper's N = 1 row is mostly that kind of overhead. Amortisation = avg(N) / "
        "avg(N = 1) of the same group.\n\n"
     << "| input | N | GPU path | GPU overall avg (paper / ours) | read avg (paper / ours) | ours device-resident avg "
        "| ours CPU avg | amortisation (paper / ours) | read share (paper / ours) | verified |\n"
     << "| --- | ---: | --- | --- | --- | ---: | ---: | --- | --- | --- |\n";
  json rows = json::array();
  std::map<std::string, std::pair<json, json>> first;  // group -> (paper avg, ours avg) at the smallest N
  for (const auto& run : runs) {
    const json* p = paper_row(paper, [&](const json& row) {
      return field_or(row, "input", "") == run.input && field_or(row, "shape", "") == run.shape &&
             field_or(row, "count", 0) == run.count;
    });
    auto pv = [&](const char* k) { return p ? p->value(k, json()) : json(); };
    const double n = std::max(1, run.count);
    const bool g = run.gpu && !run.overall_ms.empty();
    const json overall = num_or_null(median_of(run.overall_ms) / n, g);
    const json read = num_or_null(median_of(run.read_ms) / n, g);
    const json dev = num_or_null(median_of(run.device_ms) / n, g);
    const json cpu = num_or_null(median_of(run.cpu_ms) / n, !run.cpu_ms.empty());
    const std::string group = run.input + " " + run.shape;
    if (!first.count(group)) first[group] = {pv("gpu_overall_avg_ms"), overall};
    const json am_p = ratio(pv("gpu_overall_avg_ms"), first[group].first), am_o = ratio(overall, first[group].second);
    const json rs_p = ratio(pv("gpu_disk_read_avg_ms"), pv("gpu_overall_avg_ms")), rs_o = ratio(read, overall);
    const std::string na = g ? "-" : "no GPU";
    auto pair = [&](const char* f, const json& a, const json& b) {
      return cell(f, a) + " / " + (b.is_null() ? na : cell(f, b));
    };
    md << "| " << group << " | " << run.count << " | " << (g && !run.path.empty() ? run.path : na) << " | "
       << pair("%.3f", pv("gpu_overall_avg_ms"), overall) << " | "
       << pair("%.3f", pv("gpu_disk_read_avg_ms"), read) << " | " << (g ? cell("%.4f", dev) : na) << " | "
       << cell("%.3f", cpu) << " | " << pair("%.3f", am_p, am_o) << " | " << pair("%.2f", rs_p, rs_o) << " | "
       << (!run.verified ? "NO" : g || !run.cpu_ms.empty() ? "yes" : "-") << " |\n";
    rows.push_back({{"input", run.input}, {"shape", run.shape}, {"count", run.count}, {"spec", run.spec},
                    {"gpu_path", g && !run.path.empty() ? json(run.path) : json()},
                    {"distinct_images", run.distinct}, {"paper", p ? *p : json()},
                    {"ours", {{"gpu_overall_avg_ms", overall}, {"gpu_disk_read_avg_ms", read},
                              {"gpu_device_resident_avg_ms", dev}, {"cpu_omp_avg_ms", cpu}}},
                    {"ratios", {{"amortisation_paper", am_p}, {"amortisation_ours", am_o},
                                {"read_share_paper", rs_p}, {"read_share_ours", rs_o},
                                {"overall_avg_ours_over_paper", ratio(overall, pv("gpu_overall_avg_ms"))}}},
                    {"raw_batch_ms", {{"overall", run.overall_ms}, {"read", run.read_ms}, {"device", run.device_ms},
                                      {"cpu", run.cpu_ms}}},
                    {"verified", run.verified}, {"verification", run.verification}});
  }
  json j = meta_json("ecc-3", paper, meta);
  j["cuda_context_ms"] = context_ms >= 0 ? json(context_ms) : json();
  j["rows"] = rows;
  write_outputs(out_dir, "ecc-table3", md.str(), j);
  return md.str();
}

// ---- measuring -------------------------------------------------------------------------------

namespace {

// results/paper/ecc-tableN.json (or --paper).
json ecc_paper(int n, const std::string& override_path) {
  return load_paper("ecc-table" + std::to_string(n), override_path);
}

// Times the CUDA context creation (cudaFree(nullptr), the first call that needs the context)
// once per process; -1 without a GPU. Device discovery (gpu_available) happens before it.
double context_ms() {
  static const double ms = [] {
    if (!gpu_available()) return -1.0;
    const auto t0 = std::chrono::steady_clock::now();
    REPIX_CUDA(cudaFree(nullptr));
    return ms_since(t0);
  }();
  return ms;
}

// A scratch folder for the tables' files, removed on scope exit.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& tag) {
    path = std::filesystem::temp_directory_path() /
           ("repix-" + tag + "-" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

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

// ---- Table 1 ----

// Out-of-core rows: gpu-stream on a generator source (never a whole image in memory; the
// generator fills each slab range on all cores with OpenMP). One sample: generating 68.7 G voxels
// on the CPU is a large part of it, and the table says so. seq cannot run at this size, so the
// check is what every full image must satisfy: the ECC at the largest value is the Euler
// characteristic of the whole (contractible) image, 1.
report::Result stream_from_generator(const std::string& spec_text) {
  const datasets::Spec spec = datasets::Spec::parse(spec_text);
  if (!datasets::is_chunk_addressable(spec)) throw Error("--sizes big streams chunk-addressable generators only");
  auto src = datasets::open_source(spec);
  std::fprintf(stderr, "repix table ecc-1: gpu-stream from the generator on %s (%d OpenMP threads, one sample)...\n",
               spec.str().c_str(), omp_get_max_threads());
  const auto t0 = std::chrono::steady_clock::now();
  ecc::StreamStats stats;
  const ecc::Curve c = ecc::run_gpu_stream_ex(*src, {}, nullptr, 0, &stats);
  report::Result r;
  r.family = "ecc";
  r.variant = "gpu-stream";
  r.dataset = spec.str();
  r.scope = "end-to-end";
  r.samples_ms = {ms_since(t0)};
  r.items = static_cast<double>(spec.shape.size());
  r.unit = "GVox/s";
  report::finalize(r, 1e9);
  r.bound = "";
  r.verified = !c.ecc.empty() && c.ecc.back() == 1;
  r.verification = std::string(r.verified ? "sanity only" : "FAILED sanity check") +
                   ": ECC at the largest value is " + (c.ecc.empty() ? "missing" : std::to_string(c.ecc.back())) +
                   " (must be 1); seq is out of reach at this size";
  r.extra = {{"source", "CPU generator (" + std::to_string(omp_get_max_threads()) +
                            " OpenMP threads) streamed chunk by chunk, no file: generation time included"},
             {"distinct_values", c.values.size()}, {"chunks", stats.chunks},
             {"used_fallback", stats.used_fallback}};
  return r;
}

std::string table1_name(const std::string& sizes) { return sizes == "big" ? "ecc-table1-big" : "ecc-table1"; }

int table1(const cli::Args& a, Meta& meta, const std::string& out_dir, Session& session) {
  const std::string sizes = meta.sizes;
  std::vector<std::string> specs;
  std::vector<std::string> streamed;
  if (sizes == "quick") {
    specs = {"uniform:24x24x24:seed=1", "grf:64x64:alpha=3:seed=2"};
  } else if (sizes == "default" || sizes == "paper") {
    // Uniform noise with 1024 float levels (the paper's GRFs also have 1024 values): float
    // [0, 1) noise has up to 2^24 distinct values, which makes seq and omp spend tens of seconds
    // per 512^3 sample on binning (far over a device round's budget) and sends gpu-opt to its
    // sort fallback. `--sizes paper` adds the paper's float [0, 1) noise at 512^3.
    specs = {"uniform:512x512x512:levels=1024:dtype=float32:seed=1", "grf:512x512x512:alpha=3:seed=2",
             "grf:256x256x256:alpha=3:seed=3", "grf:128x128x128:alpha=3:seed=4", "grf:8192x8192:alpha=3:seed=5",
             "grf:4096x4096:alpha=3:seed=6", "grf:2048x2048:alpha=3:seed=7"};
    if (sizes == "paper")
      specs.insert(specs.begin(), {"uniform:1024x1024x1024:levels=1024:dtype=float32:seed=8", "uniform:512x512x512:seed=11"});
  } else if (sizes == "big") {
    // 1024 float levels, not the float [0, 1) noise of the in-core row: 2^24 distinct values
    // overflow gpu-opt's 2^21-slot global table, and under streaming an overflow means a second
    // full pass over the source (68.7 G voxels generated twice). Labelled in the table.
    streamed = {"uniform:2048x2048x2048:levels=1024:dtype=float32:seed=9",
                "uniform:4096x4096x4096:levels=1024:dtype=float32:seed=10"};
  } else {
    throw cli::UsageError("--sizes for ecc-1: quick, default, paper or big");
  }
  for (const auto& s : a.all("dataset")) specs.push_back(s);
  report::Report rep;
  int code = 0;
  if (session.replaying()) {
    // Every bench and streamed result the run had journalled; the datasets without one are missing.
    rep = bench::report_from_journal(*session.replay());
    for (const auto& list : {specs, streamed})
      for (const auto& spec : list) {
        const std::string ds = datasets::Spec::parse(spec).str();
        if (std::none_of(rep.results.begin(), rep.results.end(),
                         [&](const report::Result& r) { return datasets::Spec::parse(r.dataset).str() == ds; }))
          session.note_missing(ds);
      }
    for (const auto& r : rep.results)
      if (!r.verified) code = 1;
  } else if (!specs.empty()) {
    bench::Request req;
    req.family_datasets = {{"ecc", specs}};
    req.variants = {"omp", "gpu-opt"};
    req.scopes = {"kernel", "end-to-end", "with-io"};
    req.gpu_samples = std::max(1, a.get_int("samples", sizes == "quick" ? 3 : 10));
    req.cpu_samples = std::max(1, a.get_int("cpu-samples", 3));
    req.warmup = 1;
    req.command = meta.command;
    if (!out_dir.empty()) req.out_path = out_dir + "/ecc-table1-bench.json";
    req.journal = session.writer();  // each result into the table's journal as it is taken
    code = bench::run(req, &rep);
  } else {
    rep.tool = meta.tool;
    rep.command = meta.command;
    rep.env = meta.env;
  }
  for (const auto& s : streamed) {
    if (session.replaying()) break;  // already in the journal's report
    if (!gpu_available()) throw Error("--sizes big streams through the GPU: " + gpu_unavailable_reason());
    rep.results.push_back(stream_from_generator(s));
    const report::Result& r = rep.results.back();
    if (session.writer())
      session.writer()->append("result", r.family + "/" + r.variant + "/" + r.dataset + "/" + r.scope, report::to_json(r));
    if (!r.verified) code = 1;
  }
  session.stamp(meta);
  // The out-of-core rows get their own files so they never overwrite the in-core table.
  std::cout << ecc_table1(ecc_paper(1, a.get("paper")), rep, meta, out_dir, table1_name(sizes));
  return code;
}

// ---- Table 2 ----

PipelineRun pipeline(const HostImage& img, int iterations, int reps) {
  PipelineRun run;
  run.iterations = iterations;
  run.gpu = true;
  const std::int64_t nx = img.shape().nx, ny = img.shape().ny;
  const std::size_t n = static_cast<std::size_t>(img.size());
  std::vector<double> overall;
  std::vector<double> setups, loops;
  ecc::Curve last;
  HostImage smoothed(DType::f32, img.shape());
  for (int rep = 0; rep < reps; ++rep) {
    nvtx::Range range("ecc-table2/pipeline", iterations);
    CudaStream stream;
    const cudaStream_t s = stream.get();
    const auto t0 = std::chrono::steady_clock::now();
    DeviceBuffer<float> cur(n), tmp(n);
    ecc::OptPlan plan;
    plan.setup({DType::f32, img.shape()}, {}, s);
    REPIX_CUDA(cudaMemcpyAsync(cur.get(), img.raw(), img.bytes(), cudaMemcpyHostToDevice, s));
    stream.sync();
    setups.push_back(ms_since(t0));
    CudaEvent e0, e1, e2;
    const auto l0 = std::chrono::steady_clock::now();
    for (int it = 0; it < iterations; ++it) {
      e0.record(s);
      ecc::smooth::smooth_gpu(cur.get(), cur.get(), tmp.get(), nx, ny, s);
      ecc::smooth::round_hundredths_gpu(cur.get(), static_cast<std::int64_t>(n), s);
      e1.record(s);
      plan.compute({cur.get()}, s);
      e2.record(s);
      const auto h0 = std::chrono::steady_clock::now();
      last = plan.result(s);
      // result() synchronises s except after the overflow fallback (synchronous but event-free):
      // wait for the last event either way before reading the times.
      REPIX_CUDA(cudaEventSynchronize(e2.get()));
      run.ecc_mem_ms.push_back(ms_since(h0));
      run.smooth_ms.push_back(e1.ms_since(e0));
      run.ecc_exec_ms.push_back(e2.ms_since(e1));
    }
    loops.push_back(ms_since(l0));
    if (rep == reps - 1) {
      REPIX_CUDA(cudaMemcpyAsync(smoothed.raw(), cur.get(), img.bytes(), cudaMemcpyDeviceToHost, s));
      stream.sync();
    }
  }
  // The repetition with the median overall time gives setup and loop.
  std::vector<std::size_t> idx(setups.size());
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::sort(idx.begin(), idx.end(), [&](std::size_t x, std::size_t y) { return setups[x] + loops[x] < setups[y] + loops[y]; });
  run.setup_ms = setups[idx[idx.size() / 2]];
  run.loop_ms = loops[idx[idx.size() / 2]];
  // Exactness: the GPU's own smoothed floats, copied back, through seq.
  const ecc::Curve want = ecc::run_seq(smoothed, {});
  run.verified = last == want;
  run.verification = run.verified ? "exact match with seq on the smoothed image copied back (" +
                                        std::to_string(want.values.size()) + " values)"
                                  : "MISMATCH with seq on the smoothed image copied back";
  // The smoothing itself against the CPU reference, where cheap enough.
  if (iterations <= 10) {
    HostImage ref(DType::f32, img.shape());
    std::copy(img.data<float>(), img.data<float>() + img.size(), ref.data<float>());
    for (int it = 0; it < iterations; ++it) {
      ref = ecc::smooth::smooth_cpu(ref);
      ecc::smooth::round_hundredths_cpu(ref);
    }
    double worst = 0;
    for (std::int64_t i = 0; i < img.size(); ++i)
      worst = std::max(worst, static_cast<double>(std::fabs(ref.data<float>()[i] - smoothed.data<float>()[i])));
    run.verification += "; smoothing vs smooth_cpu: max abs difference " + fmt("%.3g", worst);
    if (worst > 1e-5) run.verified = false;
  }
  return run;
}

int table2(const cli::Args& a, Meta& meta, const std::string& out_dir, Session& session) {
  const bool quick = meta.sizes == "quick";
  if (meta.sizes != "quick" && meta.sizes != "default" && meta.sizes != "paper")
    throw cli::UsageError("--sizes for ecc-2: quick, default or paper");
  const std::string spec = a.get("dataset", quick ? "grf:64x64:alpha=3:seed=1" : "grf:1024x1024:alpha=3:seed=1");
  std::vector<int> counts = quick ? std::vector<int>{1, 10} : std::vector<int>{1, 10, 100, 1000};
  if (meta.sizes == "paper") counts.push_back(10000);
  if (a.has("iterations")) counts = parse_counts(a.get("iterations"));
  PipelineInfo info;
  info.dataset = datasets::Spec::parse(spec).str();
  info.smoothing =
      "separable Gaussian, 13 taps, sigma 2, clamp-to-edge borders, float32, in place (rows then columns, "
      "shared-memory tiles), then rounded to 0.01 like the GRF input (keeps ~1000 ECC bins as in the paper; "
      "unrounded, nearly every pixel would be its own bin)";
  std::optional<HostImage> img;  // only when measuring
  if (!session.replaying()) {
    info.context_ms = context_ms();
    img = datasets::generate(datasets::Spec::parse(spec), gpu_available());
    if (img->dtype() != DType::f32 || img->shape().ndim != 2)
      throw Error("ecc-2 needs a float32 2D dataset, got " + dtype_name(img->dtype()) + " " + img->shape().str());
  }
  info = session.take<PipelineInfo>("input", [&] {
                   TempDir tmp("ecc-table2");
                   const std::string path = (tmp.path / "input.npy").string();
                   datasets::write_npy(*img, path);
                   std::vector<double> reads;
                   for (int i = 0; i < 3; ++i) {
                     const auto t0 = std::chrono::steady_clock::now();
                     const HostImage back = datasets::read_npy(path, gpu_available());
                     reads.push_back(ms_since(t0));
                     if (back.content_hash() != img->content_hash()) throw Error("ecc-2: the .npy read back differs");
                   }
                   info.disk_read_ms = median_of(reads);
                   return info;
                 }).value_or(info);
  std::vector<PipelineRun> runs;
  if (img && gpu_available()) pipeline(*img, 3, 1);  // warm-up: module loading, first allocations, clocks
  for (int n : counts) {
    const auto run = session.take<PipelineRun>("pipeline x" + std::to_string(n), [&] {
      PipelineRun not_run;  // without a GPU: the table says "no GPU"
      not_run.iterations = n;
      if (!gpu_available()) return not_run;
      std::fprintf(stderr, "repix table ecc-2: pipeline x%d...\n", n);
      return pipeline(*img, n, n <= 100 ? 5 : 1);
    });
    if (run) runs.push_back(*run);
  }
  session.stamp(meta);
  std::cout << ecc_table2(ecc_paper(2, a.get("paper")), runs, info, meta, out_dir);
  for (const auto& r : runs)
    if (r.gpu && !r.verified) {
      std::fprintf(stderr, "repix table ecc-2: x%d: %s\n", r.iterations, r.verification.c_str());
      return 1;
    }
  return 0;
}

// ---- Table 3 ----

// omp takes milliseconds per small image (thread start-up on every call): 10000 x 128^2 would
// take a minute, so the CPU column stops at 2^27 voxels per batch.
constexpr double kCpuMaxBatchVoxels = double(1 << 27);

BatchRun batch(const std::string& input, const std::string& spec0, int count, int reps, ecc::BatchPath path,
               const TempDir& dir) {
  BatchRun run;
  run.input = input;
  run.count = count;
  run.spec = datasets::Spec::parse(spec0).str();
  const int pool = std::min(count, 16);  // distinct images, cycled: generating 1000 GRFs would dominate
  run.distinct = pool;
  const Shape spec_shape = datasets::spec_shape(datasets::Spec::parse(spec0));
  const bool cpu_column = static_cast<double>(count) * static_cast<double>(spec_shape.size()) <= kCpuMaxBatchVoxels;
  if (!cpu_column && !gpu_available()) {  // nothing would run: skip generating and writing
    run.shape = spec_shape.str();
    run.verified = true;
    run.verification = "not run (no GPU, and the CPU column is over its budget at this size)";
    return run;
  }
  std::vector<HostImage> images;
  std::vector<ecc::Curve> refs;
  for (int j = 0; j < pool; ++j) {
    images.push_back(datasets::generate(datasets::Spec::parse(with_seed(spec0, 1 + j))));
    refs.push_back(ecc::run_seq(images.back(), {}));
  }
  const DType dt = images[0].dtype();
  const Shape shape = images[0].shape();
  run.shape = shape.str();
  const std::size_t bytes = images[0].bytes();
  std::vector<std::string> paths;
  for (int i = 0; i < count; ++i) {
    paths.push_back((dir.path / (input + "-" + std::to_string(count) + "-" + std::to_string(i) + ".npy")).string());
    datasets::write_npy(images[i % pool], paths.back());
  }
  std::string mismatch;
  auto check = [&](const std::vector<ecc::Curve>& got, const char* what) {
    for (int i = 0; i < count && mismatch.empty(); ++i)
      if (!(got[i] == refs[i % pool])) mismatch = std::string(what) + ": image " + std::to_string(i) + " differs from seq";
  };
  // CPU: read + omp per image, up to a batch size that keeps a device round in budget (omp takes
  // milliseconds per 128^2 float image: it is built for large images).
  if (cpu_column) {
    std::vector<ecc::Curve> got;
    const auto t0 = std::chrono::steady_clock::now();
    for (const auto& p : paths) got.push_back(ecc::run_omp(datasets::read_npy(p), {}));
    run.cpu_ms.push_back(ms_since(t0));
    check(got, "omp");
  }
  if (gpu_available()) {
    run.gpu = true;
    std::vector<ecc::Curve> got;
    for (int rep = 0; rep < reps; ++rep) {
      nvtx::Range range("ecc-table3/batch", count);
      const auto t0 = std::chrono::steady_clock::now();
      HostBuffer host(bytes * count, /*pinned=*/true);
      DeviceBuffer<unsigned char> dev(bytes * count);
      ecc::BatchRunner runner(dt, shape, 4, path);
      run.path = ecc::batch_path_name(runner.path());
      CudaStream s;
      const auto r0 = std::chrono::steady_clock::now();
      auto* dst = static_cast<unsigned char*>(host.data());
      for (int i = 0; i < count; ++i) datasets::open_npy_source(paths[i])->read(0, slab_count(shape), dst + bytes * i);
      run.read_ms.push_back(ms_since(r0));
      REPIX_CUDA(cudaMemcpyAsync(dev.get(), host.data(), bytes * count, cudaMemcpyHostToDevice, s.get()));
      s.sync();
      got = runner.run(dev.get(), count);
      run.overall_ms.push_back(ms_since(t0));
      // The ECC alone on the now device-resident batch (run() is synchronous: host clock).
      const auto d0 = std::chrono::steady_clock::now();
      got = runner.run(dev.get(), count);
      run.device_ms.push_back(ms_since(d0));
    }
    check(got, ("GPU batch, " + run.path).c_str());
  }
  const bool ran = run.gpu || !run.cpu_ms.empty();
  run.verified = mismatch.empty();
  run.verification = !run.verified ? mismatch
                     : ran        ? "every image: exact match with seq (" + std::to_string(pool) + " distinct images)"
                                  : "not run (no GPU, and the CPU column is over its budget at this size)";
  for (const auto& p : paths) std::filesystem::remove(p);
  return run;
}

int table3(const cli::Args& a, Meta& meta, const std::string& out_dir, Session& session) {
  const bool quick = meta.sizes == "quick";
  if (meta.sizes != "quick" && meta.sizes != "default" && meta.sizes != "paper")
    throw cli::UsageError("--sizes for ecc-3: quick, default or paper");
  // The paper's groups: uniform float32 noise 128^2 and GRF 128^3.
  std::vector<int> c2 = quick ? std::vector<int>{1, 4} : std::vector<int>{1, 100, 1000, 10000};
  std::vector<int> c3 = quick ? std::vector<int>{1, 2} : std::vector<int>{1, 10, 100, 1000};
  if (a.has("counts-2d")) c2 = parse_counts(a.get("counts-2d"));
  if (a.has("counts-3d")) c3 = parse_counts(a.get("counts-3d"));
  // --dataset-2d/3d replace a group's images (e.g. to time other small shapes or dtypes); the row
  // is labelled with the dataset kind, so only the paper's own inputs meet the paper's numbers.
  const std::string s2 = a.get("dataset-2d", "uniform:128x128:seed=1");
  const std::string s3 = a.get("dataset-3d", quick ? "grf:32x32x32:alpha=3:seed=1" : "grf:128x128x128:alpha=3:seed=1");
  ecc::BatchPath path = ecc::BatchPath::automatic;
  try {
    path = ecc::parse_batch_path(a.get("batch-path", "auto"));
  } catch (const Error& e) {
    throw cli::UsageError(std::string("--batch-path: ") + e.what());
  }
  const double ctx = session.take<double>("cuda context", [] { return context_ms(); }).value_or(-1.0);
  std::optional<TempDir> dir;  // only when measuring
  if (!session.replaying()) dir.emplace("ecc-table3");
  std::vector<BatchRun> runs;
  struct Group {
    std::string spec;
    std::vector<int> counts;
    int reps_above_100;  // repetitions of the batches of more than 100 images
  };
  for (const Group& group : {Group{s2, c2, 3}, Group{s3, c3, 2}}) {
    const datasets::Spec parsed = datasets::Spec::parse(group.spec);
    const Shape shape = datasets::spec_shape(parsed);
    // small-kernel is forced only where the images fit it; the GPU path column shows what ran.
    const bool fits = ecc::BatchRunner::small_kernel_fits(shape);
    const ecc::BatchPath group_path = path == ecc::BatchPath::small_kernel && !fits ? ecc::BatchPath::per_image : path;
    if (group_path != path)
      std::fprintf(stderr, "repix table ecc-3: %s images are too large for small-kernel: per-image\n", shape.str().c_str());
    for (int n : group.counts) {
      const auto run = session.take<BatchRun>(parsed.kind + " " + shape.str() + " x" + std::to_string(n), [&] {
        std::fprintf(stderr, "repix table ecc-3: %s %s x %d...\n", parsed.kind.c_str(), shape.str().c_str(), n);
        return batch(parsed.kind, group.spec, n, n <= 100 ? 5 : group.reps_above_100, group_path, *dir);
      });
      if (run) runs.push_back(*run);
    }
  }
  session.stamp(meta);
  std::cout << ecc_table3(ecc_paper(3, a.get("paper")), runs, ctx, meta, out_dir);
  int code = 0;
  for (const auto& r : runs)
    if (!r.verified) {
      std::fprintf(stderr, "repix table ecc-3: %s x%d: %s\n", r.input.c_str(), r.count, r.verification.c_str());
      code = 1;
    }
  return code;
}

}  // namespace

const char* ecc_table_usage(int n) {
  switch (n) {
    case 1: return "[--quick | --sizes quick|default|paper|big] [--dataset SPEC]... [--samples N] [--cpu-samples N] [--out-dir DIR] [--paper P.json] | --from JOURNAL [--out-dir DIR]";
    case 2: return "[--quick | --sizes quick|default|paper] [--iterations 1,10,100] [--dataset SPEC] [--out-dir DIR] [--paper P.json] | --from JOURNAL [--out-dir DIR]";
    default: return "[--quick | --sizes quick|default|paper] [--counts-2d 1,100] [--counts-3d 1,10] [--dataset-2d SPEC] "
                    "[--dataset-3d SPEC] [--batch-path auto|small-kernel|per-image] [--out-dir DIR] [--paper P.json] | --from JOURNAL [--out-dir DIR]";
  }
}

int run_ecc_table(int n, const cli::Args& given) {
  const std::string id = "ecc-" + std::to_string(n);
  Session session(id, given);
  const cli::Args& a = session.args();
  a.only({"sizes", "quick", "dataset", "samples", "cpu-samples", "iterations", "counts-2d", "counts-3d", "dataset-2d",
          "dataset-3d", "batch-path", "out-dir", "paper"});
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
  const std::string out_dir = a.get("out-dir", session.default_out_dir());
  session.start(out_dir, n == 1 ? table1_name(sizes) : "ecc-table" + std::to_string(n), meta);
  const int code = n == 1 ? table1(a, meta, out_dir, session)
                   : n == 2 ? table2(a, meta, out_dir, session)
                            : table3(a, meta, out_dir, session);
  session.done();  // the table is written (whatever the verdict): its journal has served
  return code;
}

}  // namespace repix::tables
