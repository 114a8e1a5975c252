// FamilyOf<V>: the generic machinery of every family's harness, written once, over the family's
// Variant type V (and through it its DevicePlan, Options, Result and Stats; algorithms/core/
// variant.hpp). An
// adapter (harness/families/<family>/adapter.cpp) derives from it and supplies only what it
// knows: the registry, the declared options, how a dataset spec becomes the inputs, the
// reference and how an output is checked against it, the stats as JSON, and the `run` command's
// inputs and outputs. The bench cases (kernel, end-to-end, with-io, peers: verified before they
// are timed, the timed path's output verified again), `repix profile` and the option handling of
// `repix run` are here.
#pragma once
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "baselines/peers.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/find_by_name.hpp"
#include "core/gpu.hpp"
#include "core/host_limits.hpp"
#include "core/nvtx.hpp"
#include "core/variant.hpp"
#include "datasets/datasets.hpp"
#include "datasets/io.hpp"
#include "datasets/spec.hpp"
#include "harness/bench.hpp"
#include "harness/family.hpp"
#include "harness/options.hpp"
#include "harness/outputs.hpp"
#include "harness/report.hpp"

namespace repix::family {

template <class V>
class FamilyOf : public Family {
 public:
  using Variant = V;
  using Plan = typename decltype(V::make_plan)::result_type::element_type;
  using Options = typename Plan::options_type;
  using Result = typename Plan::result_type;
  using Stats = typename Plan::stats_type;
  using Option = options::Option<Options>;
  // A call's host inputs, in the family's input order (all of one type and shape).
  using Inputs = std::vector<HostImage>;

  // ---- Family ----------------------------------------------------------------------------------

  std::vector<registry::VariantInfo> variants() const override {
    std::vector<registry::VariantInfo> out;
    for (const Variant& v : registry()) out.push_back({name(), v.id, v.gpu, v.step, v.description});
    return out;
  }

  std::vector<options::Spec> option_specs() const override {
    std::vector<options::Spec> out;
    for (const Option& o : option_table()) out.push_back(o.spec);
    return out;
  }

  // "run <family> <synopsis> [--option ...]..." with every option `repix run` takes, then the
  // summary: the lines `repix help` prints.
  std::string run_usage() const override {
    std::string s = "run " + name() + " " + run_synopsis(), line;
    for (const Option& o : option_table()) {
      if (!(o.spec.commands & options::kRun)) continue;
      const std::string u = o.spec.usage();
      if (s.size() - s.rfind('\n') + u.size() > 100) s += "\n       ";
      s += " " + u;
    }
    return s + "\n        " + run_summary();
  }

  int run(const cli::Args& a) const override {
    std::vector<std::string> known = options::names(option_table(), options::kRun);
    for (const auto& k : run_arguments()) known.push_back(k);
    known.push_back("variant");
    a.only(known);
    if (a.positional.size() != 1)
      throw cli::UsageError("run takes the family name (e.g. `repix run " + name() + " ...`)");
    const Options opt = options::parse(option_table(), a, options::kRun);
    // Every output checked before anything is computed, then written into one OutputSet: all of
    // them replace their files once every one is written, or none does.
    std::vector<cli::OutputArg> outputs = run_outputs();
    std::vector<std::pair<std::string, std::string>> inputs;
    for (const auto& k : run_arguments()) {
      auto out = std::find_if(outputs.begin(), outputs.end(), [&](const cli::OutputArg& o) { return o.option == k; });
      if (out != outputs.end()) out->path = a.get(k);
      else if (a.has(k)) inputs.emplace_back(k, a.get(k));
    }
    cli::check_outputs(outputs, inputs);
    OutputSet set;
    const int code = run_command(a, opt);
    set.commit();
    return code;
  }

