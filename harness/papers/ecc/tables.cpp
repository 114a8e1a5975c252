// Building the ECC paper's Tables 1-3 (see tables.hpp) from their measurements (measure.hpp,
// table1/2/3.cpp): formatting and ratio logic only, tested without a GPU.
#include "harness/papers/ecc/tables.hpp"

#include <omp.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "core/gpu.hpp"
#include "datasets/io.hpp"
#include "ecc/batch.hpp"
#include "ecc/ecc.hpp"
#include "ecc/smooth.hpp"
#include "harness/json_fields.hpp"
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

}  // namespace repix::tables
