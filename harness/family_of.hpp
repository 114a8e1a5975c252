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
#include <functional>
#include <map>
#include <set>
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
#include "core/plan_end_to_end.hpp"
#include "core/reuse_cache.hpp"
#include "core/variant.hpp"
#include "datasets/datasets.hpp"
#include "datasets/io.hpp"
#include "datasets/spec.hpp"
#include "harness/bench.hpp"
#include "harness/distributed/comm.hpp"
#include "harness/distributed/driver.hpp"
#include "harness/family.hpp"
#include "harness/json_text.hpp"
#include "harness/options.hpp"
#include "harness/outputs.hpp"
#include "harness/progress.hpp"
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
    for (const Variant& v : registry())
      out.push_back({name(), v.id, v.gpu, v.step, v.description, v.gpu && static_cast<bool>(v.make_plan)});
    return out;
  }

  // One note line on standard error for each option given that the --variant named does not read.
  void note_unread_options(const cli::Args& a, options::Command command) const {
    if (!a.has("variant")) return;
    for (const Option& o : option_table())
      if ((o.spec.commands & command) && a.has(o.spec.name)) {
        const std::string note = options::unread_note(o.spec, {a.get("variant")});
        if (!note.empty()) std::fprintf(stderr, "%s\n", note.c_str());
      }
  }

  std::vector<options::Spec> option_specs() const override {
    std::vector<options::Spec> out;
    for (const Option& o : option_table()) out.push_back(o.spec);
    return out;
  }

  // "run <family> <synopsis> [--option ...]..." with every option `repix run` takes, then the
  // summary: the lines `repix help` prints.
  std::string run_usage() const override {
    const std::string synopsis = run_synopsis();
    std::string s = "run " + name() + " " + synopsis, line;
    for (const Option& o : option_table()) {
      if (!(o.spec.commands & options::kRun)) continue;
      if ((synopsis + " ").find("--" + o.spec.name + " ") != std::string::npos) continue;  // named already (--area A)
      const std::string u = o.spec.usage();
      if (s.size() - s.rfind('\n') + u.size() > 100) s += "\n       ";
      s += " " + u;
    }
    if (has_distributed_run())
      s += "\n        [--distributed]  under mpirun: every rank reads and computes its part (docs/distributed.md)";
    return s + "\n        " + run_summary();
  }

  // Without any of its outputs named (`repix run ecc --input uniform:512x512:levels=4`), a run
  // writes its --json record to standard output: the result's summary where a user sees it.
  int run(const cli::Args& given) const override {
    // Under mpirun every rank checks the same arguments: rank 0 alone says what is wrong.
    if (given.get("distributed", "0") != "0") return distributed::said_once([&] { return run_checked(given); });
    return run_checked(given);
  }

  int run_checked(const cli::Args& given) const {
    cli::Args a = given;
    const std::vector<cli::OutputArg> declared = run_outputs();
    if (std::none_of(declared.begin(), declared.end(), [&](const cli::OutputArg& o) { return a.has(o.option); }) &&
        std::any_of(declared.begin(), declared.end(), [](const cli::OutputArg& o) { return o.option == "json"; }))
      a.options.emplace("json", "-");
    std::vector<std::string> known = options::names(option_table(), options::kRun);
    for (const auto& k : run_arguments()) known.push_back(k);
    known.push_back("variant");
    known.push_back("distributed");
    a.only(known);
    const bool distributed = a.get("distributed", "0") != "0";
    if (distributed && !has_distributed_run())
      throw Error(name() + " has no distributed run yet (`repix run FAMILY --distributed` runs: " +
                  distributed_families() + ")");
    if (a.positional.size() != 1)  // the family, and a stray word (a value whose option was lost)
      throw cli::UsageError("run " + name() + " takes options only; '" + a.positional.back() +
                            "' is not one (an option's value given without its --name?)");
    const Options opt = options::parse(option_table(), a, options::kRun);
    note_unread_options(a, options::kRun);
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
    int code = 0;
    {
      // Under mpirun, rank 0 alone says that the run goes on.
      std::optional<progress::Heartbeat> beat;
      if (!distributed || distributed::Comm::world().root())
        beat.emplace("repix run: " + name() + "/" + a.get("variant", "(default variant)") + " still running");
      code = distributed ? distributed::run(*distributed_job(a, opt), a.get("json")) : run_command(a, opt);
    }
    set.commit();
    return code;
  }

  int bench_distributed(const cli::Args& given, const std::string& command) const override {
    return distributed::said_once([&] {
      if (!has_distributed_run())
        throw Error(name() + " has no distributed run yet (`repix bench --distributed` runs: " +
                    distributed_families() + ")");
      cli::Args a = given;
      std::vector<std::string> known = options::names(option_table(), options::kRun);
      const std::vector<cli::OutputArg> outputs = run_outputs();
      for (const auto& k : run_arguments())
        if (std::none_of(outputs.begin(), outputs.end(), [&](const cli::OutputArg& o) { return o.option == k; }))
          known.push_back(k);  // the run's inputs; its outputs are not written by a bench
      known.insert(known.end(), {"variant", "distributed", "family", "samples", "warmups", "out"});
      a.only(known);
      const Options opt = options::parse(option_table(), a, options::kRun);
      distributed::BenchRequest request;
      request.samples = a.get_int("samples", 10, 1, 100000);
      request.warmups = a.get_int("warmups", 1, 0, 1000);
      request.out = a.get("out");
      request.command = command;
      return distributed::bench(*distributed_job(a, opt), request);
    });
  }

  // The measurement protocol (bench::measure_case) with a fixed count of samples and no noise
  // target: the output verified, one warm-up, `--iterations` timed runs, the last one verified.
  // NVTX (core/nvtx.hpp): a "dataset" range, the reference (where another variant computes it)
  // under "reference", the verifying warm-up under "warmup", then each timed run under the ranges
  // <family> > <variant> with the variant's phases inside, so that `--nvtx-include
  // "repix@<family>/<variant>/" --nvtx-exclude "repix@warmup/"` selects the timed runs only.
  // Scope "kernel" (the default for a GPU variant with a device plan, on a GPU): the bench's
  // kernel-scope runs, plan set-up and uploads under "setup" (outside the variant's ranges), the
  // L2 flush before each run outside them too. Scope "end-to-end": whole runs.
  int profile(const cli::Args& a) const override {
    std::vector<std::string> known = options::names(option_table(), options::kProfile);
    for (const char* k : {"variant", "dataset", "iterations", "scope"}) known.push_back(k);
    a.only(known);
    if (a.positional.size() != 1)
      throw cli::UsageError("profile " + name() + " takes options only; '" + a.positional.back() + "' is not one");
    const Variant& v = find_variant(a.need("variant"));
    const Options opt = options::parse(option_table(), a, options::kProfile);
    note_unread_options(a, options::kProfile);
    const int iterations = a.get_int("iterations", 5, 1, 100000);
    const bool plan = v.gpu && v.make_plan && gpu_available();
    const std::string scope = a.get("scope", plan ? "kernel" : "end-to-end");
    if (scope != "kernel" && scope != "end-to-end")
      throw cli::UsageError("--scope expects kernel or end-to-end, got '" + scope + "'");
    if (scope == "kernel" && !(v.gpu && v.make_plan))
      throw cli::UsageError("--scope kernel needs a GPU variant with a device plan (" + name() + "/" + v.id + " has none)");
    if (scope == "kernel" && !plan) throw Error("--scope kernel: no GPU here");
    if (v.gpu && !gpu_available()) throw Error(name() + "/" + v.id + " needs a GPU: " + gpu_unavailable_reason());
    auto state = std::make_shared<State>();
    state->options = opt;
    state->spec = a.need("dataset");
    {
      nvtx::Range r("dataset");
      state->inputs = load_for_profile(state->spec, v.gpu && gpu_available());
    }
    protocol::Rule rule = protocol::Rule::fixed(iterations);
    rule.warmup = 1;
    bench::Case c = scope == "kernel" ? kernel_case(state, v, state->spec, opt, rule.warmup, false)
                                      : end_to_end_case(state, v, state->spec, opt, rule.warmup);
    bench::measure_case(c, rule);
    if (v.gpu) REPIX_CUDA(cudaDeviceSynchronize());
    if (!c.result.not_run.empty()) throw Error(name() + "/" + v.id + " on " + state->spec + ": " + c.result.not_run);
    if (!c.result.verified)
      throw Error(name() + "/" + v.id + " on " + state->spec + ": timed output wrong: " + c.result.verification);
    std::fprintf(stderr, "repix profile: %d %s runs of %s/%s done, output verified\n", iterations, scope.c_str(),
                 name().c_str(), v.id.c_str());
    return 0;
  }

  void add_bench_cases(bench::Context& ctx, std::vector<bench::Case>& cases) const override {
    for (const std::string& spec : ctx.specs) check_bench_dataset(spec);
    auto state = std::make_shared<State>();
    state->options = options::parse(option_table(), ctx.req.family_options, options::kBench);
    state->ctx = &ctx;
    const Options& opt = state->options;
    std::vector<const Variant*> chosen = bench::chosen_variants(ctx, registry());
    const std::vector<peers::Peer> peer_list = bench::choose_peers(ctx);
    for (const std::string& spec : ctx.specs) {
      for (const Variant* v : chosen) {
        const int warmup = ctx.req.rule_for(v->gpu).warmup;
        if (v->gpu && v->make_plan && bench::wants_scope(ctx, "kernel"))
          cases.push_back(kernel_case(state, *v, spec, opt, warmup, ctx.req.sample_stats));
        if (bench::wants_scope(ctx, "end-to-end")) cases.push_back(end_to_end_case(state, *v, spec, opt, warmup));
        if (supports_with_io() && bench::wants_scope(ctx, "with-io"))
          cases.push_back(with_io_case(state, *v, spec, opt, warmup));
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

  std::string reference_variant(const std::string& spec, const cli::Args& opts) const override {
    return reference_for(datasets::shape_of(spec), options::parse(option_table(), opts, options::kRun | options::kProfile | options::kBench));
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
    p->state->spec = datasets::Spec::parse(spec).str();
    p->state->options = options::parse(option_table(), base, options::kRun | options::kProfile | options::kBench);
    p->state->inputs = load(spec, gpu_available());  // pinned where a GPU exists: full-speed uploads
    return p;
  }

  // The bench's cases and protocol (bench::measure_case), one at a time.
  report::Result measure(Problem& problem, const std::string& variant, const std::string& scope,
                         const bench::Reps& reps, const cli::Args& given) const override {
    ProblemOf& p = static_cast<ProblemOf&>(problem);
    const std::string& spec = p.spec();
    const Variant* v = nullptr;
    for (const Variant& x : registry())
      if (x.id == variant) v = &x;
    if (!v) {
      report::Result r = base_case_result(variant, spec, scope);
      r.not_run = "absent: " + name() + " has no variant `" + variant + "` in this build";
      return r;
    }
    bench::Case c;
    c.result = base_case_result(v->id, spec, scope);
    c.result.bound = bound(*v, scope);
    c.result.items = items(p.state->inputs);
    // The options the row runs with, recorded also where it cannot run (no GPU, no plan); a value
    // refused here fails the row below, with its message.
    Options opt = p.state->options;
    std::string refused;
    try {
      for (const Option& o : option_table())
        if (given.has(o.spec.name)) o.set(opt, o.spec.check(given.get(o.spec.name)));
      c.result.options = row_options_json(*v, opt);
    } catch (const std::exception& e) {
      refused = message_of(e);
    }
    if (v->gpu && !gpu_available()) {
      c.result.not_run = "no GPU";
      return c.result;
    }
    if (scope == "kernel" && !v->make_plan) {
      c.result.not_run = "skipped: no device plan, end-to-end only";
      return c.result;
    }
    const protocol::Rule& rule = v->gpu ? reps.gpu : reps.cpu;
    try {
      if (!refused.empty()) throw Error(refused);
      c = scope == "kernel" ? kernel_case(p.state, *v, spec, opt, rule.warmup, reps.sample_stats)
                            : end_to_end_case(p.state, *v, spec, opt, rule.warmup);
      bench::measure_case(c, rule);
    } catch (const std::exception& e) {  // GPU out of memory at the largest sizes, for one
      c.result.samples_ms.clear();
      c.result.verified = false;
      c.result.not_run = "error: " + message_of(e);
    }
    return c.result;
  }

 protected:
  // The options of a run in memory (run_in_memory), checked as `repix run`'s are (the same
  // ranges and messages): the run's declared options and "variant", and `outputs`, the names of
  // the family's optional outputs a caller may ask for (edt: "sites").
  Options in_memory_options(const cli::Args& a, const std::vector<std::string>& outputs = {}) const {
    std::vector<std::string> known = options::names(option_table(), options::kRun);
    known.insert(known.end(), outputs.begin(), outputs.end());
    known.push_back("variant");
    a.only(known);
    return options::parse(option_table(), a, options::kRun);
  }

  // The head of a `repix run --json` record: the family, the variant and the options it ran with
  // (those the variant reads, defaults included, as a bench row records them).
  nlohmann::json run_record(const Variant& v, const Options& opt) const {
    return {{"family", name()}, {"variant", v.id}, {"options", row_options_json(v, opt)}};
  }

  // A run on device inputs needs a GPU variant with a plan (one that reads device-resident
  // inputs).
  void check_device_variant(const Variant& v) const {
    if (!v.gpu)
      throw Error(name() + ": variant " + v.id + " runs on the CPU, and the input is in GPU memory: give it a host " +
                  "array (cupy.asnumpy) or a GPU variant");
    if (!v.make_plan)
      throw Error(name() + ": variant " + v.id + " reads host memory only (it has no kernel scope); give it a host " +
                  "array (cupy.asnumpy) or a variant of repix.variants(\"" + name() + "\", device_arrays=True)");
  }

  // run_on_device's engine, for the declared runs and the families whose run is their own (ECC):
  // `v`'s plan, set up for these inputs' type and shape or reused from the last call with the same
  // variant, options, outputs (`names`, in order) and device, computes on the inputs in place on
  // call.stream; the outputs its device_outputs() names are copied into the caller's arrays on the
  // stream, or where it names none (the output is finished on the host), `host_outputs` makes
  // them from result() and they are copied up into the caller's arrays. The plan goes back to its
  // cache with an event on the stream, which the next call's stream waits for, so a plan is never
  // reused before this call's copies out of it have run.
  template <class HostOutputs>
  std::vector<Array> run_plan_on_device(const Variant& v, const std::vector<DeviceImage>& in, const Options& opt,
                                        const std::vector<std::string>& names, const DeviceCall& call,
                                        HostOutputs&& host_outputs) const {
    struct Cached {
      std::unique_ptr<Plan> plan;
      CudaEvent done{cudaEventDisableTiming};
    };
    int device = 0;
    REPIX_CUDA(cudaGetDevice(&device));
    const std::string key = name() + "|" + v.id + "|" + dtype_name(in.at(0).dtype) + "|" + in.at(0).shape.str() + "|" +
                            std::to_string(device) + "|" + row_options_json(v, opt).dump() + "|" +
                            nlohmann::json(names).dump();
    auto& cache = reuse_cache<std::string, Cached>();
    std::unique_ptr<Cached> c = cache.take(key);
    if (c) {
      REPIX_CUDA(cudaStreamWaitEvent(call.stream, c->done.get(), 0));
    } else {
      c = std::make_unique<Cached>();
      c->plan = v.make_plan();
      c->plan->setup({in.at(0).dtype, in.at(0).shape}, opt, call.stream);
    }
    DeviceInputs device_inputs;
    for (const DeviceImage& img : in) device_inputs.push_back(img.data);
    {
      nvtx::Range range((name() + "/" + v.id).c_str());
      c->plan->compute(device_inputs, call.stream);
    }
    // Each output into an array of the caller's: from the plan's device buffers (device to device),
    // or where the plan finishes it on the host, from there (a pageable copy: the host array may
    // go once the call returns).
    std::vector<Array> out;
    auto to_caller = [&](const std::string& output, const std::string& dtype, const std::vector<std::int64_t>& shape,
                         const void* src, std::size_t bytes, cudaMemcpyKind kind) {
      void* dst = call.allocate(dtype, shape);
      if (bytes) REPIX_CUDA(cudaMemcpyAsync(dst, src, bytes, kind, call.stream));
      Array a;
      a.name = output;
      a.dtype = dtype;
      a.shape = shape;
      a.data = dst;
      a.on_device = true;
      out.push_back(std::move(a));
    };
    const std::vector<DeviceOutput> on_device = c->plan->device_outputs();
    if (on_device.empty()) {
      Result r = c->plan->result(call.stream);
      for (const Array& a : host_outputs(r)) to_caller(a.name, a.dtype, a.shape, a.data, bytes_of(a), cudaMemcpyHostToDevice);
    } else {
      if (on_device.size() != names.size())
        throw Error("internal: " + name() + "/" + v.id + " left " + std::to_string(on_device.size()) +
                    " outputs on the device for " + std::to_string(names.size()) + " asked for");
      for (std::size_t i = 0; i < on_device.size(); ++i) {
        const DeviceOutput& o = on_device[i];
        to_caller(names[i], o.dtype, o.shape, o.data, o.bytes, cudaMemcpyDeviceToDevice);
      }
    }
    c->done.record(call.stream);
    cache.put(key, std::move(c));
    return out;
  }

  // Whether run_in_memory runs a GPU variant through its plan kept between calls (run_kept_plan)
  // rather than its own end-to-end run, which sets up a plan and its buffers each call: a family
  // says so where that run is exactly the plan end to end after check_run_inputs' and
  // check_kept_plan_inputs' checks (edt, reconstruct, the texture families). Set-up is a few cudaMalloc calls and a stream: hundreds of
  // microseconds, more than a small input's whole run.
  virtual bool keeps_plan_for_host_inputs() const { return false; }
  // The checks a family's variants make in their own end-to-end run before their plan, beyond
  // check_run_inputs' (reconstruct: marker against mask), for the kept plan that replaces that run.
  virtual void check_kept_plan_inputs(const Inputs&, const Options&) const {}

  // `v`'s plan end to end (core/plan_end_to_end.hpp: upload, compute, download) on its stream and
  // input buffers, all kept for the next call with the same variant, options, outputs asked for
  // (edt's sites: the plan is set up for them) and inputs' type and shape.
  Result run_kept_plan(const Variant& v, const Inputs& in, const Options& opt, const std::set<std::string>& asked) const {
    struct Kept {
      std::unique_ptr<Plan> plan;
      EndToEndBuffers buffers;
    };
    int device = 0;
    REPIX_CUDA(cudaGetDevice(&device));
    const std::string key = name() + "|" + v.id + "|" + dtype_name(in.at(0).dtype()) + "|" + in.at(0).shape().str() +
                            "|" + std::to_string(device) + "|" + row_options_json(v, opt).dump() + "|" +
                            nlohmann::json(asked).dump();
    auto& cache = reuse_cache<std::string, Kept>();
    std::unique_ptr<Kept> k = cache.take(key);
    if (!k) {
      k = std::make_unique<Kept>();
      k->plan = v.make_plan();
    }
    std::vector<const HostImage*> inputs;
    for (const HostImage& img : in) inputs.push_back(&img);
    nvtx::Range range((name() + "/" + v.id).c_str());
    Result r = run_end_to_end(*k->plan, k->buffers, inputs, opt);
    cache.put(key, std::move(k));
    return r;
  }

  // ---- `repix run`, declared once ----------------------------------------------------------------
  // A family's run command as data: its inputs (the options naming them, in the order of the
  // variants' inputs and of the Python function's array arguments), its outputs beside --json
  // (each written to a file by the CLI, returned as an array by the Python module), its default
  // variants. From it FamilyOf makes the CLI's run (help lines, loading, timing, the files, the
  // --json record) and the Python module's run in memory (run_in_memory), so that both run the
  // same variant with the same checks. A family whose run does more overrides those instead (ECC:
  // specs too large to load are streamed, --plot).
  struct RunOutput {
    cli::OutputArg file;     // --option, extensions, format; the option's name is the array's
    bool optional = false;   // Python returns it only when asked for (edt's sites)
    std::function<void(const Result&, const Inputs&, const std::string& path)> write;
    std::function<Array(Result&, const Shape& inputs)> array;  // the inputs' shape
  };
  struct RunDeclaration {
    std::vector<std::string> inputs;  // "input"; "marker", "mask"
    std::vector<RunOutput> outputs;   // --json comes with every run
    std::string synopsis;             // the help's first line after "run <family>"
    std::string summary;              // what the run computes, one line
    std::string gpu_default;          // the variant without --variant where a GPU is usable
    std::string cpu_default;          // and where none is
  };
  virtual RunDeclaration run_declaration() const {
    throw Error("internal: " + name() + " declares no run command");
  }
  // Hooks of a declared run, each called by the CLI and by Python alike: the arguments checked
  // before anything is read (area-opening: --area is required), the options completed once the
  // variant and the outputs asked for are known (edt: sites), the inputs checked (one clear
  // line, nothing written), and what the --json record holds beyond the inputs, shape, dtype and
  // milliseconds.
  virtual void check_run_arguments(const cli::Args&) const {}
  virtual void prepare_run(Options&, const Variant&, const std::set<std::string>& /*outputs asked for*/) const {}
  virtual void check_run_inputs(const Inputs&, const Options&) const {}
  // check_run_inputs for inputs in device memory (run_on_device): the same checks and messages,
  // the values' ones made on the device (core/gpu/first_where.hpp). Every family whose run
  // reaches the device says its own; none is assumed.
  virtual void check_device_inputs(const std::vector<DeviceImage>&, const Options&, cudaStream_t) const {
    throw Error("internal: " + name() + " declares no checks of device inputs");
  }
  virtual nlohmann::json run_record_extra(const Variant&, const Result&, const Inputs&, const Options&) const {
    return nlohmann::json::object();
  }

  // The declared run's pieces, each overridable where a family's run is its own (ECC):
  // `run_arguments()` are the run's options beside the declared ones (inputs, outputs, --json),
  // `run_outputs()` those that are outputs with the extensions and format each is written in
  // (checked together before the run: harness/outputs.hpp), the synopsis names them ("--variant V
  // --input F --output OUT.csv [--json OUT.json]"), the summary says in a line what the command
  // writes, and run_command chooses the variant, loads, runs and writes once the options are parsed.
  const Variant& declared_run_variant(const cli::Args& a) const {
    const RunDeclaration d = run_declaration();
    return find_variant(a.get("variant", gpu_available() ? d.gpu_default : d.cpu_default));
  }
  virtual std::vector<std::string> run_arguments() const {
    const RunDeclaration d = run_declaration();
    std::vector<std::string> out = d.inputs;
    for (const RunOutput& o : d.outputs) out.push_back(o.file.option);
    out.push_back("json");
    return out;
  }
  virtual std::vector<cli::OutputArg> run_outputs() const {
    std::vector<cli::OutputArg> out;
    for (const RunOutput& o : run_declaration().outputs) out.push_back(o.file);
    out.push_back(cli::json_output());
    return out;
  }
  virtual std::string run_synopsis() const { return run_declaration().synopsis; }
  virtual std::string run_summary() const { return run_declaration().summary; }

  virtual int run_command(const cli::Args& a, const Options& given) const {
    const RunDeclaration d = run_declaration();
    check_run_arguments(a);
    const Variant& v = declared_run_variant(a);
    std::set<std::string> asked;
    for (const RunOutput& o : d.outputs)
      if (!a.get(o.file.option).empty()) asked.insert(o.file.option);
    const std::string json_out = a.get("json");
    if (!json_out.empty()) asked.insert("json");
    Options opt = given;
    prepare_run(opt, v, asked);
    Inputs in;
    for (const auto& k : d.inputs) in.push_back(datasets::load(a.need(k), v.gpu && gpu_available()));
    check_run_inputs(in, opt);
    const auto t0 = std::chrono::steady_clock::now();
    const Result r = run_variant(v, in, opt);
    const double ms = ms_since(t0);
    for (const RunOutput& o : d.outputs)
      if (asked.count(o.file.option)) o.write(r, in, a.get(o.file.option));
    if (!json_out.empty()) {
      nlohmann::json j = run_record(v, opt);
      for (const auto& k : d.inputs) j[k] = a.get(k);
      j["shape"] = in.back().shape().str();
      j["dtype"] = dtype_name(in.back().dtype());
      j["ms"] = ms;
      j.update(run_record_extra(v, r, in, opt));
      write_file_atomic(json_out, json_text::dump(j, 1) + "\n");
    }
    return 0;
  }

  nlohmann::json run_interface() const override {
    nlohmann::json j = {{"family", name()}, {"summary", run_summary()}, {"inputs", nlohmann::json::array()},
                        {"outputs", nlohmann::json::array()}, {"options", nlohmann::json::array()}};
    const std::vector<cli::OutputArg> outs = run_outputs();
    for (const auto& k : run_arguments()) {
      auto o = std::find_if(outs.begin(), outs.end(), [&](const cli::OutputArg& x) { return x.option == k; });
      if (o == outs.end()) j["inputs"].push_back(k);
      else if (k != "json") j["outputs"].push_back({{"name", k}, {"format", o->format}});
    }
    for (const Option& o : option_table())
      if (o.spec.commands & options::kRun)
        j["options"].push_back({{"name", o.spec.name}, {"default", o.spec.default_text}, {"help", o.spec.help},
                                {"flag", o.spec.flag}});
    return j;
  }

  // The outputs a caller in memory may ask for (edt's sites), and those a call asks for: every
  // output but the optional ones, which are asked for by name (an option without a value).
  static std::vector<std::string> optional_outputs(const RunDeclaration& d) {
    std::vector<std::string> out;
    for (const RunOutput& o : d.outputs)
      if (o.optional) out.push_back(o.file.option);
    return out;
  }
  static std::set<std::string> outputs_asked_in_memory(const RunDeclaration& d, const cli::Args& a) {
    std::set<std::string> asked;
    for (const RunOutput& o : d.outputs)
      if (!o.optional || a.has(o.file.option)) asked.insert(o.file.option);
    return asked;
  }

  // What run_in_memory and run_on_device share before their inputs are read: the arguments and
  // options checked, the variant chosen, the outputs asked for, the options completed.
  struct InMemoryCall {
    RunDeclaration d;
    Options opt;
    const Variant* v = nullptr;
    std::set<std::string> asked;
  };
  InMemoryCall in_memory_call(std::size_t inputs, const cli::Args& a) const {
    InMemoryCall c;
    c.d = run_declaration();
    if (inputs != c.d.inputs.size())
      throw Error("internal: " + name() + " takes " + std::to_string(c.d.inputs.size()) + " arrays");
    check_run_arguments(a);
    c.opt = in_memory_options(a, optional_outputs(c.d));
    c.v = &declared_run_variant(a);
    c.asked = outputs_asked_in_memory(c.d, a);
    prepare_run(c.opt, *c.v, c.asked);
    return c;
  }

  std::vector<Array> run_in_memory(Inputs in, const cli::Args& a) const override {
    const InMemoryCall c = in_memory_call(in.size(), a);
    const RunDeclaration& d = c.d;
    const Options& opt = c.opt;
    const Variant& v = *c.v;
    const std::set<std::string>& asked = c.asked;
    check_run_inputs(in, opt);
    const bool kept = v.gpu && v.make_plan && keeps_plan_for_host_inputs() && gpu_available();
    if (kept) check_kept_plan_inputs(in, opt);
    Result r = kept ? run_kept_plan(v, in, opt, asked) : run_variant(v, in, opt);
    std::vector<Array> out;
    for (const RunOutput& o : d.outputs)
      if (asked.count(o.file.option)) out.push_back(o.array(r, in.back().shape()));
    return out;
  }

  std::vector<Array> run_on_device(const std::vector<DeviceImage>& in, const cli::Args& a,
                                   const DeviceCall& call) const override {
    const InMemoryCall c = in_memory_call(in.size(), a);
    const RunDeclaration& d = c.d;
    const Options& opt = c.opt;
    const Variant& v = *c.v;
    const std::set<std::string>& asked = c.asked;
    check_device_variant(v);
    check_device_inputs(in, opt, call.stream);
    std::vector<std::string> names;
    for (const RunOutput& o : d.outputs)
      if (asked.count(o.file.option)) names.push_back(o.file.option);
    return run_plan_on_device(v, in, opt, names, call, [&](Result& r) {
      std::vector<Array> out;
      for (const RunOutput& o : d.outputs)
        if (asked.count(o.file.option)) out.push_back(o.array(r, in.back().shape));
      return out;
    });
  }

  // `mpirun -np N repix run <family> --distributed ...` and `repix bench --distributed`: every
  // rank makes the family's Job (its decomposition, harness/distributed/driver.hpp) from the same
  // arguments. Families without one say so.
  virtual std::unique_ptr<distributed::Job> distributed_job(const cli::Args&, const Options&) const {
    throw Error("internal: " + name() + " has no distributed run");
  }

  // ---- what the adapter supplies ---------------------------------------------------------------

  virtual const std::vector<Variant>& registry() const = 0;
  virtual const std::vector<Option>& option_table() const = 0;
  // The variant every other is checked against.
  virtual std::string reference_id() const = 0;
  // The variant that computes the reference on inputs of this shape: reference_id(), or where that
  // would take seconds, the fastest CPU variant the family's tests prove identical to it (a test
  // checks every family's choice on a large shape is such a variant). Each row says which ran.
  virtual std::string reference_for(const Shape&, const Options&) const { return reference_id(); }
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
  // One dataset's inputs and reference, shared by the cases measured on it: the bench keeps one
  // dataset at a time (inputs are large), a table's Problem its own.
  struct State {
    Options options;  // the base options: the reference follows them
    std::string spec;
    Inputs inputs;
    std::optional<Result> reference;
    std::string reference_by;                 // the variant that computed it
    std::map<std::string, Verdict> verdicts;  // variant|options: the verifying run's verdict
    std::map<std::string, Stats> stats;       // variant|options: the verifying run's stats
    bench::Context* ctx = nullptr;            // the bench's: datasets are recorded in its report
  };

  struct ProblemOf final : Problem {
    std::shared_ptr<State> state = std::make_shared<State>();
    const std::string& spec() const override { return state->spec; }
  };

  // Every option's value, defaults included (the key of a verifying run, and what a row ran with).
  nlohmann::json options_json(const Options& opt) const {
    nlohmann::json j = nlohmann::json::object();
    for (const Option& o : option_table()) j[o.spec.name] = o.get(opt);
    return j;
  }
  // The options variant `v` reads (options::Spec::variants), with their values, defaults included:
  // a report row's `options`.
  nlohmann::json row_options_json(const Variant& v, const Options& opt) const {
    nlohmann::json j = nlohmann::json::object();
    for (const Option& o : option_table())
      if (o.spec.read_by(v.id)) j[o.spec.name] = o.get(opt);
    return j;
  }
  std::string verdict_key(const Variant& v, const Options& opt) const { return v.id + "|" + options_json(opt).dump(); }

  const Inputs& inputs_of(State& s, const std::string& spec) const {
    if (s.spec != spec || s.inputs.empty()) {
      s.inputs.clear();  // free the previous inputs first
      s.reference.reset();
      s.reference_by.clear();
      s.verdicts.clear();
      s.stats.clear();
      nvtx::Range r("dataset");
      // Pinned where a GPU exists, so end-to-end uploads run at full PCIe speed.
      s.inputs = load(spec, gpu_available());
      s.spec = spec;
    }
    return s.inputs;
  }
  void set_reference(State& s, const std::string& spec, Result ref, const std::string& by) const {
    s.reference = std::move(ref);
    s.reference_by = by;
    if (s.ctx)
      for (const auto& d : describe(spec, s.inputs, *s.reference)) bench::record_dataset(*s.ctx, d);
  }
  // The reference output on `spec`, computed (untimed, under the NVTX range "reference": outside
  // any variant's timed ranges, even where the variant computing it is the one profiled) when
  // first needed, by reference_for's variant.
  const Result& reference_of(State& s, const std::string& spec) const {
    const Inputs& in = inputs_of(s, spec);
    if (!s.reference) {
      const std::string by = reference_for(in.at(0).shape(), s.options);
      if (s.ctx) std::fprintf(stderr, "repix bench: reference (%s) on %s...\n", by.c_str(), spec.c_str());
      nvtx::Range r("reference");
      set_reference(s, spec, run_ranged(find_variant(by), in, verifying_options(s.options)), by);
    }
    return *s.reference;
  }
  // Whether `v` run with `opt` computes the reference of `s` (none yet, v is the variant that
  // computes it there, under the reference's options): its checked output then is the reference.
  bool makes_reference(const State& s, const Variant& v, const Options& opt) const {
    return !s.reference && v.id == reference_for(s.inputs.at(0).shape(), s.options) &&
           options_json(opt) == options_json(s.options);
  }
  // What a verdict against the reference adds where another variant than the reference computed it.
  std::string reference_note(const State& s) const {
    if (s.reference_by.empty() || s.reference_by == reference_id()) return "";
    return " (reference computed by " + s.reference_by + ", tested identical to " + reference_id() + ")";
  }
  // `v`'s verifying run (full output, under "warmup": it is the case's first warm-up) and its
  // verdict, once per variant and options on a dataset. The variant that computes the reference,
  // with the reference's options and no reference yet, makes it: its verifying run is the reference.
  const Verdict& verify(State& s, const Variant& v, const std::string& spec, const Options& opt) const {
    const std::string key = verdict_key(v, opt);
    const Inputs& in = inputs_of(s, spec);
    if (const auto it = s.verdicts.find(key); it != s.verdicts.end()) return it->second;
    Verdict verdict;
    if (makes_reference(s, v, opt)) {
      nvtx::Range warm("warmup");
      set_reference(s, spec, run_ranged(v, in, verifying_options(opt)), v.id);
      s.stats[key] = stats_of(*s.reference);
      verdict.ok = true;
      verdict.text = "the reference" + reference_note(s);
    } else {
      const Result& ref = reference_of(s, spec);
      nvtx::Range warm("warmup");
      const Result got = run_ranged(v, in, verifying_options(opt));
      s.stats[key] = stats_of(got);
      verdict = check(v, in, ref, got, "");
      verdict.text += reference_note(s);
    }
    return s.verdicts[key] = std::move(verdict);
  }
  // The check of a timed run's output (`what`: "timed output", "kernel-scope output", ...): the
  // verdict replaces the row's where it fails, or where the row had none yet. Throws
  // bench::WrongOutput on a failure when `before_samples` (a wrong output is not timed further).
  void check_timed(State& s, const Variant& v, const std::string& spec, const Result& got, const std::string& what,
                   bench::Case& me, bool before_samples) const {
    Verdict again = check(v, s.inputs, reference_of(s, spec), got, what);
    again.text += reference_note(s);
    me.result.reference = s.reference_by;
    if (!again.ok || me.result.verification.empty()) apply(me.result, again);
    if (!again.ok && before_samples) throw bench::WrongOutput(again.text);
  }
  static void apply(report::Result& r, const Verdict& v) {
    r.verified = v.ok;
    r.verification = v.text;
    r.errors = v.errors;
  }
  report::Result base_case_result(const std::string& variant, const std::string& spec, const std::string& scope) const {
    report::Result r;
    r.family = name();
    r.variant = variant;
    r.dataset = spec;
    r.scope = scope;
    r.unit = unit();
    return r;
  }
  bench::Case base_case(const Variant& v, const std::string& spec, const std::string& scope, const Options& opt) const {
    bench::Case c;
    c.gpu = v.gpu;
    c.result = base_case_result(v.id, spec, scope);
    c.result.bound = bound(v, scope);
    c.result.options = row_options_json(v, opt);
    return c;
  }
  // The row's identity and counters once its inputs exist.
  void describe_row(State& s, const Variant& v, const Stats& verifying, const Options& opt, bench::Case& me) const {
    me.result.extra = extra(v, me.result.scope, verifying, opt);
    me.result.items = items(s.inputs);
    me.bytes_per_item = bytes_per_item(s.inputs);
  }
  // The host-timed scopes' first steps: with `warmup` >= 1, the verifying run (untimed, full output,
  // checked: a wrong output is not timed) and warmup - 1 more runs of `timed_run`; with 0, nothing:
  // the first timed run's output is checked instead (ensure_first_checked).
  template <class TimedRun>
  void host_prepare(State& s, const Variant& v, const std::string& spec, const Options& opt, int warmup,
                    TimedRun&& timed_run, bench::Case& me) const {
    inputs_of(s, spec);
    if (warmup == 0) {
      describe_row(s, v, Stats{}, opt, me);
      return;
    }
    const Verdict& verdict = verify(s, v, spec, opt);
    apply(me.result, verdict);
    me.result.reference = s.reference_by;
    describe_row(s, v, s.stats[verdict_key(v, opt)], opt, me);
    if (!verdict.ok) throw bench::WrongOutput(verdict.text);
    for (int i = 1; i < warmup; ++i) {
      nvtx::Range warm("warmup");
      timed_run();
    }
  }
  // With no warm-up, the first timed output is the verifying one: the reference where this variant
  // makes it, else checked (a wrong one ends the row).
  void ensure_first_checked(State& s, const Variant& v, const std::string& spec, const Options& opt,
                            std::optional<Result>& last, bench::Case& me) const {
    if (!me.result.verification.empty()) return;
    if (makes_reference(s, v, opt) && options_json(timed_options(opt)) == options_json(verifying_options(opt))) {
      me.result.extra = extra(v, me.result.scope, stats_of(*last), opt);
      set_reference(s, spec, std::move(*last), v.id);  // later samples' outputs are checked against it
      last.reset();
      me.result.verified = true;
      me.result.verification = "the reference" + reference_note(s);
      me.result.reference = v.id;
      return;
    }
    check_timed(s, v, spec, *last, "timed output", me, true);
    me.result.extra = extra(v, me.result.scope, stats_of(*last), opt);
  }

  bench::Case kernel_case(const std::shared_ptr<State>& state, const Variant& v, const std::string& spec,
                          const Options& opt, int warmup, bool sample_stats) const {
    bench::Case c = base_case(v, spec, "kernel", opt);
    struct Kernel {
      std::unique_ptr<Plan> plan;
      std::unique_ptr<bench::KernelTimer> timer;
      nlohmann::json per_sample = nlohmann::json::array();
    };
    auto k = std::make_shared<Kernel>();
    // Set-up, `warmup` (at least one) untimed computes, the plan's output checked: the kernel
    // scope's own path verified before it is timed.
    c.prepare = [this, state, k, &v, spec, opt, warmup](bench::Case& me) {
      reference_of(*state, spec);  // before the plan's device memory is taken
      const Inputs& in = state->inputs;
      k->timer = std::make_unique<bench::KernelTimer>();
      k->plan = set_up_plan(v, in, timed_options(opt), *k->timer);
      Plan* plan = k->plan.get();
      k->timer->start([plan](const repix::DeviceInputs& d, cudaStream_t s) { plan->compute(d, s); },
                      std::max(1, warmup), range_of(v));
      const Result out = k->plan->result(k->timer->stream());
      describe_row(*state, v, stats_of(out), opt, me);
      check_timed(*state, v, spec, out, "kernel-scope output", me, true);
    };
    c.sample = [this, k, sample_stats](bench::Case&) {
      const double ms = k->timer->sample();
      if (sample_stats) k->per_sample.push_back(stats_json(k->plan->stats()));
      return ms;
    };
    // The output of the timed path itself must be right, not only the first one.
    c.finish = [this, state, k, &v, spec, opt, sample_stats](bench::Case& me) {
      const Result got = k->plan->result(k->timer->stream());
      check_timed(*state, v, spec, got, "kernel-scope output", me, false);
      kernel_extra(me.result.extra, got, *k->plan, opt);
      if (sample_stats) me.result.extra["sample_stats"] = std::move(k->per_sample);
      k->plan.reset();
      k->timer.reset();
    };
    return c;
  }

  bench::Case end_to_end_case(const std::shared_ptr<State>& state, const Variant& v, const std::string& spec,
                              const Options& opt, int warmup) const {
    bench::Case c = base_case(v, spec, "end-to-end", opt);
    struct Host {
      std::optional<Result> last;  // the last timed run's output, checked at the end
      nlohmann::json breakdowns = nlohmann::json::array();
    };
    auto h = std::make_shared<Host>();
    const Options timed = timed_options(opt);
    c.prepare = [this, state, h, &v, spec, opt, timed, warmup](bench::Case& me) {
      host_prepare(*state, v, spec, opt, warmup, [&] { run_ranged(v, state->inputs, timed); }, me);
    };
    c.sample = [this, state, h, &v, spec, opt, timed](bench::Case& me) {
      h->last.reset();  // the previous output freed before the clock starts, as a caller would
      const auto t0 = std::chrono::steady_clock::now();
      h->last = run_ranged(v, state->inputs, timed);
      const double ms = ms_since(t0);
      nlohmann::json b = sample_breakdown(*h->last);
      if (!b.is_null()) h->breakdowns.push_back(std::move(b));
      ensure_first_checked(*state, v, spec, opt, h->last, me);
      return ms;
    };
    c.finish = [this, state, h, &v, spec](bench::Case& me) {
      if (h->last) check_timed(*state, v, spec, *h->last, "timed output", me, false);
      h->last.reset();
      if (h->breakdowns.empty()) return;
      me.result.extra["sample_breakdown"] = h->breakdowns;
      me.result.extra["breakdown_median"] = report::median_fields(h->breakdowns);
    };
    return c;
  }

  // The dataset is written once to a temporary .npy (untimed); each sample reads it back and runs
  // the variant. The file usually sits in the OS page cache after the write (dropping caches
  // needs root): this measures the read path (syscalls, copies, pinning), not the disk.
  bench::Case with_io_case(const std::shared_ptr<State>& state, const Variant& v, const std::string& spec,
                           const Options& opt, int warmup) const {
    bench::Case c = base_case(v, spec, "with-io", opt);
    struct Io {
      std::string path;
      std::unique_ptr<RemoveOnSignal> guard;  // SIGINT/SIGTERM while it exists remove it too
      std::optional<Result> last;
      ~Io() {  // also when the case ends early (an exception between prepare and finish)
        if (!path.empty()) std::remove(path.c_str());
      }
    };
    auto io = std::make_shared<Io>();
    const Options timed = timed_options(opt);
    const bool pinned = v.gpu && gpu_available();
    auto write_input = [this, state, io, spec] {
      const HostImage& img = inputs_of(*state, spec).at(0);
      char file[96];  // the pid keeps concurrent runs on the same dataset apart
      std::snprintf(file, sizeof file, "repix-with-io-%ld-%016llx.npy", static_cast<long>(::getpid()),
                    static_cast<unsigned long long>(img.content_hash()));
      io->path = (std::filesystem::temp_directory_path() / file).string();
      io->guard = std::make_unique<RemoveOnSignal>(io->path);
      datasets::write_npy(img, io->path);
    };
    c.prepare = [this, state, io, &v, spec, opt, timed, warmup, pinned, write_input](bench::Case& me) {
      write_input();
      // The verifying run is in memory: every warm-up run reads the file, as the samples do.
      host_prepare(*state, v, spec, opt, warmup == 0 ? 0 : 1, [] {}, me);
      for (int i = 0; i < (warmup == 0 ? 0 : warmup); ++i) {
        nvtx::Range warm("warmup");
        nvtx::Range r(range_of(v).c_str());
        run_from_file(v, io->path, timed, pinned);
      }
    };
    c.sample = [this, state, io, &v, spec, opt, timed, pinned](bench::Case& me) {
      io->last.reset();
      const auto t0 = std::chrono::steady_clock::now();
      {
        nvtx::Range r(range_of(v).c_str());  // the file read is part of the with-io run
        io->last = run_from_file(v, io->path, timed, pinned);
      }
      const double ms = ms_since(t0);
      ensure_first_checked(*state, v, spec, opt, io->last, me);
      return ms;
    };
    c.finish = [this, state, io, &v, spec](bench::Case& me) {
      if (io->last) check_timed(*state, v, spec, *io->last, "with-io output", me, false);
      std::error_code ec;
      std::filesystem::remove(io->path, ec);
      io->path.clear();
      io->guard.reset();
      io->last.reset();
    };
    return c;
  }

  void add_peer_case(bench::Context& ctx, std::vector<bench::Case>& cases, const std::shared_ptr<State>& state,
                     const peers::Peer& p, const std::string& spec) const {
    bench::add_peer_case(ctx, cases, p, spec, unit(), [this, state, p, spec](bench::Case& me, const protocol::Rule& rule) {
      const Result& ref = reference_of(*state, spec);
      const Inputs& in = state->inputs;
      me.result.items = items(in);
      me.bytes_per_item = bytes_per_item(in);
      me.result.reference = state->reference_by;
      std::vector<const HostImage*> host;
      for (const HostImage& img : in) host.push_back(&img);
      peers::PeerRun run = peers::run(p, host, peer_params(state->options), rule);
      const nlohmann::json added = peer_extra(state->options);  // named: items() of a temporary would dangle
      for (const auto& [k, value] : added.items()) me.result.extra[k] = value;
      Verdict verdict = check_peer(p, in, ref, std::move(run.output));
      verdict.text += reference_note(*state);
      apply(me.result, verdict);
      return run;
    });
  }
};

}  // namespace repix::family