  // NVTX (core/nvtx.hpp): a "dataset" range, then a warm-up run under "warmup", then each timed
  // run under the ranges <family> > <variant> with the variant's phases inside, so that
  // `--nvtx-include "repix@<family>/<variant>/" --nvtx-exclude "repix@warmup/"` selects the timed
  // runs only. Scope "kernel" (the default for a GPU variant with a device plan, on a GPU): the
  // bench's kernel-scope runs, plan set-up and uploads under "setup" (outside the variant's
  // ranges), the L2 flush before each run outside them too. Scope "end-to-end": whole runs.
  int profile(const cli::Args& a) const override {
    std::vector<std::string> known = options::names(option_table(), options::kProfile);
    for (const char* k : {"variant", "dataset", "iterations", "scope"}) known.push_back(k);
    a.only(known);
    if (a.positional.size() != 1) throw cli::UsageError("profile takes the family name");
    const Variant& v = find_variant(a.need("variant"));
    const Options opt = timed_options(options::parse(option_table(), a, options::kProfile));
    const int iterations = a.get_int("iterations", 5, 1);
    const bool plan = v.gpu && v.make_plan && gpu_available();
    const std::string scope = a.get("scope", plan ? "kernel" : "end-to-end");
    if (scope != "kernel" && scope != "end-to-end")
      throw cli::UsageError("--scope expects kernel or end-to-end, got '" + scope + "'");
    if (scope == "kernel" && !(v.gpu && v.make_plan))
      throw cli::UsageError("--scope kernel needs a GPU variant with a device plan (" + name() + "/" + v.id + " has none)");
    if (scope == "kernel" && !plan) throw Error("--scope kernel: no GPU here");
    Inputs in;
    {
      nvtx::Range r("dataset");
      in = load_for_profile(a.need("dataset"), v.gpu && gpu_available());
    }
    if (scope == "kernel") {
      bench::KernelTimer timer;
      std::unique_ptr<Plan> p = set_up_plan(v, in, opt, timer);
      Plan* raw = p.get();
      timer.start([raw](const repix::DeviceInputs& d, cudaStream_t s) { raw->compute(d, s); }, 1, range_of(v));
      for (int i = 0; i < iterations; ++i) timer.sample();
    } else {
      {
        nvtx::Range r("warmup");
        run_ranged(v, in, opt);
      }
      for (int i = 0; i < iterations; ++i) run_ranged(v, in, opt);
    }
    if (v.gpu) REPIX_CUDA(cudaDeviceSynchronize());
    std::fprintf(stderr, "repix profile: %d %s runs of %s/%s done\n", iterations, scope.c_str(), name().c_str(),
                 v.id.c_str());
    return 0;
  }

  void add_bench_cases(bench::Context& ctx, std::vector<bench::Case>& cases) const override {
    for (const std::string& spec : ctx.specs) check_bench_dataset(spec);
    auto state = std::make_shared<State>();
    state->options = options::parse(option_table(), ctx.req.family_options, options::kBench);
    std::vector<const Variant*> chosen = bench::chosen_variants(ctx, registry());
    const std::vector<peers::Peer> peer_list = bench::choose_peers(ctx);
    for (const std::string& spec : ctx.specs) {
      for (const Variant* v : chosen) {
        if (v->gpu && v->make_plan && bench::wants_scope(ctx, "kernel")) cases.push_back(kernel_case(ctx, cases, state, *v, spec));
        if (bench::wants_scope(ctx, "end-to-end")) cases.push_back(end_to_end_case(ctx, cases, state, *v, spec));
        if (supports_with_io() && bench::wants_scope(ctx, "with-io"))
          cases.push_back(with_io_case(ctx, cases, state, *v, spec));
      }
      for (const peers::Peer& p : peer_list) {
        std::string why_not = peer_skip_reason(p, spec, state->options);
        if (why_not.empty() && !bench::names_peer(ctx, p.id)) {
          why_not = peer_slow_reason(p, spec, state->options);
          if (!why_not.empty()) why_not += " (--variants peer:" + p.id + " times it anyway)";
        }
        if (!why_not.empty()) {
          std::fprintf(stderr, "repix bench: peer %s left out on %s: %s\n", p.id.c_str(), spec.c_str(), why_not.c_str());
          continue;
        }
        add_peer_case(ctx, cases, state, p, spec);
      }
    }
  }

