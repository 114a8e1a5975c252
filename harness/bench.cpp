#include "harness/bench.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <deque>
#include <iostream>
#include <memory>

#include "core/error.hpp"
#include "core/gpu.hpp"
#include "core/host_limits.hpp"
#include "core/nvtx.hpp"
#include "datasets/datasets.hpp"
#include "datasets/io.hpp"
#include "harness/env.hpp"
#include "harness/family.hpp"
#include "harness/gbench.hpp"
#include "harness/journal.hpp"
#include "harness/json_fields.hpp"
#include "baselines/peers.hpp"
#include "harness/registry.hpp"

namespace repix::bench {

using json_fields::field_or;
using nlohmann::json;

report::DatasetInfo describe_dataset(const std::string& spec, const HostImage& img) {
  report::DatasetInfo d;
  d.spec = datasets::Spec::parse(spec).str();
  d.shape = img.shape().str();
  d.dtype = dtype_name(img.dtype());
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(img.content_hash()));
  d.hash = hex;
  d.elements = img.size();
  return d;
}

namespace {

void add_bounds(const Context& ctx, report::Report& rep) {
  if (!ctx.gpu) return;
  const auto& b = ctx.bandwidths;
  rep.bounds.push_back({"dram-read", "GB/s", b.dram_read,
                        "read-only 16-byte streaming kernel over 2 GiB, median of 15"});
  rep.bounds.push_back({"dram-copy", "GB/s", b.dram_copy,
                        "device-to-device cudaMemcpy of 2 GiB, (read + written bytes) / time"});
  rep.bounds.push_back({"h2d-pinned", "GB/s", b.h2d_pinned, "cudaMemcpy of 1 GiB from pinned host memory"});
  rep.bounds.push_back({"d2h-pinned", "GB/s", b.d2h_pinned, "cudaMemcpy of 1 GiB to pinned host memory"});
}

double bound_gbs(const Context& ctx, const std::string& name) {
  if (name == "dram-read") return ctx.bandwidths.dram_read;
  if (name == "h2d-pinned") return ctx.bandwidths.h2d_pinned;
  return 0;
}

}  // namespace

KernelTimer::KernelTimer() = default;

void KernelTimer::upload(const std::vector<const HostImage*>& inputs) {
  buffers_.clear();
  pointers_.clear();
  for (const HostImage* img : inputs) {
    buffers_.emplace_back(img->bytes());
    REPIX_CUDA(cudaMemcpyAsync(buffers_.back().get(), img->raw(), img->bytes(), cudaMemcpyHostToDevice, stream()));
    pointers_.push_back(buffers_.back().get());
  }
}

void KernelTimer::start(Compute compute, int warmup, std::string nvtx_name) {
  compute_ = std::move(compute);
  name_ = std::move(nvtx_name);
  {
    // The variant's ranges inside "warmup": Nsight shows the warm-up as the variant's, and
    // `--nvtx-exclude "repix@warmup/"` drops it from a filter on the variant.
    nvtx::Range r("warmup");
    for (int i = 0; i < warmup; ++i) {
      nvtx::Range v(name_.c_str());
      compute_(pointers_, stream());
    }
    stream_.sync();
  }
  sampler_ = std::make_unique<timing::GpuSampler>(/*flush_l2=*/true);
}

double KernelTimer::sample() {
  return sampler_->sample(
      [&](cudaStream_t s) {
        nvtx::Range r(name_.c_str());  // <family> > <variant>; the L2 flush stays outside them
        compute_(pointers_, s);
      },
      stream());
}

