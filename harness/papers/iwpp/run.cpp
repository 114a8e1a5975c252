// Measuring the IWPP paper tables (see tables.hpp) through the families' own measurement
// (family::Family::problem/measure: the adapters' runs, checks and the bench's kernel timer).
// Inputs are generated once per row; the single-core baseline runs first (reconstruct: seq, whose
// first output is the reference every variant must equal pixel for pixel; edt: seq, checked
// against seq-exact with sites like every variant: propagation properties for wave variants,
// identity for exact ones). A variant is checked on its first output before any of its timed
// samples count, and kernel-scope timings check the timed path's own output again at the end. A
// failure inside one measurement (GPU out of memory, a variant's error) marks that cell and the
// command exits 1 after writing the table.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>

#include "core/error.hpp"
#include "core/gpu.hpp"
#include "datasets/spec.hpp"
#include "harness/bench.hpp"
#include "harness/env.hpp"
#include "harness/family.hpp"
#include "harness/json_fields.hpp"
#include "harness/papers/iwpp/tables.hpp"

namespace repix::tables {

using json_fields::field_or;

using nlohmann::json;

namespace {

// ---- how many runs ------------------------------------------------------------------------------

// GPU variants: --reps samples after one untimed warm-up. CPU variants (seq included): at most
// min(--reps, 3) runs, stopping once they add up to a second (one run at least): seq takes seconds
// to a minute at 8192^2-32768^2, omp-nontiled ~10x seq, and the device round is short. The tables
// show how many runs each median has.
bench::Reps table_reps(int reps) {
  bench::Reps r;
  r.gpu_samples = reps;
  r.warmup = 1;
  r.cpu_samples = std::min(reps, 3);
  r.cpu_budget_ms = 1000;
  return r;
}

// ---- registry look-ups that may fail ------------------------------------------------------------

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

// A family's options as on a command line ({"connectivity", "4"}, ...), for Family::problem/measure.
cli::Args family_options(std::initializer_list<std::pair<const char*, std::string>> kv) {
  cli::Args a;
  for (const auto& [k, v] : kv) a.options.emplace(k, v);
  return a;
}

// One table run: what it measures (from its options) and where the measurements go (its Session:
// measured and journalled, or read back from a journal with --from).
struct Run {
  std::string id;
  Meta meta;
  json paper;
  std::string out_dir;
  bool small = false;
  std::vector<std::int64_t> sizes;  // --sizes N,N,... (empty: the table's own)
  bench::Reps reps;
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

// ---- a row's input: the family's problem (inputs, reference) and the single-core baseline ----

struct Input {
  std::string spec;  // canonical
  std::unique_ptr<family::Family::Problem> problem;  // measuring only (replaying: nothing generated)
  Timing seq;
};

// Generates the inputs of `spec` for `family` with its options `base` and times `seq`, the
// paper's single-core baseline (reconstruct: also the reference, from its first run; edt: checked
// against seq-exact, computed first). Replaying, only seq's timing from the journal.
Input input(const Run& run, const std::string& family, const std::string& spec, const cli::Args& base,
            const bench::Reps& reps) {
  Input in;
  in.spec = datasets::Spec::parse(spec).str();
  in.seq = run.timing("seq " + in.spec, "seq", "end-to-end", [&] {
    std::fprintf(stderr, "repix table %s: generating %s...\n", run.id.c_str(), in.spec.c_str());
    const family::Family& f = family::find(family);
    in.problem = f.problem(spec, base);
    std::fprintf(stderr, "repix table %s: seq...\n", run.id.c_str());
    return f.measure(*in.problem, "seq", "end-to-end", reps, {});
  });
  return in;
}

// `variant` on the row's input in `scope` (a journalled cell).
Timing cell(const Run& run, const std::string& family, Input& in, const std::string& key, const std::string& variant,
            const std::string& scope, const cli::Args& options = {}, const bench::Reps* reps = nullptr) {
  return run.timing(key, variant, scope, [&] {
    return family::find(family).measure(*in.problem, variant, scope, reps ? *reps : run.reps, options);
  });
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

std::string seq_runs_text(const bench::Reps& r) {
  return "CPU variants (seq included) run up to " + std::to_string(r.cpu_samples) + " times, stopping once their runs "
         "add up to " + fmt("%.0f", r.cpu_budget_ms / 1e3) + " s (seq's run count is in its column: one run at "
         "the large sizes); GPU variants " + std::to_string(r.gpu_samples) + " samples. Times are medians.";
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
    bench::Reps once = run.reps;  // seq is only the reference here: one run
    once.cpu_samples = 1;
    Input in = input(run, "reconstruct", tissue_spec(n, 100, marker), family_options({{"connectivity", "4"}}), once);
    const Timing reference = cell(run, "reconstruct", in, "reference " + marker + " gpu-opt kernel", "gpu-opt", "kernel");
    // Each sample's own stats: the propagation kernels' time (Stats::wavefront_ms), the paper's
    // "wavefront phase".
    bench::Reps ladder = run.reps;
    ladder.sample_stats = true;
    for (int launch : launches) {
      LadderBlock b;
      b.marker = marker;
      b.connectivity = 4;
      b.blocks_per_sm = launch;
      b.dataset = in.spec;
      b.reference = reference;
      for (int s : scans) {
        if (!run.replaying())
          std::fprintf(stderr, "repix table iwpp-table1: %s, blocks per SM %d, %d raster scan pairs...\n",
                       marker.c_str(), launch, s);
        LadderRow row;
        row.raster_scans = s;
        const cli::Args opt = family_options({{"raster-scans", std::to_string(s)},
                                              {"queue-blocks-per-sm", std::to_string(launch)}});
        for (const char* id : kQueueLadder) {
          const std::string key = marker + " blocks-per-sm " + std::to_string(launch) + " raster-scans " +
                                  std::to_string(s) + " " + id + " kernel";
          row.queues.push_back(cell(run, "reconstruct", in, key, id, "kernel", opt, &ladder));
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

// A speedup row: `family`'s input of `spec` and each variant of `ids` in both scopes (absent ones
// noted once per scope).
SpeedupRow speedup_row(const Run& run, const std::string& family, const std::string& label, const std::string& spec,
                       const cli::Args& base, const std::vector<std::string>& ids) {
  Input in = input(run, family, spec, base, run.reps);
  SpeedupRow row;
  row.label = label;
  row.dataset = in.spec;
  row.seq = in.seq;
  for (const auto& id : ids)
    for (const char* scope : {"kernel", "end-to-end"}) {
      if (!run.replaying())
        std::fprintf(stderr, "repix table %s: %s %s %s...\n", run.id.c_str(), label.c_str(), id.c_str(), scope);
      row.cells.push_back(cell(run, family, in, row.label + " " + id + " " + scope, id, scope, base));
    }
  return row;
}

SpeedupRow recon_row(const Run& run, const std::string& label, const std::string& spec, int connectivity,
                     const std::vector<std::string>& ids) {
  return speedup_row(run, "reconstruct", label, spec, family_options({{"connectivity", std::to_string(connectivity)}}), ids);
}

SpeedupRow edt_row(const Run& run, const std::string& label, const std::string& spec, const std::vector<std::string>& ids) {
  return speedup_row(run, "edt", label, spec, {}, ids);
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
  Input in = input(run, "reconstruct", tissue_spec(n, 100, "opening"), family_options({{"connectivity", "8"}}), run.reps);
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
    for (const char* id : {"omp-tiled", "omp-nontiled"}) {
      if (!run.replaying()) std::fprintf(stderr, "repix table iwpp-fig10: %s with %d threads...\n", id, th);
      row.cells.push_back(cell(run, "reconstruct", in, "threads " + row.label + " " + id + " end-to-end", id,
                               "end-to-end", family_options({{"threads", std::to_string(th)}})));
    }
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

// A configuration of the multi-device variant's workers (its family's --gpus, --cpu-groups,
// --cpu-group-threads).
struct MultiConfig {
  std::string label;  // "1 GPU", "2 GPUs", "2 GPUs + CPU groups"
  int gpus = 1;
  int cpu_groups = 0;
  int cpu_group_threads = 0;
};

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

// The family's multi-device variant must be registered: a clear error, before any input is
// generated, when it is not.
void require_multi_device(const Run& run, const std::string& family) {
  for (const auto& v : family::find(family).variants())
    if (v.id == "multi-device") return;
  throw Error(run.id + " needs the " + family + " variant `multi-device`, which this build does not register");
}

// One row per configuration: `family`'s multi-device variant end to end on the row's input.
SpeedupTable multi_table(const Run& run, const std::string& family, Input& in, const cli::Args& base) {
  SpeedupTable t;
  std::string groups_note;
  const int gpus = run.replaying() ? 0 : visible_gpus();  // replaying: the journal's verdicts
  for (const MultiConfig& c : multi_configs(run, groups_note)) {
    SpeedupRow row;
    row.label = c.label;
    row.dataset = in.spec;
    row.seq = in.seq;
    if (c.cpu_groups > 0) row.note = groups_note;
    cli::Args opt = base;
    opt.options.emplace("gpus", std::to_string(c.gpus));
    opt.options.emplace("cpu-groups", std::to_string(c.cpu_groups));
    opt.options.emplace("cpu-group-threads", std::to_string(c.cpu_group_threads));
    row.cells.push_back(run.timing(c.label + " multi-device end-to-end", "multi-device", "end-to-end", [&] {
      Timing skipped;
      skipped.variant = "multi-device";
      skipped.scope = "end-to-end";
      if (gpus == 0) {
        skipped.not_run = "no GPU";
        return skipped;
      }
      if (c.gpus > gpus) {
        skipped.not_run = "skipped: " + std::to_string(gpus) + " GPU" + (gpus == 1 ? "" : "s") + " visible";
        return skipped;
      }
      std::fprintf(stderr, "repix table %s: %s...\n", run.id.c_str(), c.label.c_str());
      return family::find(family).measure(*in.problem, "multi-device", "end-to-end", run.reps, opt);
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
    "GPUs and CPU groups; host clock, after one untimed run), with its family's --gpus / --cpu-groups / "
    "--cpu-group-threads per row. The paper's configurations were 1, 2 and 3 GPUs and 3 GPUs + 9 CPU cores; the "
    "\"paper x seq\" column of our \"2 GPUs + CPU groups\" row is the paper's 3 GPUs + CPU. Rows needing more GPUs "
    "than are visible are skipped and said so.";

int fig15(Run& run) {
  const std::int64_t n = run.pick_one(128, 32768);
  require_multi_device(run, "reconstruct");
  const cli::Args base = family_options({{"connectivity", "8"}});
  Input in = input(run, "reconstruct", tissue_spec(n, 100, "opening"), base, run.reps);
  SpeedupTable t = multi_table(run, "reconstruct", in, base);
  t.title = "IWPP paper Figure 15: reconstruction on several GPUs and CPU groups, speedup over one core";
  t.explanation = "Input " + in.spec + ", 8-connectivity (the paper: 96K x 96K, the largest image its host memory "
                  "held; ours: " + size_label(n) + ", where one seq run takes seconds, not minutes). " + kMultiTimed +
                  " seq = FH on one core; every output equals seq's pixel for pixel. " + seq_runs_text(run.reps);
  return finish(run, t);
}

int fig16(Run& run) {
  const std::int64_t n = run.pick_one(128, 16384);
  require_multi_device(run, "edt");
  Input in = input(run, "edt", edt_spec(n, 100), {}, run.reps);
  SpeedupTable t = multi_table(run, "edt", in, {});
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
  run.reps = table_reps(reps);
  run.paper = load_paper(id, a.get("paper"));
  run.meta = session.meta("repix table " + id, sizes);
  run.out_dir = a.get("out", a.get("out-dir", session.default_out_dir()));
  session.start(run.out_dir, id, run.meta);
  const int code = d.measure(run);
  session.done();  // the table is written (whatever the verdict): its journal has served
  return code;
}

}  // namespace repix::tables