  std::uint64_t host_bytes(const std::string& spec) const override {
    std::uint64_t held = 0, working = 0, outputs = 0;
    for (const std::string& s : input_specs(spec)) {
      const datasets::Spec in = datasets::Spec::parse(s);
      const std::uint64_t bytes = datasets::image_bytes(in);  // 0: an image file, not sized
      held += bytes;
      working = std::max(working, datasets::peak_host_bytes(in) - bytes);
      if (outputs == 0 && bytes > 0) {  // the reference's output and a variant's
        const DType dtype = datasets::spec_dtype(in);
        outputs = 2 * output_bytes(static_cast<std::int64_t>(bytes / dtype_size(dtype)), dtype);
      }
    }
    return held + working + outputs;
  }

  std::unique_ptr<Problem> problem(const std::string& spec, const cli::Args& base) const override {
    require_host_memory(host_bytes(spec), name() + " on " + spec);
    auto p = std::make_unique<ProblemOf>();
    p->spec_ = datasets::Spec::parse(spec).str();
    p->base = options::parse(option_table(), base, options::kRun | options::kProfile | options::kBench);
    p->inputs = load(spec, gpu_available());  // pinned where a GPU exists: full-speed uploads
    return p;
  }

  report::Result measure(Problem& problem, const std::string& variant, const std::string& scope,
                         const bench::Reps& reps, const cli::Args& given) const override {
    ProblemOf& p = static_cast<ProblemOf&>(problem);
    report::Result r;
    r.family = name();
    r.variant = variant;
    r.dataset = p.spec();
    r.scope = scope;
    r.unit = unit();
    r.items = items(p.inputs);
    const Variant* v = nullptr;
    for (const Variant& x : registry())
      if (x.id == variant) v = &x;
    if (!v) {
      r.not_run = "absent: " + name() + " has no variant `" + variant + "` in this build";
      return r;
    }
    r.bound = bound(*v, scope);
    if (v->gpu && !gpu_available()) {
      r.not_run = "no GPU";
      return r;
    }
    if (scope == "kernel" && !v->make_plan) {
      r.not_run = "skipped: no device plan, end-to-end only";
      return r;
    }
    try {
      Options opt = p.base;
      for (const Option& o : option_table())
        if (given.has(o.spec.name)) o.set(opt, o.spec.check(given.get(o.spec.name)));
      if (scope == "kernel") measure_kernel(p, *v, opt, reps, r);
      else measure_host(p, *v, opt, reps, r);
      if (!r.samples_ms.empty()) report::finalize(r, 1e9);
    } catch (const std::exception& e) {  // GPU out of memory at the largest sizes, for one
      r.samples_ms.clear();
      r.verified = false;
      r.not_run = std::string("error: ") + e.what();
    }
    return r;
  }

 protected:
  // ---- what the adapter supplies ---------------------------------------------------------------