std::vector<std::size_t> choose_variants(const Context& ctx, const std::vector<std::string>& ids,
                                         const std::vector<bool>& is_gpu) {
  auto excluded = [&](const std::string& id) {
    return std::find(ctx.req.exclude.begin(), ctx.req.exclude.end(), id) != ctx.req.exclude.end();
  };
  std::vector<std::size_t> out;
  if (ctx.req.variants.empty()) {
    for (std::size_t i = 0; i < ids.size(); ++i)
      if ((!is_gpu[i] || ctx.gpu) && !excluded(ids[i])) out.push_back(i);
    return out;
  }
  for (const auto& want : ctx.req.variants) {
    if (want.rfind("peer:", 0) == 0) continue;  // peers are the family's bench code's business
    const auto it = std::find(ids.begin(), ids.end(), want);
    if (it == ids.end()) {
      bool anywhere = false;
      for (const auto& v : registry::variants()) anywhere = anywhere || v.id == want;
      if (!anywhere || ctx.req.family_datasets.size() == 1) {
        std::string known;
        for (const auto& id : ids) known += (known.empty() ? "" : ", ") + id;
        throw Error("unknown " + ctx.family + " variant '" + want + "' (known: " + known + ")");
      }
      continue;  // another family's variant
    }
    const std::size_t i = static_cast<std::size_t>(it - ids.begin());
    if (is_gpu[i] && !ctx.gpu) {
      std::fprintf(stderr, "repix bench: skipping %s/%s (no GPU)\n", ctx.family.c_str(), want.c_str());
      continue;
    }
    if (!excluded(want)) out.push_back(i);
  }
  return out;
}

bool names_peer(const Context& ctx, const std::string& id) {
  const std::vector<std::string>& v = ctx.req.variants;
  return std::find(v.begin(), v.end(), "peer:" + id) != v.end();
}

std::vector<peers::Peer> choose_peers(const Context& ctx) {
  const std::vector<std::string>& ex = ctx.req.exclude;
  std::vector<peers::Peer> out;
  for (const peers::Peer& p : peers::available(ctx.family)) {
    const bool excluded = std::find(ex.begin(), ex.end(), "peer:" + p.id) != ex.end();
    if ((ctx.req.variants.empty() || names_peer(ctx, p.id)) && !excluded && (!p.gpu || ctx.gpu))
      out.push_back(p);
  }
  return out;
}

void add_peer_case(Context& ctx, std::vector<Case>& cases, const peers::Peer& peer, const std::string& spec,
                   const std::string& unit, PeerRunner run_and_verify) {
  Case c;
  c.gpu = peer.gpu;
  c.result.family = ctx.family;
  c.result.variant = "peer:" + peer.id;
  c.result.dataset = spec;
  c.result.scope = "end-to-end";  // replaced by what the peer reports
  c.result.unit = unit;
  auto samples = std::make_shared<std::vector<double>>();
  const std::size_t index = cases.size();
  c.prepare = [&ctx, &cases, index, peer, samples, run = std::move(run_and_verify)] {
    Case& me = cases[index];
    const int n = peer.gpu ? ctx.req.gpu_samples : ctx.req.cpu_samples;
    peers::PeerRun r = run(me, n, ctx.req.warmup);
    if (static_cast<int>(r.samples_ms.size()) < n)
      throw Error("peer " + peer.id + " returned " + std::to_string(r.samples_ms.size()) + " samples, not " +
                  std::to_string(n));
    me.result.scope = r.scope.empty() ? "end-to-end" : r.scope;
    me.result.extra["peer"] = peer.description;
    if (!r.version.empty()) me.result.extra["version"] = r.version;
    *samples = std::move(r.samples_ms);
    std::reverse(samples->begin(), samples->end());
  };
  c.sample = [samples] {
    const double ms = samples->back();
    samples->pop_back();
    return ms;
  };
  c.finish = [] {};
  cases.push_back(std::move(c));
}

bool wants_scope(const Context& ctx, const std::string& scope) {
  return std::find(ctx.req.scopes.begin(), ctx.req.scopes.end(), scope) != ctx.req.scopes.end();
}

void record_dataset(Context& ctx, const report::DatasetInfo& info) {
  for (const auto& d : ctx.dataset_infos)
    if (d.spec == info.spec) return;
  ctx.dataset_infos.push_back(info);
}

report::Report report_from_journal(const journal::Journal& j) {
  report::Report rep;
  rep.tool = field_or(j.header, "tool", json::object());
  rep.command = field_or(j.header, "command", "");
  rep.env = field_or(j.header, "env", json::object());
  try {
    for (const journal::Record* r : j.all("bounds"))
      for (const auto& b : r->data) rep.bounds.push_back(report::bound_from_json(b));
    for (const journal::Record* r : j.all("dataset")) rep.datasets.push_back(report::dataset_from_json(r->data));
    for (const journal::Record* r : j.all("result")) rep.results.push_back(report::result_from_json(r->data));
  } catch (const Error& e) {
    throw Error("journal '" + j.path + "': " + e.what());
  }
  rep.provenance = {{"rebuilt_from_journal", j.path}, {"results", rep.results.size()},
                    {"torn_last_line_ignored", j.torn_tail}};
  return rep;
}

