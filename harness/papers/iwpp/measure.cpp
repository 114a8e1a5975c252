// Measuring the IWPP paper tables (see tables.hpp, measure.hpp) through the families' own measurement
// (family::Family::problem/measure: the adapters' runs, checks and the bench's kernel timer).
// Inputs are generated once per row; the single-core baseline runs first (reconstruct: seq, whose
// first output is the reference every variant must equal pixel for pixel; edt: seq, checked
// against seq-exact with sites like every variant: propagation properties for wave variants,
// identity for exact ones). A variant is checked on its first output before any of its timed
// samples count, and kernel-scope timings check the timed path's own output again at the end. A
// failure inside one measurement (GPU out of memory, a variant's error) marks that cell and the
// command exits 1 after writing the table.
#include "harness/papers/iwpp/measure.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <limits>

#include "core/error.hpp"
#include "core/gpu.hpp"
#include "core/host_limits.hpp"
#include "datasets/spec.hpp"
#include "harness/json_fields.hpp"
#include "harness/options.hpp"

namespace repix::tables::iwpp_paper {

using json_fields::field_or;
using nlohmann::json;

int visible_gpus() {
  if (!gpu_available()) return 0;
  int n = 0;
  REPIX_CUDA(cudaGetDeviceCount(&n));
  return n;
}

cli::Args family_options(std::initializer_list<std::pair<const char*, std::string>> kv) {
  cli::Args a;
  for (const auto& [k, v] : kv) a.options.emplace(k, v);
  return a;
}

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

Timing cell(const Run& run, const std::string& family, Input& in, const std::string& key, const std::string& variant,
            const std::string& scope, const cli::Args& options, const bench::Reps* reps) {
  return run.timing(key, variant, scope, [&] {
    return family::find(family).measure(*in.problem, variant, scope, reps ? *reps : run.reps, options);
  });
}

// ---- the inputs and the words under the tables ----------------------------------------------------

std::string size_label(std::int64_t n) { return std::to_string(n) + "^2"; }
std::string tissue_spec(std::int64_t n, int coverage, const std::string& marker) {
  return "tissue:" + std::to_string(n) + "x" + std::to_string(n) + ":coverage=" + std::to_string(coverage) +
         ":marker=" + marker;
}
std::string edt_spec(std::int64_t n, int coverage) {
  const int fill = std::min(coverage, 99);
  return "blobs:" + std::to_string(n) + "x" + std::to_string(n) + ":radius=" + (n >= 1024 ? "24" : "4") +
         ":fill=0." + (fill < 10 ? "0" : "") + std::to_string(fill);
}

const char* const kReconTimed =
    "GPU variants in two scopes: kernel (inputs already on the GPU, CUDA events, L2 flushed before each sample, "
    "median after one warm-up) and end-to-end (host marker and mask in, host result out: allocation, uploads, "
    "download; host clock, after one untimed run). seq = Vincent's fast hybrid on one core (the paper's "
    "single-core baseline); speedup = seq / variant. Every variant's output equals seq's pixel for pixel "
    "(checked before timing, and on the kernel-scope timed path again).";
const char* const kEdtTimed =
    "GPU variants in two scopes: kernel (input on the GPU, distances only, CUDA events, L2 flushed, median after "
    "one warm-up) and end-to-end (host image in, host distances out, host clock, after an untimed run with sites). "
    "seq = the paper's Algorithm 3 (8-neighbour nearest-site propagation with a FIFO) on one core, distances only; "
    "speedup = seq / variant. Every output (seq's too) is checked against seq-exact (the exact EDT, with sites): "
    "propagation properties for wave variants, identity for exact ones (`gpu-opt` is an exact separable EDT, not "
    "the paper's wavefront; `gpu-queue-tq` is the paper's queue, where registered).";

std::string seq_runs_text(const bench::Reps& r) { return bench::table_reps_text(r); }

// ---- the speedup tables ---------------------------------------------------------------------------

namespace {

// 1 when something that ran was not verified or a measurement stopped with an error.
int exit_code(const SpeedupTable& t) {
  for (const auto& r : t.rows) {
    if (r.seq.failed()) return 1;
    for (const auto& c : r.cells)
      if (c.failed()) return 1;
  }
  return 0;
}

}  // namespace

int finish(Run& run, SpeedupTable& t) {
  t.id = run.id;
  t.wall_s = run.wall_s();
  run.session->stamp(run.meta);
  std::cout << speedup_table(run.paper, t, run.meta, run.out_dir);
  std::fprintf(stderr, "repix table %s: %.1f s\n", run.id.c_str(), t.wall_s);
  return exit_code(t);
}

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

// ---- the command ----------------------------------------------------------------------------------

TableInfo table_info(const TableDef& def) {
  const std::string usage = std::string("[--sizes small|quick|paper|N,N,...] [--reps N] [--out DIR] [--paper P.json]") +
                            def.extra_usage + " | --from JOURNAL [--out DIR]";
  return {def.id, def.description, usage, [def](const cli::Args& given) {
            const std::string id = def.id;
            Session session(id, given);
            const cli::Args& a = session.args();
            std::vector<std::string> known = {"sizes", "reps", "out", "out-dir", "paper"};
            known.insert(known.end(), def.extra_options.begin(), def.extra_options.end());
            a.only(known);
            if (a.has("out") && a.has("out-dir")) throw cli::UsageError("give --out or --out-dir, not both");
            // Thread counts (Figure 10's rows, the multi-device tables' workers) are refused before
            // anything is measured or written; a journal being replayed measures nothing.
            if (!session.replaying()) {
              if (a.has("threads"))
                for (auto x : parse_list(a.get("threads"), "threads", 1, std::numeric_limits<int>::max()))
                  options::check_thread_count("threads", x);
              for (const char* k : {"cpu-groups", "cpu-group-threads"})
                if (a.has(k)) options::check_thread_count(k, a.get_int(k, 0));
            }
            Run run;
            run.id = id;
            run.args = &a;
            run.session = &session;
            const std::string sizes = a.get("sizes", "paper");
            if (sizes == "small" || sizes == "quick") run.small = true;  // quick: the name the ECC tables use
            else if (sizes != "paper") run.sizes = parse_list(sizes, "sizes", 1, 1 << 20);
            const int reps = a.get_int("reps", run.small ? 2 : 5);
            if (reps < 1) throw cli::UsageError("--reps must be at least 1");
            run.reps = bench::table_reps(reps);
            run.paper = load_paper(id, a.get("paper"), id);
            // Every input of these tables is an n x n image of at least a byte a pixel: a size the
            // machine cannot hold is refused now, before the journal is opened (each input's full
            // estimate is checked again when it is generated: Family::problem).
            if (!session.replaying())
              for (std::int64_t n : run.sizes)
                require_host_memory(static_cast<std::uint64_t>(n) * static_cast<std::uint64_t>(n),
                                    id + " at " + size_label(n) + " (its inputs at least)");
            run.meta = session.meta("repix table " + id, sizes);
            run.out_dir = a.get("out", a.get("out-dir", session.default_out_dir()));
            session.start(run.out_dir, id, run.meta);
            const int code = def.measure(run);
            session.done();  // the table is written (whatever the verdict): its journal has served
            return code;
          }};
}

}  // namespace repix::tables::iwpp_paper