  virtual const std::vector<Variant>& registry() const = 0;
  virtual const std::vector<Option>& option_table() const = 0;
  // The variant every other is checked against.
  virtual std::string reference_id() const = 0;
  // The variant that computes the reference on these inputs: reference_id(), or (where the
  // reference is too slow for large inputs) a variant the family's tests prove bit-identical to it.
  // The bench says which one ran.
  virtual std::string reference_for(const Inputs&) const { return reference_id(); }
  // Throughput unit of the bench ("GVox/s", "GPx/s"): items per second / 1e9.
  virtual std::string unit() const = 0;
  // The dataset specs of a dataset's inputs, in the family's input order (default: the dataset
  // itself, one input).
  virtual std::vector<std::string> input_specs(const std::string& spec) const { return {spec}; }
  // The inputs a dataset spec gives (input_specs, each generated), pinned where asked (and a GPU
  // exists).
  virtual Inputs load(const std::string& spec, bool pinned) const {
    Inputs in;
    for (const std::string& s : input_specs(spec)) in.push_back(datasets::generate(datasets::Spec::parse(s), pinned));
    return in;
  }
  // Host bytes of a run's output on an input of `elements` elements of `dtype` (default 0: an
  // output much smaller than its input); host_bytes() counts two (the reference's and a variant's).
  virtual std::uint64_t output_bytes(std::int64_t /*elements*/, DType) const { return 0; }
  // The report's entries for the inputs of `spec`, once the reference exists.
  virtual std::vector<report::DatasetInfo> describe(const std::string& spec, const Inputs& in,
                                                    const Result& reference) const = 0;
  virtual Result run_variant(const Variant& v, const Inputs& in, const Options& opt) const = 0;
  virtual Stats stats_of(const Result& r) const = 0;
  // A run's own counters as JSON (one serialisation per Stats type).
  virtual nlohmann::json stats_json(const Stats&) const { return nlohmann::json::object(); }
  // `got` against the reference. `what` names the output checked ("" for the verifying run,
  // "kernel-scope output", "with-io output").
  virtual Verdict check(const Variant& v, const Inputs& in, const Result& reference, const Result& got,
                        const std::string& what) const = 0;
  // The `repix run` command once its options are parsed: `run_arguments()` are its other options
  // (inputs, outputs, --json); it chooses the variant, loads, runs and writes. The synopsis
  // names them ("--variant V --input F --output OUT.csv [--json OUT.json]"), the summary says in
  // a line what the command writes.
  virtual std::vector<std::string> run_arguments() const = 0;
  // Which of them are outputs, with the extensions and format each is written in (the rest are
  // inputs): checked together before the run (harness/outputs.hpp).
  virtual std::vector<cli::OutputArg> run_outputs() const = 0;
  virtual std::string run_synopsis() const = 0;
  virtual std::string run_summary() const = 0;
  virtual int run_command(const cli::Args& a, const Options& opt) const = 0;

  // Optional knowledge (defaults: none).
  // Refuses a bench dataset before anything is generated (reconstruct: marker specs only).
  virtual void check_bench_dataset(const std::string& /*spec*/) const {}
  // The inputs of `repix profile --dataset SPEC`.
  virtual Inputs load_for_profile(const std::string& spec, bool pinned) const { return load(spec, pinned); }
  // Options of the verifying run (full output) and of timed runs (edt: no sites).
  virtual Options verifying_options(Options o) const { return o; }
  virtual Options timed_options(Options o) const { return o; }
  // Items one run processes, and bytes it must read per item (for % of the read bound; 0: none).
  virtual double items(const Inputs& in) const { return static_cast<double>(in.at(0).size()); }
  virtual double bytes_per_item(const Inputs&) const { return 0; }
  // The bound a case is compared with ("dram-read", "h2d-pinned", "": none).
  virtual std::string bound(const Variant&, const std::string& /*scope*/) const { return ""; }
  // A case's `extra`: the verifying run's stats, the options that matter.
  virtual nlohmann::json extra(const Variant&, const std::string& /*scope*/, const Stats& /*verifying*/,
                               const Options&) const {
    return nlohmann::json::object();
  }
  // What a kernel-scope case adds to `extra` after its samples (the timed output's own counters).
  virtual void kernel_extra(nlohmann::json& /*extra*/, const Result& /*timed*/, const Plan& /*plan*/,
                            const Options&) const {}
  // An end-to-end sample's own account of where its time went, taken right after the timed run
  // (ECC's --timeline: its EndToEndTimeline), or null: none. Each sample's goes into
  // extra["sample_breakdown"], and the median of each numeric field into extra["breakdown_median"].
  virtual nlohmann::json sample_breakdown(const Result& /*timed*/) const { return nullptr; }
  // with-io scope: the input read from an .npy file inside every sample.
  virtual bool supports_with_io() const { return false; }
  virtual Result run_from_file(const Variant& v, const std::string& path, const Options& opt, bool pinned) const {
    return run_variant(v, load_files({path}, pinned), opt);
  }
  // Peers: their parameters, their output against the reference, what their results add to `extra`.
  virtual nlohmann::json peer_params(const Options&) const { return nlohmann::json::object(); }
  // Why peer `p` cannot be compared on dataset `spec` (its output is wrong there, or differs from
  // ours by its own definition): always left out. Empty: it runs. Said on stderr; not a result.
  virtual std::string peer_skip_reason(const peers::Peer&, const std::string& /*spec*/, const Options&) const {
    return "";
  }
  // Why peer `p` would take minutes or hours a call on `spec`: left out unless the bench names it
  // (--variants peer:ID). Said on stderr; not a result.
  virtual std::string peer_slow_reason(const peers::Peer&, const std::string& /*spec*/, const Options&) const {
    return "";
  }
  virtual Verdict check_peer(const peers::Peer& p, const Inputs&, const Result&, HostImage) const {
    throw Error("internal: family " + name() + " has peer " + p.id + " but no check_peer");
  }
  virtual nlohmann::json peer_extra(const Options&) const { return nlohmann::json::object(); }