int run(const Request& req, report::Report* out) {
  if (req.family_datasets.empty()) throw Error("bench: no family and dataset to run");
  // Every dataset is checked before anything is measured: a missing or damaged file is one error
  // now, not one per variant after the others have been timed.
  for (const auto& [fam, specs] : req.family_datasets) {
    registry::check_family(fam);
    for (const std::string& spec : specs) {
      try {
        datasets::shape_of(spec);
      } catch (const Error& e) {
        throw Error("dataset '" + spec + "': " + e.what());
      }
    }
  }
  // Each dataset's memory, before anything is generated, measured or written.
  for (const auto& [fam, specs] : req.family_datasets)
    for (const std::string& spec : specs) require_host_memory(family::find(fam).host_bytes(spec), "bench on " + spec);
  const bool gpu = gpu_available();
  report::Report rep;
  rep.tool = env::tool_info();
  rep.command = req.command;
  rep.env = env::capture_environment();
  // Every result goes to a journal the moment it is complete (journal.hpp): the caller's, or our
  // own beside the report, removed once the report is written.
  std::unique_ptr<journal::Writer> own_journal;
  if (!req.journal && !req.out_path.empty())
    own_journal = std::make_unique<journal::Writer>(journal::path_for(req.out_path), "bench", "bench",
                                                    json{{"command", rep.command}, {"tool", rep.tool}, {"env", rep.env}});
  journal::Writer* const jw = req.journal ? req.journal : own_journal.get();
  nlohmann::json clocks_before;
  timing::Bandwidths bandwidths;
  if (gpu) {
    clocks_before = env::gpu_clock_snapshot();
    std::fprintf(stderr, "repix bench: measuring bandwidth bounds...\n");
    bandwidths = timing::measure_bandwidths();
  } else {
    std::fprintf(stderr, "repix bench: %s; GPU variants are skipped\n", gpu_unavailable_reason().c_str());
  }

  // One context per family (cases keep references to theirs); std::deque keeps them in place.
  std::deque<Context> contexts;
  std::vector<Case> cases;
  for (const auto& [fam, specs] : req.family_datasets) {
    contexts.push_back(Context{req, fam, specs, {}, gpu, bandwidths});
    family::find(fam).add_bench_cases(contexts.back(), cases);
  }
  add_bounds(contexts.front(), rep);
  if (jw && !rep.bounds.empty()) {
    json bounds = json::array();
    for (const auto& b : rep.bounds) bounds.push_back(report::to_json(b));
    jw->append("bounds", "", bounds);
  }
  // Datasets are described as the cases first load them; each goes to the journal once.
  std::size_t journalled_datasets = 0;
  auto journal_new_datasets = [&] {
    std::size_t seen = 0;
    for (const Context& ctx : contexts)
      for (const auto& d : ctx.dataset_infos)
        if (seen++ >= journalled_datasets) jw->append("dataset", d.spec, report::to_json(d));
    journalled_datasets = seen;
  };

  // Google Benchmark runs the cases: one iteration = one sample, time = our measured sample.
  std::vector<std::string> argv_store = {"repix-bench"};
  for (const auto& a : req.gbench_args) argv_store.push_back(a);
  std::vector<char*> argv;
  for (auto& s : argv_store) argv.push_back(s.data());
  int argc = static_cast<int>(argv.size());
  benchmark::Initialize(&argc, argv.data());
  if (benchmark::ReportUnrecognizedArguments(argc, argv.data()))
    throw Error("unrecognised Google Benchmark argument");
  for (Case& c : cases) {
    const auto& r = c.result;
    const std::string name = r.family + "/" + r.variant + "/" + r.dataset + "/" + r.scope;
    const int n = c.gpu ? req.gpu_samples : req.cpu_samples;
    benchmark::RegisterBenchmark(name.c_str(), [&c, &contexts, jw, &journal_new_datasets](benchmark::State& state) {
      try {
        c.prepare();
      } catch (const peers::Unsupported& e) {
        c.skipped = true;
        c.result.verification = std::string("skipped: ") + e.what();
        state.SkipWithError(c.result.verification.c_str());
        return;
      } catch (const std::exception& e) {
        c.result.verification = std::string("error: ") + e.what();
        state.SkipWithError(c.result.verification.c_str());
        return;
      }
      report::Result& res = c.result;
      try {
        for (auto _ : state) {
          const double ms = c.sample();
          res.samples_ms.push_back(ms);
          state.SetIterationTime(ms * 1e-3);
        }
        c.finish();
        // Complete here, so that the journal holds the result as the report will.
        report::finalize(res, 1e9);
      } catch (const std::exception& e) {  // nothing may escape into Google Benchmark's loop
        res.samples_ms.clear();
        res.verification = std::string("error: ") + e.what();
        state.SkipWithError(res.verification.c_str());
        return;
      }
      state.counters["verified"] = res.verified ? 1 : 0;
      const double gbs = bound_gbs(contexts.front(), res.bound);
      if (gbs > 0 && c.bytes_per_item > 0) res.pct_of_bound = 100.0 * res.throughput * c.bytes_per_item / gbs;
      if (jw) {
        journal_new_datasets();
        jw->append("result", res.family + "/" + res.variant + "/" + res.dataset + "/" + res.scope, report::to_json(res));
      }
    })->UseManualTime()->Iterations(n)->Unit(benchmark::kMillisecond);
  }
  gbench::Console console;  // the library's console output minus its DEBUG-build warning (gbench.hpp)
  benchmark::RunSpecifiedBenchmarks(&console);
  benchmark::Shutdown();

  bool all_ok = true;
  std::size_t skipped = 0;
  for (Case& c : cases) {
    report::Result& r = c.result;
    if (r.samples_ms.empty()) {
      skipped += c.skipped;
      if (c.skipped) {
        std::fprintf(stderr, "repix bench: %s/%s on %s: %s\n", r.family.c_str(), r.variant.c_str(),
                     r.dataset.c_str(), r.verification.c_str());
      } else if (!r.verification.empty()) {  // ran but failed (an error, not filtered out)
        all_ok = false;
        std::fprintf(stderr, "repix bench: %s/%s on %s: %s\n", r.family.c_str(), r.variant.c_str(),
                     r.dataset.c_str(), r.verification.c_str());
      }
      continue;
    }
    if (!r.verified) all_ok = false;
    rep.results.push_back(r);
  }
  for (const Context& ctx : contexts)
    for (const auto& d : ctx.dataset_infos) rep.datasets.push_back(d);
  if (gpu && env::record_clocks(rep.env, clocks_before, env::gpu_clock_snapshot()))
    std::fprintf(stderr, "repix bench: warning: GPU clocks sagged during the run: %s\n",
                 field_or(rep.env["gpu"], "clocks_sagged_why", std::string()).c_str());
  if (rep.results.empty()) {
    // Nothing measured is a failed bench, not an empty report: say why and write nothing.
    if (own_journal) own_journal->done();
    std::string why;
    if (cases.empty())
      why = gpu ? "no variant or peer was selected" : "no variant or peer was selected that runs without a GPU";
    else if (skipped == cases.size())
      why = "every case was skipped (above)";
    else if (all_ok)
      why = "no case matched the --benchmark_filter";
    else
      why = "every case failed (above)";
    throw Error("bench: nothing ran: " + why + (req.out_path.empty() ? "" : "; no report written"));
  }
  std::cout << "\n" << report::summary_table(rep) << std::flush;
  if (!req.out_path.empty()) {
    report::write_report(rep, req.out_path);
    std::fprintf(stderr, "repix bench: report written to %s\n", req.out_path.c_str());
  }
  if (own_journal) own_journal->done();
  if (out) *out = rep;
  if (!all_ok) std::fprintf(stderr, "repix bench: error: some results are not verified\n");
  return all_ok ? 0 : 1;
}

}  // namespace repix::bench
