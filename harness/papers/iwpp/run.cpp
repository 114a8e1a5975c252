// Measuring the IWPP paper tables (see tables.hpp). Inputs are generated once per row; the
// single-core reference runs first and is the verification reference (reconstruct: seq's output,
// which every variant must equal pixel for pixel; edt: seq-exact with sites, against which seq and
// every GPU variant must pass edt::check_propagation, or compare_exact for exact variants). A
// variant is checked on its first output before any of its timed samples count, and kernel-scope
// timings check the timed path's own output again at the end. A failure inside one measurement
// (GPU out of memory, a variant's error) marks that cell and the command exits 1 after writing
// the table.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>

#include "core/error.hpp"
#include "core/gpu.hpp"
#include "datasets/datasets.hpp"
#include "harness/bench.hpp"
#include "harness/env.hpp"
#include "harness/families/edt/checks.hpp"
#include "harness/families/reconstruct/checks.hpp"
#include "harness/json_fields.hpp"
#include "harness/papers/iwpp/multi_device_adapter.hpp"
#include "harness/papers/iwpp/tables.hpp"
#include "edt/edt.hpp"
#include "reconstruct/reconstruct.hpp"

namespace repix::tables {

using json_fields::field_or;

using nlohmann::json;

namespace {

// ---- how many runs ------------------------------------------------------------------------------

struct Reps {
  int gpu = 5;  // timed samples of a GPU variant (after one untimed warm-up)
  int cpu = 3;  // at most this many timed runs of a CPU variant (seq included): min(--reps, 3)
  // CPU runs stop once they have taken this long together (one run at least): seq takes seconds
  // to a minute at 8192^2-32768^2, omp-nontiled ~10x seq, and the device round is short. The
  // tables show how many runs each median has.
  double cpu_budget_ms = 1000;
};

// ---- timing -------------------------------------------------------------------------------------

// Runs body(t) for a fresh Timing; an exception inside becomes the cell's "error: ..." instead of
// ending the table (GPU out of memory at the largest sizes, for one).
template <class Body>
Timing guarded(const std::string& variant, const std::string& scope, Body body) {
  Timing t;
  t.variant = variant;
  t.scope = scope;
  try {
    body(t);
  } catch (const std::exception& e) {
    t.samples_ms.clear();
    t.verified = false;
    t.not_run = std::string("error: ") + e.what();
  }
  return t;
}

// Host clock: `warmup` untimed runs, then `reps` timed ones. The first output (warm-up or timed)
// is checked; a variant whose output is wrong is not timed further.
// With budget_ms > 0 the timed runs stop once their sum reaches it.
template <class Run, class Check>
void host_timing(Timing& t, int reps, int warmup, double budget_ms, Run run, Check check) {
  double spent = 0;
  for (int i = 0; i < warmup + reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    auto out = run();
    const double ms = ms_since(t0);
    if (i >= warmup) {
      t.samples_ms.push_back(ms);
      spent += ms;
    }
    if (i == 0 && !check(out)) {
      if (t.samples_ms.empty()) t.not_run = "wrong output: " + t.verification;  // only the warm-up ran
      return;
    }
    if (budget_ms > 0 && spent >= budget_ms) return;
  }
}

// A CPU variant's runs (no warm-up), or a GPU variant's end-to-end samples after one warm-up.
template <class Run, class Check>
void host_timing(Timing& t, bool gpu, const Reps& reps, Run run, Check check) {
  if (gpu) host_timing(t, reps.gpu, 1, 0.0, run, check);
  else host_timing(t, reps.cpu, 0, reps.cpu_budget_ms, run, check);
}

// Kernel scope through bench::KernelTimer (its stream, device copies of the inputs, warm-up,
// event-timed samples with L2 flushed). `prepare(timer)` sets the plan up on timer.stream(),
// uploads the inputs and returns the compute; `check(stream)` verifies the plan's current output.
// Checked after the warm-up, before any sample, and again after the samples. after_sample() runs
// after each timed sample (to read what the plan measured of its own phases).
template <class Prepare, class Check, class AfterSample>
void kernel_timing(Timing& t, int reps, const std::string& nvtx_name, Prepare prepare, Check check,
                   AfterSample after_sample) {
  bench::KernelTimer timer;
  timer.start(prepare(timer), /*warmup=*/1, nvtx_name);
  if (!check(timer.stream())) {
    t.not_run = "wrong output: " + t.verification;
    return;
  }
  for (int i = 0; i < reps; ++i) {
    t.samples_ms.push_back(timer.sample());
    after_sample();
  }
  check(timer.stream());
}

// Keeps the first check's text unless a later check fails; verified while every check passed.
void set_verdict(Timing& t, bool ok, const std::string& text) {
  const bool first = t.verification.empty();
  if (!ok || first) t.verification = text;
  t.verified = ok && (first || t.verified);
}

// Each family's Stats as its adapter serialises them (one copy per Stats type).
json stats_json(const reconstruct::Stats& s) { return family::reconstruct_checks::stats_json(s); }
json stats_json(const edt::Stats& s) { return family::edt_checks::stats_json(s); }

// One table run: what it measures (from its options) and where the measurements go (its Session:
// measured and journalled, or read back from a journal with --from).
struct Run {
  std::string id;
  Meta meta;
  json paper;
  std::string out_dir;
  bool small = false;
  std::vector<std::int64_t> sizes;  // --sizes N,N,... (empty: the table's own)
  Reps reps;
  const cli::Args* args = nullptr;
  Session* session = nullptr;