  // ---- helpers for adapters ----------------------------------------------------------------------

  const Variant& find_variant(const std::string& id) const {
    return find_by_name(registry(), id, name() + " variant", [](const Variant& v) { return v.id; });
  }
  // The variant's NVTX path, opened as the ranges <family> > <variant> (core/nvtx.hpp).
  std::string range_of(const Variant& v) const { return name() + "/" + v.id; }
  // One run of the variant inside its ranges: every run the harness makes goes through here, so
  // every family's runs carry the same names.
  Result run_ranged(const Variant& v, const Inputs& in, const Options& opt) const {
    nvtx::Range r(range_of(v).c_str());
    return run_variant(v, in, opt);
  }
  // The kernel scope's set-up, under the NVTX range "setup": the plan made and set up for `in`'s
  // type and shape, the inputs uploaded to `timer`'s device copies (done when this returns).
  std::unique_ptr<Plan> set_up_plan(const Variant& v, const Inputs& in, const Options& opt,
                                    bench::KernelTimer& timer) const {
    nvtx::Range r("setup");
    std::unique_ptr<Plan> plan = v.make_plan();
    plan->setup({in.at(0).dtype(), in.at(0).shape()}, opt, timer.stream());
    std::vector<const HostImage*> host;
    for (const HostImage& img : in) host.push_back(&img);
    timer.upload(host);
    REPIX_CUDA(cudaStreamSynchronize(timer.stream()));
    return plan;
  }
  static Inputs load_files(const std::vector<std::string>& paths, bool pinned) {
    Inputs in;
    for (const auto& p : paths) in.push_back(datasets::read_npy(p, pinned));
    return in;
  }
  static double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }

 private:
  struct ProblemOf final : Problem {
    std::string spec_;
    Options base;
    Inputs inputs;
    std::optional<Result> reference;
    const std::string& spec() const override { return spec_; }
  };

  const Result& reference_of(ProblemOf& p) const {
    if (!p.reference) p.reference = run_ranged(find_variant(reference_for(p.inputs)), p.inputs, verifying_options(p.base));
    return *p.reference;
  }
  // The check of a measurement: keeps the first check's text unless a later one fails;
  // verified while every check passed; the output's counters as the result's extra.
  void record_check(report::Result& r, const Verdict& v, bool first, const Stats& stats) const {
    if (!v.ok || first) {
      r.verification = v.text;
      r.errors = v.errors;
    }
    r.verified = v.ok && (first || r.verified);
    r.extra = stats_json(stats);
  }

