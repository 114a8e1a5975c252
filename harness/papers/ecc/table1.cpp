// ECC paper Table 1: omp vs gpu-opt in the scopes kernel, end-to-end and with-io, through `repix
// bench` (one report, every GPU output verified against seq per dataset); --sizes big streams the
// paper's out-of-core sizes from the generator through gpu-stream.
#include "harness/papers/ecc/measure.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "core/error.hpp"
#include "core/gpu.hpp"
#include "datasets/datasets.hpp"
#include "ecc/ecc.hpp"
#include "ecc/gpu_opt.cuh"
#include "harness/bench.hpp"
#include "harness/json_fields.hpp"

namespace repix::tables::ecc_tables {

using nlohmann::json;

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
    // The bench's rule, at least 3 samples of each (omp at 512^3 takes seconds a run); --samples and
    // --cpu-samples fix the counts instead.
    req.rule.min_samples = 3;
    req.rule.warmup = 1;
    req.gpu_samples = a.get_int("samples", sizes == "quick" ? 3 : 0, 1, 100000);
    req.cpu_samples = a.get_int("cpu-samples", sizes == "quick" ? 3 : 0, 1, 100000);
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

}  // namespace repix::tables::ecc_tables
