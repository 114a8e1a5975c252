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
    v.push_back({"profile", "suites",
                 "Nsight Compute of ecc, reconstruct and edt gpu-opt (timed kernels only), and the ECC ablation table with counters",
                 {profile("ecc", "ecc", "gpu-opt", "grf:1024x1024:alpha=3:seed=2"),
                  profile("reconstruct", "reconstruct", "gpu-opt", "noise-mask:1024x1024:marker=opening"),
                  profile("edt", "edt", "gpu-opt", "blobs:1024x1024:radius=24:fill=0.45:seed=1"), b, a}});
  }
  return v;
}

}  // namespace repix::experiments