  // Host clock. GPU variants: `reps.warmup` untimed runs with the full output (the first one
  // checked with it, as the bench's verifying run), then `reps.gpu_samples` timed runs with the
  // timed options, the first of them checked too. CPU variants: up to `reps.cpu_samples` timed
  // runs (stopping once they add up to `reps.cpu_budget_ms`), the first checked.
  void measure_host(ProblemOf& p, const Variant& v, const Options& opt, const bench::Reps& reps,
                    report::Result& r) const {
    const int warmup = v.gpu ? reps.warmup : 0;
    const int samples = v.gpu ? reps.gpu_samples : reps.cpu_samples;
    const double budget = v.gpu ? 0 : reps.cpu_budget_ms;
    const bool makes_reference = v.id == reference_id() && !p.reference;
    double spent = 0;
    for (int i = 0; i < warmup + samples; ++i) {
      const bool verifying = i < warmup;
      std::optional<nvtx::Range> warm;  // the untimed runs are the warm-up
      if (verifying) warm.emplace("warmup");
      const auto t0 = std::chrono::steady_clock::now();
      Result out = run_ranged(v, p.inputs, verifying ? verifying_options(opt) : timed_options(opt));
      const double ms = ms_since(t0);
      warm.reset();
      if (!verifying) {
        r.samples_ms.push_back(ms);
        spent += ms;
      }
      if (i == 0 && makes_reference) {
        r.verified = true;  // the reference itself (checked against an independent oracle in tests/)
        r.verification = "the reference";
        r.extra = stats_json(stats_of(out));
        p.reference = std::move(out);
      } else if (i == 0 || i == warmup) {
        record_check(r, check(v, p.inputs, reference_of(p), out, verifying ? "" : "timed output"), i == 0,
                     stats_of(out));
        if (!r.verified && r.samples_ms.empty()) {
          r.not_run = "wrong output: " + r.verification;  // only untimed runs happened
          return;
        }
        if (!r.verified) return;  // a wrong output is not timed further
      }
      if (budget > 0 && spent >= budget) return;
    }
  }

  // The bench's kernel timer (CUDA events, L2 flushed before each sample) after `reps.warmup`
  // untimed runs; the plan's output is checked after the warm-up (a wrong one is not timed) and
  // again after the samples.
  void measure_kernel(ProblemOf& p, const Variant& v, const Options& opt, const bench::Reps& reps,
                      report::Result& r) const {
    const Result& ref = reference_of(p);
    bench::KernelTimer timer;
    std::unique_ptr<Plan> plan = set_up_plan(v, p.inputs, timed_options(opt), timer);
    Plan* raw = plan.get();
    timer.start([raw](const repix::DeviceInputs& d, cudaStream_t s) { raw->compute(d, s); }, reps.warmup,
                range_of(v));
    Result out = plan->result(timer.stream());
    record_check(r, check(v, p.inputs, ref, out, "kernel-scope output"), true, stats_of(out));
    if (!r.verified) {
      r.not_run = "wrong output: " + r.verification;
      return;
    }
    nlohmann::json per_sample = nlohmann::json::array();
    for (int i = 0; i < reps.gpu_samples; ++i) {
      r.samples_ms.push_back(timer.sample());
      if (reps.sample_stats) per_sample.push_back(stats_json(plan->stats()));
    }
    out = plan->result(timer.stream());
    record_check(r, check(v, p.inputs, ref, out, "kernel-scope output"), false, stats_of(out));
    if (reps.sample_stats) r.extra["sample_stats"] = per_sample;
  }

  // The current dataset's inputs and reference (one dataset at a time: inputs are large), and
  // each variant's verdict on it, shared by that variant's scopes.
  struct State {
    Options options;
    std::string spec;
    Inputs inputs;
    std::optional<Result> reference;
    std::map<std::string, Verdict> verdicts;  // variant|spec
    std::map<std::string, Stats> stats;       // variant|spec: of the verifying run
  };

