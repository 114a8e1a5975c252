// The AMI thesis's experiments (issue 13: several GPUs), as data.
#include "harness/experiments.hpp"

namespace repix::experiments {

std::vector<Experiment> ami_paper_experiments() {
  std::vector<Experiment> v;
  {  // The feature stage's multi-device variant (what multi-device splits) with 1 and 2 GPUs.
    Experiment e{"ami-2gpu", "ami",
                 "auto-mi multi-device end to end on the ami-targets inputs with 1 and 2 GPUs, then thesis Table 5.8",
                 {}};
    for (const char* g : {"1", "2"}) {
      Step s = bench(std::string("auto-mi-") + g + "gpu", "auto-mi");
      s.suite = "ami-targets";
      s.variants = {"multi-device"};
      s.scopes = {"end-to-end"};
      s.options = {{"gpus", g}, {"samples", "3"}};
      s.needs.gpus = 2;
      e.steps.push_back(s);
    }
    Step t = table("ami-5.8");
    t.needs.gpus = 2;
    e.steps.push_back(t);
    v.push_back(e);
  }
  {  // The whole pipeline; its CPU reference alone takes minutes, so one GPU count a run
     // (`repix experiment ami-2gpu-pipeline --gpus 1` for the one-GPU side).
    Step s = bench("bench", "ami");
    s.datasets = {"uniform:8192x8192:levels=256:seed=1"};
    s.variants = {"multi-device"};
    s.scopes = {"end-to-end"};
    s.options = {{"gpus", "2"}, {"samples", "3"}};
    s.needs.gpus = 2;
    v.push_back({"ami-2gpu-pipeline", "ami",
                 "ami (ranklet + features) multi-device end to end at 8192^2 on 2 GPUs (--gpus N: on N)", {s}});
  }
  return v;
}

}  // namespace repix::experiments
