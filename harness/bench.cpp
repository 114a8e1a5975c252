#include "harness/bench.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <regex>
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
#include "harness/progress.hpp"
#include "harness/protocol.hpp"
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

// A case's name, as Google Benchmark prints it and --benchmark_filter matches it.
std::string case_name(const Case& c) {
  const report::Result& r = c.result;
  return r.family + "/" + r.variant + "/" + r.dataset + "/" + r.scope;
}

// --benchmark_filter, as Google Benchmark reads it: a regular expression searched in each case's
// name ("" and "all": every case), a leading '-' keeping the cases it does not match. repix applies
// it itself (so the plan knows the rows before the first is measured); a regex that does not
// compile is a usage error before anything runs.
class Filter {
 public:
  explicit Filter(std::string text) {
    if (text.empty() || text == "all") return;
    if (text[0] == '-') {
      negate_ = true;
      text.erase(0, 1);
    }
    try {
      re_.emplace(text, std::regex::extended);
    } catch (const std::regex_error& e) {
      throw cli::UsageError("--benchmark_filter: '" + text + "' is not a regular expression: " + e.what());
    }
  }
  bool keeps(const std::string& name) const { return !re_ || std::regex_search(name, *re_) != negate_; }

 private:
  std::optional<std::regex> re_;
  bool negate_ = false;
};

double bound_gbs(const Context& ctx, const std::string& name) {
  if (name == "dram-read") return ctx.bandwidths.dram_read;
  if (name == "h2d-pinned") return ctx.bandwidths.h2d_pinned;
  return 0;
}

}  // namespace

protocol::Rule Request::rule_for(bool on_gpu) const {
  const int fixed = on_gpu ? gpu_samples : cpu_samples;
  if (fixed <= 0) return rule;
  protocol::Rule r = protocol::Rule::fixed(fixed);
  r.warmup = rule.warmup;
  return r;
}

Reps table_reps(int reps) {
  Reps r;
  r.gpu.min_samples = reps;
  r.gpu.max_samples = std::max(reps, r.gpu.max_samples);
  r.gpu.max_time_s = 0.5;
  r.gpu.warmup = 1;
  r.cpu.min_samples = 1;
  r.cpu.max_samples = std::min(reps, 3);
  r.cpu.max_time_s = 1;
  r.cpu.warmup = 0;
  return r;
}

std::string table_reps_text(const Reps& r) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "Samples by repix's stopping rule: GPU cells at least %d after one warm-up, stopping once the "
                "median's 95%% interval is within +-%g %% (after %g s of samples) or %g s have passed; CPU cells "
                "(seq included) up to %d runs, the first (checked) one timed, stopping once %g s have passed "
                "(seq's run count is in its column: one run at the large sizes). Times are medians; each cell's "
                "JSON holds its samples and what stopped them.",
                r.gpu.min_samples, r.gpu.max_noise_pct, r.gpu.min_time_s, r.gpu.max_time_s, r.cpu.max_samples,
                r.cpu.max_time_s);
  return buf;
}

void measure_case(Case& c, const protocol::Rule& rule) {
  report::Result& r = c.result;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    if (c.prepare) c.prepare(c);
    protocol::Outcome o = c.timed_by_prepare ? *c.timed_by_prepare
                                             : protocol::sample_until(rule, [&c] { return c.sample(c); });
    r.samples_ms = o.samples_ms;
    r.measurement = protocol::to_json(o);
    if (c.finish) c.finish(c);
    // The whole row: verification, reference, warm-up, samples and the last check.
    r.measurement["row_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  } catch (const WrongOutput& e) {
    r.samples_ms.clear();
    r.measurement = nullptr;
    r.verified = false;
    if (r.verification.empty()) r.verification = e.what();
    r.not_run = "wrong output: " + r.verification;
    return;
  }
  report::finalize(r, 1e9);
}

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
        throw UnknownName("unknown " + ctx.family + " variant '" + want + "' (known: " + known + ")");
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
  const protocol::Rule rule = ctx.req.rule_for(peer.gpu);
  c.prepare = [peer, rule, run = std::move(run_and_verify)](Case& me) {
    peers::PeerRun r = run(me, rule);
    me.result.scope = r.scope.empty() ? "end-to-end" : r.scope;
    me.result.extra["peer"] = peer.description;
    if (!r.version.empty()) me.result.extra["version"] = r.version;
    if (r.samples_ms.empty()) throw Error("peer " + peer.id + " returned no samples");
    protocol::Outcome o;
    o.rule = rule;
    o.samples_ms = std::move(r.samples_ms);
    o.stopped_by = r.stopped_by;
    o.min_samples = rule.min_samples;
    o.sampling_s = r.sampling_s;
    o.noise = protocol::median_noise(o.samples_ms);
    me.timed_by_prepare = std::move(o);
  };
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
  try {
    report::check_timings(rep);  // what read_report refuses, refused here too
  } catch (const Error& e) {
    throw Error("journal '" + j.path + "': " + e.what());
  }
  return rep;
}