  const Inputs& inputs_of(State& s, const std::string& spec) const {
    if (s.spec != spec || s.inputs.empty()) {
      s.inputs.clear();  // free the previous inputs first
      s.reference.reset();
      nvtx::Range r("dataset");
      // Pinned where a GPU exists, so end-to-end uploads run at full PCIe speed.
      s.inputs = load(spec, gpu_available());
      s.spec = spec;
    }
    return s.inputs;
  }
  const Result& reference_of(bench::Context& ctx, State& s, const std::string& spec) const {
    const Inputs& in = inputs_of(s, spec);
    if (!s.reference) {
      const std::string ref = reference_for(in);
      std::fprintf(stderr, "repix bench: reference (%s) on %s...\n", ref.c_str(), spec.c_str());
      s.reference = run_ranged(find_variant(ref), in, verifying_options(s.options));
      for (const auto& d : describe(spec, in, *s.reference)) bench::record_dataset(ctx, d);
    }
    return *s.reference;
  }
  // Runs the variant once with the full output and checks it; kept for its other scopes.
  const Verdict& verify(bench::Context& ctx, State& s, const Variant& v, const std::string& spec) const {
    const std::string key = v.id + "|" + spec;
    const auto it = s.verdicts.find(key);
    if (it != s.verdicts.end()) return it->second;
    const Result& ref = reference_of(ctx, s, spec);
    nvtx::Range warm("warmup");  // the untimed verifying run is the case's warm-up
    const Result got = run_ranged(v, s.inputs, verifying_options(s.options));
    s.stats[key] = stats_of(got);
    Verdict verdict = check(v, s.inputs, ref, got, "");
    // Say which variant computed the reference where it was not the reference variant itself.
    const std::string by = reference_for(s.inputs);
    if (by != reference_id()) verdict.text += " (reference computed by " + by + ", tested identical to " + reference_id() + ")";
    return s.verdicts[key] = std::move(verdict);
  }
  static void apply(report::Result& r, const Verdict& v) {
    r.verified = v.ok;
    r.verification = v.text;
    r.errors = v.errors;
  }
  bench::Case base_case(const Variant& v, const std::string& spec, const std::string& scope) const {
    bench::Case c;
    c.gpu = v.gpu;
    c.result.family = name();
    c.result.variant = v.id;
    c.result.dataset = spec;
    c.result.scope = scope;
    c.result.unit = unit();
    c.result.bound = bound(v, scope);
    return c;
  }
  // What every case of a variant does first: verify (once per dataset), then its identity fields.
  void prepare_common(bench::Context& ctx, State& s, const Variant& v, const std::string& spec,
                      bench::Case& me) const {
    apply(me.result, verify(ctx, s, v, spec));
    me.result.extra = extra(v, me.result.scope, s.stats[v.id + "|" + spec], s.options);
    me.result.items = items(s.inputs);
    me.bytes_per_item = bytes_per_item(s.inputs);
  }

  bench::Case kernel_case(bench::Context& ctx, std::vector<bench::Case>& cases, const std::shared_ptr<State>& state,
                          const Variant& v, const std::string& spec) const {
    bench::Case c = base_case(v, spec, "kernel");
    struct Kernel {
      std::unique_ptr<Plan> plan;
      std::unique_ptr<bench::KernelTimer> timer;
    };
    auto k = std::make_shared<Kernel>();
    const std::size_t index = cases.size();
    c.prepare = [this, &ctx, &cases, index, state, k, &v, spec] {
      bench::Case& me = cases[index];
      prepare_common(ctx, *state, v, spec, me);
      const Inputs& in = state->inputs;
      k->timer = std::make_unique<bench::KernelTimer>();
      k->plan = set_up_plan(v, in, timed_options(state->options), *k->timer);
      Plan* plan = k->plan.get();
      k->timer->start([plan](const repix::DeviceInputs& d, cudaStream_t s) { plan->compute(d, s); }, ctx.req.warmup,
                      range_of(v));
    };
    c.sample = [k] { return k->timer->sample(); };
    c.finish = [this, &cases, index, state, k, &v] {
      bench::Case& me = cases[index];
      // The output of the timed path itself must be right, not only the verifying run's.
      const Result got = k->plan->result(k->timer->stream());
      const Verdict again = check(v, state->inputs, *state->reference, got, "kernel-scope output");
      if (!again.ok) apply(me.result, again);
      kernel_extra(me.result.extra, got, *k->plan, state->options);
      k->plan.reset();
      k->timer.reset();
    };
    return c;
  }

