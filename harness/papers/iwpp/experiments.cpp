// The IWPP paper's experiments (reconstruct and edt on the 8192^2 targets), as data.
#include "harness/experiments.hpp"

namespace repix::experiments {

std::vector<Experiment> iwpp_paper_experiments() {
  std::vector<Experiment> v;
  {  // One family at a time; the slow CPU contrasts and scikit-image (~50 s a call) are left out.
    Step r = bench("reconstruct", "reconstruct");
    r.suite = "iwpp-targets";
    r.exclude = {"seq-sr", "seq-qb", "omp-nontiled", "peer:skimage-reconstruction"};
    r.options = {{"cpu-samples", "1"}, {"samples", "5"}};
    r.needs.gpus = 1;
    Step e = bench("edt", "edt");
    e.suite = "iwpp-targets";
    e.options = {{"cpu-samples", "3"}, {"samples", "20"}};
    e.needs.gpus = 1;
    v.push_back({"iwpp", "iwpp", "reconstruct and edt on the IWPP target inputs (8192^2) with the peers", {r, e}});
  }
  {
    Step s = bench("bench", "reconstruct");
    s.suite = "iwpp-targets";
    s.variants = {"seq", "peer:skimage-reconstruction"};
    s.options = {{"cpu-samples", "1"}};
    s.needs.peers = {"peer:skimage-reconstruction"};
    v.push_back({"iwpp-skimage", "iwpp", "scikit-image's reconstruction beside seq on the IWPP targets (about 50 s a call)", {s}});
  }
  {  // With the compiler's warp aggregation between Naive and PF.
    Step s = bench("bench", "edt");
    s.suite = "iwpp-targets";
    s.variants = {"gpu-queue-atomic", "gpu-queue-warp-atomic", "gpu-queue-scan", "gpu-queue-tq", "gpu-opt"};
    s.options = {{"samples", "10"}};
    s.needs.gpus = 1;
    v.push_back({"iwpp-edt-ladder", "iwpp", "the edt queue ladder and gpu-opt on the IWPP targets (8192^2)", {s}});
  }
  return v;
}

}  // namespace repix::experiments