int run(const Request& req, report::Report* out) {
  if (req.family_datasets.empty()) throw Error("bench: no family and dataset to run");
  const Filter filter(req.filter);  // a bad regex is refused before anything runs
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
  // One context per family (cases keep references to theirs); std::deque keeps them in place. A
  // plan (--plan) lists the GPU rows too where there is no GPU, marked so.
  std::deque<Context> contexts;
  std::vector<Case> cases;
  for (const auto& [fam, specs] : req.family_datasets) {
    contexts.push_back(Context{req, fam, specs, {}, gpu || req.plan_only, {}});
    family::find(fam).add_bench_cases(contexts.back(), cases);
  }
  // The plan: every case that --benchmark_filter keeps, known before the first is measured.
  std::vector<Case*> planned;
  for (Case& c : cases)
    if (filter.keeps(case_name(c))) planned.push_back(&c);
  std::vector<std::string> groups;
  for (const Case* c : planned) groups.push_back(c->result.family);
  progress::Plan plan(groups);
  if (planned.empty() && !req.plan_only) {  // nothing to measure: said before anything is measured or written
    const std::string why =
        !cases.empty() ? "no case matched the --benchmark_filter"
        : gpu          ? "no variant or peer was selected"
                       : "no variant or peer was selected that runs without a GPU";
    throw Error("bench: nothing ran: " + why + (req.out_path.empty() ? "" : "; no report written"));
  }
  if (req.plan_only) {
    std::cout << "# " << plan.summary() << "\n";
    for (const Case* c : planned)
      std::cout << case_name(*c) << (c->gpu ? (gpu ? "  gpu" : "  gpu (no GPU here: not run)") : "  cpu") << "\n";
    std::cout << std::flush;
    return 0;
  }

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
  if (gpu) {
    clocks_before = env::gpu_clock_snapshot();
    std::fprintf(stderr, "repix bench: measuring bandwidth bounds...\n");
    const timing::Bandwidths bandwidths = timing::measure_bandwidths();
    for (Context& ctx : contexts) ctx.bandwidths = bandwidths;
  } else {
    std::fprintf(stderr, "repix bench: %s; GPU variants are skipped\n", gpu_unavailable_reason().c_str());
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
  if (!planned.empty())
    std::fprintf(stderr, "repix bench: plan: %s; each stops by the rule %s\n", plan.summary().c_str(),
                 protocol::to_json(req.rule).dump().c_str());
  const auto t_start = std::chrono::steady_clock::now();
  auto elapsed_s = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count(); };

  // Google Benchmark registers the cases and prints a line for each: one iteration, whose time is
  // the row's median; the protocol (measure_case) takes the samples inside it.
  std::vector<std::string> argv_store = {"repix-bench"};
  std::vector<char*> argv;
  for (auto& a : argv_store) argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  benchmark::Initialize(&argc, argv.data());
  for (Case* cp : planned) {
    Case& c = *cp;
    benchmark::RegisterBenchmark(case_name(c).c_str(), [&c, &contexts, &req, jw, &journal_new_datasets, &plan,
                                                        &elapsed_s](benchmark::State& state) {
      const double t0 = elapsed_s();
      report::Result& res = c.result;
      try {
        measure_case(c, req.rule_for(c.gpu));
      } catch (const peers::Unsupported& e) {
        c.skipped = true;
        res.verification = std::string("skipped: ") + e.what();
      } catch (const std::exception& e) {  // nothing may escape into Google Benchmark's loop
        res.samples_ms.clear();
        res.verification = "error: " + message_of(e);
      }
      plan.row_done(elapsed_s() - t0);
      if (res.samples_ms.empty()) {
        const std::string why = res.not_run.empty() ? res.verification : res.not_run;
        std::fprintf(stderr, "repix bench: [%s] %s: %s\n", plan.line(elapsed_s()).c_str(), case_name(c).c_str(),
                     why.c_str());
        state.SkipWithError(why.c_str());
        return;
      }
      for (auto _ : state) state.SetIterationTime(res.median_ms * 1e-3);
      state.counters["samples"] = static_cast<double>(res.samples_ms.size());
      state.counters["verified"] = res.verified ? 1 : 0;
      const double gbs = bound_gbs(contexts.front(), res.bound);
      if (gbs > 0 && c.bytes_per_item > 0) res.pct_of_bound = 100.0 * res.throughput * c.bytes_per_item / gbs;
      if (jw) {
        journal_new_datasets();
        jw->append("result", case_name(c), report::to_json(res));
      }
      std::fprintf(stderr, "repix bench: [%s] %s: %s ms, %zu samples, stopped by %s%s\n", plan.line(elapsed_s()).c_str(),
                   case_name(c).c_str(), report::format_ms(res.median_ms).c_str(), res.samples_ms.size(),
                   field_or(res.measurement, "stopped_by", std::string("?")).c_str(),
                   res.noise_above_target() ? " (noise above the target)" : "");
    })->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
  }
  gbench::Console console;  // the library's console output minus its DEBUG-build warning (gbench.hpp)
  benchmark::RunSpecifiedBenchmarks(&console);
  benchmark::Shutdown();

  bool all_ok = true;
  std::size_t skipped = 0;
  for (Case* cp : planned) {
    const report::Result& r = cp->result;
    if (r.samples_ms.empty()) {  // said as it ended (above)
      skipped += cp->skipped;
      if (!cp->skipped) all_ok = false;  // an error or a wrong output
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
    const std::string why = skipped == planned.size() ? "every case was skipped (above)" : "every case failed (above)";
    throw Error("bench: nothing ran: " + why + (req.out_path.empty() ? "" : "; no report written"));
  }
  std::fprintf(stderr, "repix bench: %zu rows measured in %s (%s)\n", planned.size(), progress::duration(elapsed_s()).c_str(),
               plan.time_per_group().c_str());
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