  bench::Case end_to_end_case(bench::Context& ctx, std::vector<bench::Case>& cases,
                              const std::shared_ptr<State>& state, const Variant& v, const std::string& spec) const {
    bench::Case c = base_case(v, spec, "end-to-end");
    const std::size_t index = cases.size();
    auto breakdowns = std::make_shared<nlohmann::json>(nlohmann::json::array());
    c.prepare = [this, &ctx, &cases, index, state, &v, spec, breakdowns] {
      breakdowns->clear();
      prepare_common(ctx, *state, v, spec, cases[index]);
    };
    c.sample = [this, state, &v, breakdowns] {
      const Options opt = timed_options(state->options);
      const auto t0 = std::chrono::steady_clock::now();
      const Result out = run_ranged(v, state->inputs, opt);
      const double ms = ms_since(t0);
      nlohmann::json b = sample_breakdown(out);
      if (!b.is_null()) breakdowns->push_back(std::move(b));
      return ms;
    };
    c.finish = [&cases, index, breakdowns] {
      if (breakdowns->empty()) return;
      nlohmann::json& extra = cases[index].result.extra;
      extra["sample_breakdown"] = *breakdowns;
      extra["breakdown_median"] = report::median_fields(*breakdowns);
    };
    return c;
  }

  // The dataset is written once to a temporary .npy (untimed); each sample reads it back and runs
  // the variant. The file usually sits in the OS page cache after the write (dropping caches
  // needs root): this measures the read path (syscalls, copies, pinning), not the disk.
  bench::Case with_io_case(bench::Context& ctx, std::vector<bench::Case>& cases, const std::shared_ptr<State>& state,
                           const Variant& v, const std::string& spec) const {
    bench::Case c = base_case(v, spec, "with-io");
    struct Io {
      std::string path;
      std::unique_ptr<RemoveOnSignal> guard;  // SIGINT/SIGTERM while it exists remove it too
      std::optional<Result> last;
      ~Io() {  // also when the case ends early (an exception between prepare and finish)
        if (!path.empty()) std::remove(path.c_str());
      }
    };
    auto io = std::make_shared<Io>();
    const std::size_t index = cases.size();
    c.prepare = [this, &ctx, &cases, index, state, io, &v, spec] {
      bench::Case& me = cases[index];
      prepare_common(ctx, *state, v, spec, me);
      const HostImage& img = state->inputs.at(0);
      char file[96];  // the pid keeps concurrent runs on the same dataset apart
      std::snprintf(file, sizeof file, "repix-with-io-%ld-%016llx.npy", static_cast<long>(::getpid()),
                    static_cast<unsigned long long>(img.content_hash()));
      io->path = (std::filesystem::temp_directory_path() / file).string();
      io->guard = std::make_unique<RemoveOnSignal>(io->path);
      datasets::write_npy(img, io->path);
    };
    c.sample = [this, state, io, &v, gpu = ctx.gpu] {
      const auto t0 = std::chrono::steady_clock::now();
      nvtx::Range r(range_of(v).c_str());  // the file read is part of the with-io run
      io->last = run_from_file(v, io->path, timed_options(state->options), gpu && v.gpu);
      return ms_since(t0);
    };
    c.finish = [this, &cases, index, state, io, &v] {
      bench::Case& me = cases[index];
      const Verdict again = check(v, state->inputs, *state->reference, *io->last, "with-io output");
      if (!again.ok) apply(me.result, again);
      std::error_code ec;
      std::filesystem::remove(io->path, ec);
      io->guard.reset();
      io->last.reset();
    };
    return c;
  }

  void add_peer_case(bench::Context& ctx, std::vector<bench::Case>& cases, const std::shared_ptr<State>& state,
                     const peers::Peer& p, const std::string& spec) const {
    bench::add_peer_case(ctx, cases, p, spec, unit(), [this, &ctx, state, p, spec](bench::Case& me, int n, int warmup) {
      const Result& ref = reference_of(ctx, *state, spec);
      const Inputs& in = state->inputs;
      me.result.items = items(in);
      me.bytes_per_item = bytes_per_item(in);
      std::vector<const HostImage*> host;
      for (const HostImage& img : in) host.push_back(&img);
      peers::PeerRun run = peers::run(p, host, peer_params(state->options), n, warmup);
      const nlohmann::json added = peer_extra(state->options);  // named: items() of a temporary would dangle
      for (const auto& [k, value] : added.items()) me.result.extra[k] = value;
      apply(me.result, check_peer(p, in, ref, std::move(run.output)));
      return run;
    });
  }
};

}  // namespace repix::family
