// The cross-family experiments (group `suites`): the bench suites of every family, a CPU smoke run,
// and one Nsight Compute profile per family with a GPU optimum plus the ECC ladder with counters.
#include "harness/experiments.hpp"

namespace repix::experiments {

std::vector<Experiment> suite_experiments() {
  std::vector<Experiment> v;
  Step d = bench("bench", "");
  d.suite = "default";
  v.push_back({"default", "suites", "the default suite: every family and variant this machine can run (what scripts/bench runs)", {d}});
  Step t = bench("bench", "");
  t.suite = "targets";
  t.exclude = {"seq"};  // the reference only (minutes at this size)
  t.options = {{"cpu-samples", "3"}};
  t.needs.gpus = 1;
  v.push_back({"targets", "suites", "the targets suite (the performance-target inputs), seq left out", {t}});
  Step q = bench("bench", "");
  q.suite = "quick";
  v.push_back({"quick", "suites", "the quick suite: every family, variant and peer on small inputs (about a minute)", {q}});
  Step s = bench("bench", "");
  s.suite = "quick";
  s.variants = {"seq"};
  s.scopes = {"end-to-end"};
  s.options = {{"cpu-samples", "1"}};
  v.push_back({"smoke", "suites", "each family's reference (seq) once on the quick suite's inputs: a check that runs anywhere", {s}});
  {  // ECC's ladder with counters needs a kernel-scope ECC report first.
    Step b = bench("ecc-bench", "ecc");
    b.datasets = {"grf:1024x1024:alpha=3:seed=2"};
    b.scopes = {"kernel"};
    b.options = {{"samples", "10"}};
    b.needs.gpus = 1;
    Step a = table("ecc-ablation", {{"ncu", ""}});
    a.reports = {"ecc-bench"};
    a.needs = {1, {}, true};
    // Each profile twice: the timed kernels (the NVTX filter), then every launch of the same
    // command (set-up, warm-up, L2 flushes too), so that a reader sees what the filter keeps out.
    Experiment e{"profile", "suites",
                 "Nsight Compute of ecc, reconstruct and edt gpu-opt (timed kernels only, then every launch of the "
                 "process beside them), and the ECC ablation table with counters",
                 {}};
    for (const auto& [family, dataset] : std::vector<std::pair<std::string, std::string>>{
             {"ecc", "grf:1024x1024:alpha=3:seed=2"},
             {"reconstruct", "noise-mask:1024x1024:marker=opening"},
             {"edt", "blobs:1024x1024:radius=24:fill=0.45:seed=1"}}) {
      e.steps.push_back(profile(family, family, "gpu-opt", dataset));
      e.steps.push_back(
          profile(family + "-all-launches", family, "gpu-opt", dataset, {{"all-launches", ""}, {"sections", "SpeedOfLight"}}));
    }
    e.steps.insert(e.steps.end(), {b, a});
    v.push_back(e);
  }
  return v;
}

}  // namespace repix::experiments