  // The table's sizes: --sizes N,... when given, else its small or paper list.
  std::vector<std::int64_t> pick(std::vector<std::int64_t> small_list, std::vector<std::int64_t> paper_list) const {
    if (!sizes.empty()) return sizes;
    return small ? small_list : paper_list;
  }
  std::int64_t pick_one(std::int64_t small_size, std::int64_t paper_size) const {
    const auto v = pick({small_size}, {paper_size});
    if (v.size() != 1) throw cli::UsageError(id + " runs at one size; give one number in --sizes");
    return v[0];
  }
  bool replaying() const { return session->replaying(); }
  double wall_s() const { return session->wall_s(); }
  // The timing `key` of the table: measure() now (journalled), or the journal's; when replaying a
  // journal that lacks it, a Timing of `variant` in `scope` that says so.
  template <class Measure>
  Timing timing(const std::string& key, const std::string& variant, const std::string& scope, Measure measure) const {
    if (auto t = session->take<Timing>(key, measure)) return *t;
    Timing t;
    t.variant = variant;
    t.scope = scope;
    t.not_run = "missing: not in the journal (the run stopped before this measurement)";
    return t;
  }
};

// ---- reconstruct ----------------------------------------------------------------------------------

struct ReconInput {
  std::string spec;
  HostImage marker, mask;
  HostImage reference;  // seq's output
  Timing seq;
};

// The input of a row and its seq timing (the run's reference output with it). Replaying, only
// the spec and seq's timing from the journal: nothing is generated.
ReconInput recon_input(const Run& run, const std::string& spec, int connectivity, const Reps& reps) {
  ReconInput in;
  in.spec = datasets::Spec::parse(spec).str();
  in.seq = run.timing("seq " + in.spec, "seq", "end-to-end", [&] {
    std::fprintf(stderr, "repix table %s: generating %s...\n", run.id.c_str(), in.spec.c_str());
    const datasets::Spec s = datasets::Spec::parse(spec);
    in.marker = datasets::generate(s, gpu_available());  // pinned where a GPU exists: full-speed uploads
    in.mask = datasets::generate(datasets::mask_spec(s), gpu_available());
    std::fprintf(stderr, "repix table %s: seq...\n", run.id.c_str());
    reconstruct::Options opt;
    opt.connectivity = connectivity;
    const reconstruct::Variant& seq = reconstruct::find_variant("seq");
    Timing t;
    t.variant = "seq";
    t.scope = "end-to-end";
    host_timing(t, false, reps, [&] { return seq.run(in.marker, in.mask, opt); },
                [&](reconstruct::Result& r) {
                  in.reference = std::move(r.image);
                  t.stats = stats_json(r.stats);
                  t.verified = true;  // the reference itself (checked against the definition in tests/iwpp)
                  t.verification = "the reference";
                  return true;
                });
    return t;
  });
  return in;
}

// `v` on (marker, mask) in `scope`, checked against `reference`.
Timing time_recon(const reconstruct::Variant& v, const HostImage& marker, const HostImage& mask,
                  const HostImage& reference, const reconstruct::Options& opt, const std::string& scope,
                  const Reps& reps) {
  return guarded(v.id, scope, [&](Timing& t) {
    if (v.gpu && !gpu_available()) {
      t.not_run = "no GPU";
      return;
    }
    auto check = [&](const reconstruct::Result& r) {
      const std::string why = family::reconstruct_checks::mismatch(r.image, reference);
      set_verdict(t, why.empty(), why.empty() ? "exact match with seq (" + std::to_string(reference.size()) + " pixels)" : why);
      t.stats = stats_json(r.stats);
      return t.verified;
    };
    if (scope == "kernel") {
      if (!v.make_plan) {
        t.not_run = "skipped: no device plan, end-to-end only";
        return;
      }
      std::unique_ptr<reconstruct::DevicePlan> plan;
      kernel_timing(
          t, reps.gpu, "reconstruct/" + v.id,
          [&](bench::KernelTimer& timer) {
            plan = v.make_plan();
            plan->setup({mask.dtype(), mask.shape()}, opt, timer.stream());
            timer.upload({&marker, &mask});
            reconstruct::DevicePlan* p = plan.get();
            return [p](const std::vector<const void*>& d, cudaStream_t s) { p->compute(d, s); };
          },
          [&](cudaStream_t s) { return check(plan->result(s)); },
          [&] {  // queue variants time their wavefront phase; the others leave -1
            const double w = plan->device_result().stats.wavefront_ms;
            if (w >= 0) t.wavefront_ms.push_back(w);
          });
    } else {
      host_timing(t, v.gpu, reps, [&] { return v.run(marker, mask, opt); }, check);
    }
  });
}

// ---- edt ------------------------------------------------------------------------------------------

struct EdtInput {
  std::string spec;
  HostImage image;
  edt::Result exact;  // seq-exact with sites: what every check compares with
  Timing seq;
};

edt::Options distances_only() {
  edt::Options o;
  o.want_sites = false;  // as `repix run edt --output` and the bench time it
  return o;
}

// Checks `got` against in.exact into t: compare_exact for exact variants, else the propagation
// properties (with sites when `got` has them).
bool check_edt(Timing& t, const edt::Variant& v, const EdtInput& in, const edt::Result& got, const std::string& what) {
  const edt::Check c = v.exact ? edt::compare_exact(in.image, in.exact, got) : edt::check_propagation(in.image, in.exact, got);
  const family::edt_checks::Verdict verdict = family::edt_checks::verdict(c, v.exact, what);
  set_verdict(t, verdict.ok, verdict.text);
  t.stats = stats_json(got.stats);
  t.stats["errors"] = verdict.errors;
  return t.verified;
}

Timing time_edt(const edt::Variant& v, const EdtInput& in, const edt::Options& timed, const std::string& scope,
                const Reps& reps) {
  return guarded(v.id, scope, [&](Timing& t) {
    if (v.gpu && !gpu_available()) {
      t.not_run = "no GPU";
      return;
    }
    if (scope == "kernel") {
      if (!v.make_plan) {
        t.not_run = "skipped: no device plan, end-to-end only";
        return;
      }
      std::unique_ptr<edt::DevicePlan> plan;
      kernel_timing(
          t, reps.gpu, "edt/" + v.id,
          [&](bench::KernelTimer& timer) {
            plan = v.make_plan();
            plan->setup({in.image.dtype(), in.image.shape()}, timed, timer.stream());
            timer.upload({&in.image});
            edt::DevicePlan* p = plan.get();
            return [p](const std::vector<const void*>& d, cudaStream_t s) { p->compute(d, s); };
          },
          [&](cudaStream_t s) { return check_edt(t, v, in, plan->result(s), "kernel-scope output"); }, [] {});
      return;
    }
    auto check_timed = [&](const edt::Result& r) { return check_edt(t, v, in, r, "timed run's distances"); };
    if (v.gpu) {  // the untimed warm-up asks for the sites too: the full property check
      edt::Options with_sites = timed;
      with_sites.want_sites = true;
      if (!check_edt(t, v, in, v.run(in.image, with_sites), "end to end, with sites")) {
        t.not_run = "wrong output: " + t.verification;
        return;
      }
    }
    // The GPU's warm-up was the run with sites above.
    if (v.gpu) host_timing(t, reps.gpu, 0, 0.0, [&] { return v.run(in.image, timed); }, check_timed);
    else host_timing(t, false, reps, [&] { return v.run(in.image, timed); }, check_timed);
  });
}

// As recon_input: the image, seq-exact's result (the reference) and seq's timing; replaying, the
// spec and seq's timing from the journal only.
EdtInput edt_input(const Run& run, const std::string& spec, const Reps& reps) {
  EdtInput in;
  in.spec = datasets::Spec::parse(spec).str();
  in.seq = run.timing("seq " + in.spec, "seq", "end-to-end", [&] {
    std::fprintf(stderr, "repix table %s: generating %s...\n", run.id.c_str(), in.spec.c_str());
    in.image = datasets::generate(datasets::Spec::parse(spec), gpu_available());
    std::fprintf(stderr, "repix table %s: seq-exact (the reference), then seq...\n", run.id.c_str());
    in.exact = edt::find_variant("seq-exact").run(in.image, {});
    return time_edt(edt::find_variant("seq"), in, distances_only(), "end-to-end", reps);
  });
  return in;
}

// ---- registry look-ups that may fail ------------------------------------------------------------

template <class V>
const V* lookup(const std::vector<V>& all, const std::string& id) {
  for (const V& v : all)
    if (v.id == id) return &v;
  return nullptr;
}

Timing absent(const std::string& family, const std::string& id, const std::string& scope) {
  Timing t;
  t.variant = id;
  t.scope = scope;
  t.not_run = "absent: " + family + " has no variant `" + id + "` in this build";
  return t;
}

int visible_gpus() {
  if (!gpu_available()) return 0;
  int n = 0;
  REPIX_CUDA(cudaGetDeviceCount(&n));
  return n;
}

// A comma-separated list of integers in [lo, hi] for --<name>; a usage error otherwise.
std::vector<std::int64_t> parse_list(const std::string& s, const std::string& name, std::int64_t lo, std::int64_t hi) {
  std::vector<std::int64_t> v;
  for (const auto& x : cli::split(s, ',')) {
    std::size_t used = 0;
    long long n = 0;
    try {
      n = std::stoll(x, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != x.size() || n < lo || n > hi) used = 0;
    if (used == 0) break;
    v.push_back(n);
  }
  if (v.empty() || v.size() != cli::split(s, ',').size())
    throw cli::UsageError("--" + name + " takes a list of integers from " + std::to_string(lo) + " to " +
                          std::to_string(hi) + (name == "sizes" ? " (or small, paper)" : "") + ", got '" + s + "'");
  return v;
}

// ---- the command ----------------------------------------------------------------------------------


std::string size_label(std::int64_t n) { return std::to_string(n) + "^2"; }
std::string tissue_spec(std::int64_t n, int coverage, const std::string& marker) {
  return "tissue:" + std::to_string(n) + "x" + std::to_string(n) + ":coverage=" + std::to_string(coverage) +
         ":marker=" + marker;
}
// The EDT input for a tissue coverage: blobs (255) on background (0) covering `coverage` %. The
// tissue masks have no zero background at 100 % coverage (every distance would be infinite), so
// 100 % becomes the generator's maximum fill, 0.99. Ball radius 24 like the bench suites (4 on the
// small test inputs).
std::string edt_spec(std::int64_t n, int coverage) {
  const int fill = std::min(coverage, 99);
  return "blobs:" + std::to_string(n) + "x" + std::to_string(n) + ":radius=" + (n >= 1024 ? "24" : "4") +
         ":fill=0." + (fill < 10 ? "0" : "") + std::to_string(fill);
}

const char* kReconTimed =
    "GPU variants in two scopes: kernel (inputs already on the GPU, CUDA events, L2 flushed before each sample, "
    "median after one warm-up) and end-to-end (host marker and mask in, host result out: allocation, uploads, "
    "download; host clock, after one untimed run). seq = Vincent's fast hybrid on one core (the paper's "
    "single-core baseline); speedup = seq / variant. Every variant's output equals seq's pixel for pixel "
    "(checked before timing, and on the kernel-scope timed path again).";
const char* kEdtTimed =
    "GPU variants in two scopes: kernel (input on the GPU, distances only, CUDA events, L2 flushed, median after "
    "one warm-up) and end-to-end (host image in, host distances out, host clock, after an untimed run with sites). "
    "seq = the paper's Algorithm 3 (8-neighbour nearest-site propagation with a FIFO) on one core, distances only; "
    "speedup = seq / variant. Every output (seq's too) is checked against seq-exact (the exact EDT, with sites): "
    "propagation properties for wave variants, identity for exact ones (`gpu-opt` is an exact separable EDT, not "
    "the paper's wavefront; `gpu-queue-tq` is the paper's queue, where registered).";

std::string seq_runs_text(const Reps& r) {
  return "CPU variants (seq included) run up to " + std::to_string(r.cpu) + " times, stopping once their runs "
         "add up to " + fmt("%.0f", r.cpu_budget_ms / 1e3) + " s (seq's run count is in its column: one run at "
         "the large sizes); GPU variants " + std::to_string(r.gpu) + " samples. Times are medians.";
}

// ---- iwpp-table1 ----

int table1(Run& run) {
  const std::int64_t n = run.pick_one(64, 4096);
  const std::vector<std::string> markers = cli::split(run.args->get("markers", "opening,frame"), ',');
  std::vector<int> scans = {7, 9, 11, 13, 15, 17, 19};
  if (run.args->has("raster-scans")) {
    scans.clear();
    for (auto x : parse_list(run.args->get("raster-scans"), "raster-scans", 0, 1000)) scans.push_back(static_cast<int>(x));
  }
  // The paper's launch (one block per SM) first, then repix's default (as many as fit).
  std::vector<int> launches;
  for (auto x : parse_list(run.args->get("blocks-per-sm", "1,0"), "blocks-per-sm", 0, 64)) launches.push_back(static_cast<int>(x));
  std::vector<LadderBlock> blocks;
  for (const auto& marker : markers) {
    Reps once = run.reps;  // seq is only the reference here: one run
    once.cpu = 1;
    const ReconInput in = recon_input(run, tissue_spec(n, 100, marker), 4, once);
    reconstruct::Options opt;
    opt.connectivity = 4;
    const Timing reference = run.timing("reference " + marker + " gpu-opt kernel", "gpu-opt", "kernel", [&] {
      const reconstruct::Variant* gpu_opt = lookup(reconstruct::variants(), "gpu-opt");
      return gpu_opt ? time_recon(*gpu_opt, in.marker, in.mask, in.reference, opt, "kernel", run.reps)
                     : absent("reconstruct", "gpu-opt", "kernel");
    });
    for (int launch : launches) {
      LadderBlock b;
      b.marker = marker;
      b.connectivity = 4;
      b.blocks_per_sm = launch;
      b.dataset = in.spec;
      b.reference = reference;
      opt.queue_blocks_per_sm = launch;
      for (int s : scans) {
        if (!run.replaying())
          std::fprintf(stderr, "repix table iwpp-table1: %s, blocks per SM %d, %d raster scan pairs...\n",
                       marker.c_str(), launch, s);
        LadderRow row;
        row.raster_scans = s;
        opt.raster_scans = s;
        for (const char* id : kQueueLadder) {
          const std::string key = marker + " blocks-per-sm " + std::to_string(launch) + " raster-scans " +
                                  std::to_string(s) + " " + id + " kernel";
          row.queues.push_back(run.timing(key, id, "kernel", [&] {
            const reconstruct::Variant* v = lookup(reconstruct::variants(), id);
            return v ? time_recon(*v, in.marker, in.mask, in.reference, opt, "kernel", run.reps)
                     : absent("reconstruct", id, "kernel");
          }));
        }
        b.rows.push_back(std::move(row));
      }
      blocks.push_back(std::move(b));
    }
  }
  run.session->stamp(run.meta);
  std::cout << iwpp_table1(run.paper, blocks, run.meta, run.out_dir, run.wall_s());
  std::fprintf(stderr, "repix table iwpp-table1: %.1f s\n", run.wall_s());
  for (const auto& b : blocks) {
    if (b.reference.failed()) return 1;
    for (const auto& r : b.rows)
      for (const auto& t : r.queues)
        if (t.failed()) return 1;
  }
  return 0;
}

// ---- the speedup tables ----

// 1 when something that ran was not verified or a measurement stopped with an error.
int exit_code(const SpeedupTable& t) {
  for (const auto& r : t.rows) {
    if (r.seq.failed()) return 1;
    for (const auto& c : r.cells)
      if (c.failed()) return 1;
  }
  return 0;
}

int finish(Run& run, SpeedupTable& t) {
  t.id = run.id;
  t.wall_s = run.wall_s();
  run.session->stamp(run.meta);
  std::cout << speedup_table(run.paper, t, run.meta, run.out_dir);
  std::fprintf(stderr, "repix table %s: %.1f s\n", run.id.c_str(), t.wall_s);
  return exit_code(t);
}

// Each GPU variant of `ids` in both scopes (absent ones noted once per scope).
template <class V, class TimeFn>
void gpu_cells(const Run& run, SpeedupRow& row, const std::vector<V>& all, const std::string& family,
               const std::vector<std::string>& ids, TimeFn time) {
  for (const auto& id : ids)
    for (const char* scope : {"kernel", "end-to-end"})
      row.cells.push_back(run.timing(row.label + " " + id + " " + scope, id, scope, [&] {
        const V* v = lookup(all, id);
        return v ? time(*v, scope) : absent(family, id, scope);
      }));
}

SpeedupRow recon_row(const Run& run, const std::string& label, const std::string& spec, int connectivity,
                     const std::vector<std::string>& ids) {
  const ReconInput in = recon_input(run, spec, connectivity, run.reps);
  SpeedupRow row;
  row.label = label;
  row.dataset = in.spec;
  row.seq = in.seq;
  reconstruct::Options opt;
  opt.connectivity = connectivity;
  gpu_cells(run, row, reconstruct::variants(), "reconstruct", ids, [&](const reconstruct::Variant& v, const std::string& scope) {
    std::fprintf(stderr, "repix table %s: %s %s %s...\n", run.id.c_str(), label.c_str(), v.id.c_str(), scope.c_str());
    return time_recon(v, in.marker, in.mask, in.reference, opt, scope, run.reps);
  });
  return row;
}

SpeedupRow edt_row(const Run& run, const std::string& label, const std::string& spec, const std::vector<std::string>& ids) {
  const EdtInput in = edt_input(run, spec, run.reps);
  SpeedupRow row;
  row.label = label;
  row.dataset = in.spec;
  row.seq = in.seq;
  gpu_cells(run, row, edt::variants(), "edt", ids, [&](const edt::Variant& v, const std::string& scope) {
    std::fprintf(stderr, "repix table %s: %s %s %s...\n", run.id.c_str(), label.c_str(), v.id.c_str(), scope.c_str());
    return time_edt(v, in, distances_only(), scope, run.reps);
  });
  return row;
}

// The paper's row whose `key` equals `value`, or {}.
std::function<json(const SpeedupRow&)> paper_by(const json& paper, const std::string& key,
                                                std::function<json(const SpeedupRow&)> value_of) {
  return [paper, key, value_of](const SpeedupRow& r) {
    const json want = value_of(r);
    const json* p = paper_row(paper, [&](const json& row) { return field_or(row, key, json()) == want; });
    return p ? *p : json();
  };
}

SpeedupTable titled(const std::string& title, const std::string& x_label) {
  SpeedupTable t;
  t.title = title;
  t.x_label = x_label;
  return t;
}

const std::vector<std::string> kFhSr = {"gpu-queue-tq", "gpu-opt", "gpu-sr"};
const std::vector<std::pair<std::string, std::string>> kFhOverSr = {{"gpu-queue-tq", "gpu-sr"}, {"gpu-opt", "gpu-sr"}};

int table2(Run& run) {
  SpeedupTable t = titled("IWPP paper Table 2: distance transform speedup over one core vs image size", "size");
  const auto sizes = run.pick({64, 96}, {4096, 8192, 16384});
  t.explanation = std::string("Inputs: `blobs` masks of each size, fill 0.99, ball radius 24 (4 below 1024^2): the "
                  "stand-in for a tile with 100 % tissue (foreground blobs covering 99 %, zero background between "
                  "them). ") + kEdtTimed + " " + seq_runs_text(run.reps) +
                  " `--sizes paper` stops at 16384^2: seq alone would take minutes at 32768^2 (the device round's "
                  "budget for all IWPP tables is ~6 min); `--sizes 4096,8192,16384,32768` adds it.";
  for (std::int64_t n : sizes) t.rows.push_back(edt_row(run, size_label(n), edt_spec(n, 100), {"gpu-opt", "gpu-queue-tq"}));
  t.paper_row = paper_by(run.paper, "size", [](const SpeedupRow& r) {
    return json(std::stoll(r.label.substr(0, r.label.find('^'))));
  });
  return finish(run, t);
}

int fig10(Run& run) {
  SpeedupTable t = titled("IWPP paper Figure 10: multicore reconstruction, tiled vs non-tiled, speedup over seq vs threads", "threads");
  // 4096^2 (the paper's Table 1 tile): omp-nontiled runs ~9x longer than seq, so 8192^2 would
  // cost over a minute of the device round for this CPU-only figure.
  const std::int64_t n = run.pick_one(128, 4096);
  // The measuring machine's cores decide the rows: the journal's count when replaying.
  const int cores = run.session->take<int>("cores", [] { return omp_get_num_procs(); }).value_or(omp_get_num_procs());
  std::vector<int> threads;
  if (run.args->has("threads")) {
    for (auto x : parse_list(run.args->get("threads"), "threads", 1, 4096)) threads.push_back(static_cast<int>(x));
  } else {
    for (int x : {1, 2, 4, 8, 12, 16})
      if (x <= cores) threads.push_back(x);
    if (cores < 16 && threads.back() != cores) threads.push_back(cores);
  }
  const ReconInput in = recon_input(run, tissue_spec(n, 100, "opening"), 8, run.reps);
  t.explanation = "Input " + in.spec + ", 8-connectivity. `omp-tiled` (the paper's tile-based parallelisation: FH per tile, "
                  "then border rounds) and `omp-nontiled` (the initial wavefront dealt round-robin to the threads, "
                  "atomic compare-and-swap updates) with Options::threads = the row's count, host clock, on the "
                  "machine's " + std::to_string(cores) + " cores (counts above that are left out). seq = FH on one "
                  "core; speedup = seq / variant. Every output equals seq's pixel for pixel. " + seq_runs_text(run.reps);
  for (int th : threads) {
    SpeedupRow row;
    row.label = std::to_string(th);
    row.dataset = in.spec;
    row.seq = in.seq;
    reconstruct::Options opt;
    opt.connectivity = 8;
    opt.threads = th;
    for (const char* id : {"omp-tiled", "omp-nontiled"})
      row.cells.push_back(run.timing("threads " + row.label + " " + id + " end-to-end", id, "end-to-end", [&] {
        std::fprintf(stderr, "repix table iwpp-fig10: %s with %d threads...\n", id, th);
        const reconstruct::Variant* v = lookup(reconstruct::variants(), id);
        return v ? time_recon(*v, in.marker, in.mask, in.reference, opt, "end-to-end", run.reps)
                 : absent("reconstruct", id, "end-to-end");
      }));
    t.rows.push_back(std::move(row));
  }
  t.paper_row = paper_by(run.paper, "threads", [](const SpeedupRow& r) { return json(std::stoi(r.label)); });
  t.paper_key = "tiled_speedup";
  t.compare = {{"omp-tiled", "omp-nontiled"}};
  return finish(run, t);
}

int fig11(Run& run) {
  SpeedupTable t = titled("IWPP paper Figure 11: reconstruction FH_GPU vs SR_GPU speedups over one core vs image size", "size");
  const auto sizes = run.pick({64, 96}, {4096, 8192, 16384});
  t.explanation = "Inputs: tissue masks with 100 % coverage and their opening markers (" + tissue_spec(sizes.back(), 100, "opening") +
                  " ...), 8-connectivity, one image per size (the paper cuts a 64K x 64K image into tiles of the "
                  "size; we run whole images of it). FH_GPU = `gpu-queue-tq` (the paper's queue) and `gpu-opt` "
                  "(ours, tiled wavefronts); SR_GPU = `gpu-sr` (raster scans until stable). " + kReconTimed + " " +
                  seq_runs_text(run.reps) + " `--sizes paper` stops at 16384^2 (the paper saw no gain beyond 16K): "
                  "32768^2 adds over a minute of input generation and seq to the device round; "
                  "`--sizes 4096,8192,16384,32768` adds it.";
  for (std::int64_t n : sizes)
    t.rows.push_back(recon_row(run, size_label(n), tissue_spec(n, 100, "opening"), 8, kFhSr));
  t.compare = kFhOverSr;
  return finish(run, t);
}

int fig13(Run& run) {
  SpeedupTable t = titled("IWPP paper Figure 13: reconstruction FH_GPU vs SR_GPU speedups over one core vs tissue coverage", "coverage");
  const std::int64_t n = run.pick_one(96, 8192);
  t.explanation = "Inputs: " + size_label(n) + " tissue masks with 25, 50, 75 and 100 % coverage and their opening "
                  "markers, 8-connectivity (the paper: 64K x 64K images in 16K x 16K tiles; ours: one image per "
                  "coverage). FH_GPU = `gpu-queue-tq` and `gpu-opt`; SR_GPU = `gpu-sr`. " + kReconTimed + " " +
                  seq_runs_text(run.reps);
  for (int c : {25, 50, 75, 100})
    t.rows.push_back(recon_row(run, std::to_string(c) + " %", tissue_spec(n, c, "opening"), 8, kFhSr));
  t.compare = kFhOverSr;
  return finish(run, t);
}

int fig14(Run& run) {
  SpeedupTable t = titled("IWPP paper Figure 14: distance transform speedup over one core vs tissue coverage", "coverage");
  const std::int64_t n = run.pick_one(96, 8192);
  t.explanation = "Inputs: " + size_label(n) + " blob masks covering 25, 50, 75 and 99 % (" + edt_spec(n, 25) +
                  " ...: foreground blobs on zero background; the tissue masks have no zero background at 100 %, "
                  "where every distance would be infinite, so 100 % is the generator's maximum, 99 %). " + kEdtTimed +
                  " " + seq_runs_text(run.reps);
  for (int c : {25, 50, 75, 100}) t.rows.push_back(edt_row(run, std::to_string(c) + " %", edt_spec(n, c), {"gpu-opt", "gpu-queue-tq"}));
  return finish(run, t);
}

// ---- iwpp-fig15 / fig16: the multi-device variant ----

std::vector<MultiConfig> multi_configs(const Run& run, std::string& note) {
  // The measuring machine's cores decide the CPU groups: the journal's count when replaying.
  const int cores = run.session->take<int>("cores", [] { return omp_get_num_procs(); }).value_or(omp_get_num_procs());
  const int remaining = cores - 2;  // one host thread drives each of the 2 GPUs
  int threads = run.args->get_int("cpu-group-threads", 4);
  threads = std::max(1, std::min(threads, std::max(1, remaining)));
  const int groups = run.args->get_int("cpu-groups", std::max(1, remaining / threads));
  note = std::to_string(groups) + " CPU group" + (groups == 1 ? "" : "s") + " of " + std::to_string(threads) +
         " threads (" + std::to_string(cores) + " cores, 2 driving the GPUs)";
  return {{"1 GPU", 1, 0, 0}, {"2 GPUs", 2, 0, 0}, {"2 GPUs + CPU groups", 2, groups, threads}};
}

// The family's multi-device variant; a clear error, before any input is generated, when absent.
template <class V>
const V& require_multi_device(const Run& run, const std::vector<V>& all, const std::string& family) {
  const V* v = lookup(all, "multi-device");
  if (!v)
    throw Error(run.id + " needs the " + family + " variant `multi-device` (branch `multi`), which this build does not register");
  return *v;
}

template <class V, class TimeFn>
SpeedupTable multi_table(const Run& run, const V* v, const Timing& seq, const std::string& dataset, TimeFn time) {
  SpeedupTable t;
  std::string groups_note;
  const int gpus = run.replaying() ? 0 : visible_gpus();  // replaying: the journal's verdicts
  for (const MultiConfig& c : multi_configs(run, groups_note)) {
    SpeedupRow row;
    row.label = c.label;
    row.dataset = dataset;
    row.seq = seq;
    if (c.cpu_groups > 0) row.note = groups_note;
    row.cells.push_back(run.timing(c.label + " " + v->id + " end-to-end", v->id, "end-to-end", [&] {
      if (gpus == 0) return guarded(v->id, "end-to-end", [](Timing& x) { x.not_run = "no GPU"; });
      if (c.gpus > gpus)
        return guarded(v->id, "end-to-end", [&](Timing& x) {
          x.not_run = "skipped: " + std::to_string(gpus) + " GPU" + (gpus == 1 ? "" : "s") + " visible";
        });
      std::fprintf(stderr, "repix table %s: %s...\n", run.id.c_str(), c.label.c_str());
      return time(*v, c);
    }));
    t.rows.push_back(std::move(row));
  }
  t.x_label = "configuration";
  t.compare_rows = {{"2 GPUs", "1 GPU"}, {"2 GPUs + CPU groups", "2 GPUs"}, {"2 GPUs + CPU groups", "1 GPU"}};
  // The paper's last configuration had 3 GPUs and the CPUs: shown beside ours with CPU groups.
  t.paper_row = [paper = run.paper](const SpeedupRow& r) {
    const std::string want = r.label == "2 GPUs + CPU groups" ? "3 GPUs + CPU" : r.label;
    const json* p = paper_row(paper, [&](const json& row) { return field_or(row, "config", std::string()) == want; });
    return p ? *p : json();
  };
  return t;
}

const char* kMultiTimed =
    "`multi-device` end to end (host image in, host result out: the image is cut into tiles dealt on demand to the "
    "GPUs and CPU groups; host clock, after one untimed run), with Options gpus / cpu_groups / cpu_group_threads "
    "per row. The paper's configurations were 1, 2 and 3 GPUs and 3 GPUs + 9 CPU cores; the \"paper x seq\" "
    "column of our \"2 GPUs + CPU groups\" row is the paper's 3 GPUs + CPU. Rows needing more GPUs than are "
    "visible are skipped and said so.";

int fig15(Run& run) {
  const std::int64_t n = run.pick_one(128, 32768);
  const reconstruct::Variant& multi = require_multi_device(run, reconstruct::variants(), "reconstruct");
  const ReconInput in = recon_input(run, tissue_spec(n, 100, "opening"), 8, run.reps);
  SpeedupTable t = multi_table(run, &multi, in.seq, in.spec,
                               [&](const reconstruct::Variant& v, const MultiConfig& c) {
                                 reconstruct::Options opt;
                                 opt.connectivity = 8;
                                 apply_multi_device(opt, c);
                                 return time_recon(v, in.marker, in.mask, in.reference, opt, "end-to-end", run.reps);
                               });
  t.title = "IWPP paper Figure 15: reconstruction on several GPUs and CPU groups, speedup over one core";
  t.explanation = "Input " + in.spec + ", 8-connectivity (the paper: 96K x 96K, the largest image its host memory "
                  "held; ours: " + size_label(n) + ", where one seq run takes seconds, not minutes). " + kMultiTimed +
                  " seq = FH on one core; every output equals seq's pixel for pixel. " + seq_runs_text(run.reps);
  return finish(run, t);
}

int fig16(Run& run) {
  const std::int64_t n = run.pick_one(128, 16384);
  const edt::Variant& multi = require_multi_device(run, edt::variants(), "edt");
  const EdtInput in = edt_input(run, edt_spec(n, 100), run.reps);
  SpeedupTable t = multi_table(run, &multi, in.seq, in.spec, [&](const edt::Variant& v, const MultiConfig& c) {
    edt::Options opt = distances_only();
    apply_multi_device(opt, c);
    return time_edt(v, in, opt, "end-to-end", run.reps);
  });
  t.title = "IWPP paper Figure 16: distance transform on several GPUs and CPU groups, speedup over one core";
  t.explanation = "Input " + in.spec + " (the stand-in for 100 % tissue; the paper: 64K x 64K; ours: " + size_label(n) +
                  ", where seq takes tens of seconds). " + kMultiTimed + " seq = Algorithm 3 on one core, distances "
                  "only; every output is checked against seq-exact (propagation properties). " + seq_runs_text(run.reps);
  return finish(run, t);
}

struct TableDef {
  const char* id;
  const char* extra_usage;
  std::vector<std::string> extra_options;
  int (*measure)(Run&);
};

const std::vector<TableDef>& defs() {
  static const std::vector<TableDef> d = {
      {"iwpp-table1", " [--markers opening,frame] [--raster-scans 7,9,...] [--blocks-per-sm 1,0]",
       {"markers", "raster-scans", "blocks-per-sm"}, table1},
      {"iwpp-table2", "", {}, table2},
      {"iwpp-fig10", " [--threads 1,2,4]", {"threads"}, fig10},
      {"iwpp-fig11", "", {}, fig11},
      {"iwpp-fig13", "", {}, fig13},
      {"iwpp-fig14", "", {}, fig14},
      {"iwpp-fig15", " [--cpu-groups N] [--cpu-group-threads N]", {"cpu-groups", "cpu-group-threads"}, fig15},
      {"iwpp-fig16", " [--cpu-groups N] [--cpu-group-threads N]", {"cpu-groups", "cpu-group-threads"}, fig16},
  };
  return d;
}

const TableDef& def(const std::string& id) {
  for (const auto& d : defs())
    if (id == d.id) return d;
  throw Error("internal: no IWPP table '" + id + "'");
}

}  // namespace

std::string iwpp_table_usage(const std::string& id) {
  return std::string("[--sizes small|quick|paper|N,N,...] [--reps N] [--out DIR] [--paper P.json]") + def(id).extra_usage +
         " | --from JOURNAL [--out DIR]";
}

int run_iwpp_table(const std::string& id, const cli::Args& given) {
  const TableDef& d = def(id);
  Session session(id, given);
  const cli::Args& a = session.args();
  std::vector<std::string> known = {"sizes", "reps", "out", "out-dir", "paper"};
  known.insert(known.end(), d.extra_options.begin(), d.extra_options.end());
  a.only(known);
  if (a.has("out") && a.has("out-dir")) throw cli::UsageError("give --out or --out-dir, not both");
  Run run;
  run.id = id;
  run.args = &a;
  run.session = &session;
  const std::string sizes = a.get("sizes", "paper");
  if (sizes == "small" || sizes == "quick") run.small = true;  // quick: the name the ECC tables use
  else if (sizes != "paper") run.sizes = parse_list(sizes, "sizes", 1, 1 << 20);
  const int reps = a.get_int("reps", run.small ? 2 : 5);
  if (reps < 1) throw cli::UsageError("--reps must be at least 1");
  run.reps.gpu = reps;
  run.reps.cpu = std::min(reps, 3);
  run.paper = load_paper(id, a.get("paper"));
  run.meta = session.meta("repix table " + id, sizes);
  run.out_dir = a.get("out", a.get("out-dir", session.default_out_dir()));
  session.start(run.out_dir, id, run.meta);
  const int code = d.measure(run);
  session.done();  // the table is written (whatever the verdict): its journal has served
  return code;
}

}  // namespace repix::tables
