// The max-tree seminar's experiments (issue 14), as data.
#include "harness/experiments.hpp"

namespace repix::experiments {

namespace {

const std::vector<std::string> kNatural = {"texture:6000x4000:name=camera", "texture:6000x4000:name=camera:dtype=uint16",
                                           "texture:1920x1080:name=camera"};
const std::vector<std::string> kFast = {"omp",          "gpu-tile",        "gpu-tile-1d",      "gpu-grid",
                                        "gpu-border",   "gpu-compressed",  "gpu-packed",       "gpu-monotone",
                                        "gpu-settle-copy", "gpu-planned-zips", "gpu-climbing-merges", "gpu-paired-loads",
                                        "gpu-tile-settle", "gpu-opt"};
const char* kFrame = "texture:1920x1080:name=camera";
const char* kBig = "texture:6000x4000:name=camera";

Step maxtree_bench(const std::string& label, const std::string& family, const std::vector<std::string>& sets,
                   const std::vector<std::string>& variants,
                   const std::vector<std::pair<std::string, std::string>>& options) {
  Step s = bench(label, family);
  s.datasets = sets;
  s.variants = variants;
  s.scopes = {"kernel", "end-to-end"};
  s.options = options;
  s.needs.gpus = 1;
  return s;
}

}  // namespace

std::vector<Experiment> maxtree_paper_experiments() {
  std::vector<Experiment> v;
  {  // Every variant on the natural images (4-connectivity, the seminar's), the parallel ones on
     // 16-bit noise (gpu-naive there takes ~7 s a sample) and with 8-connectivity; then the table.
    Step four = maxtree_bench("bench-4", "maxtree", kNatural, {}, {{"cpu-samples", "3"}, {"samples", "10"}});
    four.exclude = {"peer:skimage-maxtree", "peer:higra-maxtree"};  // maxtree-peers times them
    Step noise = maxtree_bench("bench-noise", "maxtree", {"uniform:6000x4000:levels=65536:dtype=uint16:seed=1"}, kFast,
                               {{"cpu-samples", "3"}, {"samples", "5"}});
    Step eight = maxtree_bench("bench-8", "maxtree", kNatural, kFast,
                               {{"connectivity", "8"}, {"cpu-samples", "3"}, {"samples", "10"}});
    Step t = table("maxtree-seminar");
    t.reports = {"bench-4", "bench-noise", "bench-8"};
    v.push_back({"maxtree-seminar", "maxtree",
                 "the seminar's figures beside ours: max-tree benches of the natural images (4- and 8-conn.) and 16-bit noise, then the table",
                 {four, noise, eight, t}});
  }
  {  // scikit-image, Higra and Blin's own CUDA code (where this machine has them) beside ours;
     // scikit-image's area opening only on the frame (its max_tree did not finish at 6000x4000 in 490 s).
    const std::vector<std::string> blin = {"peer:blin-maxtree", "peer:blin-maxtree-e2e"};
    auto with = [](std::vector<std::string> a, const std::vector<std::string>& b) {
      a.insert(a.end(), b.begin(), b.end());
      return a;
    };
    v.push_back(
        {"maxtree-peers", "maxtree",
         "scikit-image, Higra and Blin's code beside seq, omp and gpu-opt: max-tree (1920x1080, 6000x4000 8/16-bit, 8-conn.) and area opening (A = 100)",
         {maxtree_bench("frame", "maxtree", {kFrame},
                        with({"seq", "omp", "gpu-compressed", "gpu-opt", "peer:skimage-maxtree", "peer:higra-maxtree"}, blin),
                        {{"cpu-samples", "2"}, {"samples", "10"}}),
          maxtree_bench("big", "maxtree", {kBig, std::string(kBig) + ":dtype=uint16"},
                        with({"omp", "gpu-compressed", "gpu-opt", "peer:higra-maxtree"}, blin),
                        {{"cpu-samples", "3"}, {"samples", "10"}}),
          maxtree_bench("big8", "maxtree", {kBig}, with({"gpu-compressed", "gpu-opt"}, blin),
                        {{"connectivity", "8"}, {"samples", "10"}}),
          maxtree_bench("area-frame", "area-opening", {kFrame},
                        {"seq", "omp", "gpu-compressed", "gpu-opt", "peer:skimage-area-opening", "peer:higra-area-opening"},
                        {{"area", "100"}, {"cpu-samples", "2"}, {"samples", "10"}}),
          maxtree_bench("area-big", "area-opening", {kBig}, {"seq", "omp", "gpu-compressed", "gpu-opt", "peer:higra-area-opening"},
                        {{"area", "100"}, {"cpu-samples", "2"}, {"samples", "10"}})}});
  }
  {  // Where Blin's code still wins: every max-tree kernel of our GPU variants at 6000x4000, and
     // Blin's own (a peer: through one bench run, its kernels chosen by name; needs its code).
    const char* sections = "SpeedOfLight,Occupancy,LaunchStats,WarpStateStats,InstructionStats,MemoryWorkloadAnalysis";
    const char* kernels = "tile_build|packed_build|merge|walk|jump|normal_form|same_level|init_parent|settle|compute_maxtree|flatten";
    Experiment e{"maxtree-profile", "maxtree",
                 "Nsight Compute of gpu-compressed, gpu-packed, gpu-opt and Blin's kernels at 6000x4000 (speed of light, occupancy, warp states, instructions, memory)",
                 {}};
    for (const char* var : {"gpu-compressed", "gpu-packed", "gpu-opt"})
      e.steps.push_back(profile(var, "maxtree", var, kBig, {{"sections", sections}}));
    e.steps.push_back(profile("blin-maxtree", "maxtree", "peer:blin-maxtree", kBig,
                              {{"sections", sections}, {"kernels", kernels}, {"samples", "1"}}));
    v.push_back(e);
  }
  return v;
}

}  // namespace repix::experiments
