// IWPP paper Figures 15 and 16: the multi-device variant of reconstruct and edt on 1 GPU, 2 GPUs
// and 2 GPUs with CPU groups, end to end, speedup over one core.
#include <omp.h>

#include <algorithm>

#include "core/error.hpp"
#include "harness/json_fields.hpp"
#include <cstdio>
#include <iostream>

#include "harness/papers/iwpp/measure.hpp"

namespace repix::tables::iwpp_paper {

using json_fields::field_or;
using nlohmann::json;

namespace {

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

}  // namespace

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

}  // namespace repix::tables::iwpp_paper
