// The ECC paper's experiments (issue 15: ECC at the memory roofline), as data. Each bench row's
// "% of bound" is the bench's own: kernel scope against the measured dram-read bound, end to end
// against the measured h2d-pinned bound (inputs pinned, as `repix run ecc` makes them).
#include "harness/experiments.hpp"

namespace repix::experiments {

namespace {

const std::vector<std::string> kLadder = {"gpu-shared-hist", "gpu-cached",      "gpu-opt-static", "gpu-opt-fresh-rows", "gpu-opt",
                                          "gpu-opt-direct",  "gpu-opt-warp",    "gpu-opt-cluster", "gpu-opt-bins16",
                                          "gpu-opt-hash-bins16", "gpu-opt-sampled16"};
// Float32 8192^2 and 512^3, uniform and GRF, and Table 1's 512^3 row with ~1000 keys.
const std::vector<std::string> kKernelSets = {
    "uniform:8192x8192:levels=256:dtype=float32:seed=1", "grf:8192x8192:alpha=3:seed=2",
    "uniform:512x512x512:levels=256:dtype=float32:seed=3", "grf:512x512x512:alpha=3:seed=4",
    "uniform:512x512x512:levels=1024:dtype=float32:seed=1"};
const std::vector<std::string> kKernelIntSets = {
    "uniform:8192x8192:levels=256:dtype=uint8:seed=5", "noise-mask:8192x8192",
    "uniform:512x512x512:levels=256:dtype=uint8:seed=6", "uniform:8192x8192:levels=65536:dtype=uint16:seed=7",
    "uniform:512x512x512:levels=65536:dtype=uint16:seed=8"};
const std::vector<std::string> kE2eSets = {
    "uniform:2048x2048:levels=256:dtype=float32:seed=1", "grf:2048x2048:alpha=3:seed=2",
    "uniform:4096x4096:levels=256:dtype=float32:seed=1", "uniform:8192x8192:levels=256:dtype=float32:seed=1",
    "uniform:2048x2048:levels=256:dtype=uint8:seed=1",   "uniform:2048x2048:levels=65536:dtype=uint16:seed=1",
    "uniform:128x128x128:levels=256:dtype=uint8:seed=3", "grf:128x128x128:alpha=3:seed=4",
    "uniform:256x256x256:levels=256:dtype=float32:seed=3", "grf:512x512x512:alpha=3:seed=4"};
// Small images: the median ms is the fixed cost of a call.
const std::vector<std::string> kFixedSets = {
    "uniform:16x16:levels=4:dtype=float32:seed=1", "uniform:256x256:levels=256:dtype=float32:seed=1",
    "uniform:512x512:levels=256:dtype=uint8:seed=1", "uniform:32x32x32:levels=256:dtype=uint16:seed=1",
    "grf:64x64x64:alpha=3:seed=2"};
const std::vector<std::string> kU16Sets = {
    "texture:8192x8192:name=camera:dtype=uint16", "texture:4096x4096:name=grass:dtype=uint16",
    "uniform:8192x8192:levels=16:dtype=uint16:seed=3", "uniform:512x512x512:levels=16:dtype=uint16:seed=4",
    "ramp:8192x8192:dtype=uint16", "uniform:8192x8192:levels=65536:dtype=uint16:seed=7"};
// The images gpu-opt's work-item floor decides (up to 4096^2 and ~128^3 on an H100).
const std::vector<std::string> kChunkSets = {
    "uniform:1024x1024:levels=256:dtype=float32:seed=1", "grf:2048x2048:alpha=3:seed=2",
    "uniform:2048x2048:levels=256:dtype=float32:seed=1", "uniform:4096x4096:levels=256:dtype=float32:seed=1",
    "uniform:2048x2048:levels=256:dtype=uint8:seed=1",   "grf:128x128x128:alpha=3:seed=4",
    "uniform:128x128x128:levels=256:dtype=uint8:seed=3"};
const std::vector<std::string> kChunkSmallSets = {"uniform:2048x2048:levels=256:dtype=uint8:seed=1",
                                                  "uniform:128x128x128:levels=256:dtype=uint8:seed=3",
                                                  "uniform:1024x1024:levels=256:dtype=float32:seed=1"};
// gpu-opt's carried row words against gpu-opt-fresh-rows: where they win (8192^2, GRF at every size)
// and where they lose (uniform 256-level float32 at 1024^2 and 2048^2, H200).
const std::vector<std::string> kCarrySets = {
    "uniform:1024x1024:levels=256:dtype=float32:seed=1", "uniform:2048x2048:levels=256:dtype=float32:seed=1",
    "uniform:4096x4096:levels=256:dtype=float32:seed=1", "uniform:8192x8192:levels=256:dtype=float32:seed=1",
    "grf:1024x1024:alpha=3:seed=2",                      "grf:2048x2048:alpha=3:seed=2",
    "grf:4096x4096:alpha=3:seed=2",                      "grf:8192x8192:alpha=3:seed=2",
    "uniform:2048x2048:levels=1024:dtype=float32:seed=1", "uniform:2048x2048:levels=256:dtype=uint8:seed=1",
    "uniform:2048x2048:levels=65536:dtype=uint16:seed=1", "uniform:512x512x512:levels=256:dtype=float32:seed=3"};
const char* kGrfGapSections =
    "SpeedOfLight,LaunchStats,Occupancy,WarpStateStats,MemoryWorkloadAnalysis_Tables,InstructionStats,"
    "ComputeWorkloadAnalysis,SchedulerStats,SourceCounters";

Step ecc_bench(const std::string& label, const std::vector<std::string>& variants, const std::vector<std::string>& sets,
               const std::vector<std::string>& scopes, const std::string& samples) {
  Step s = bench(label, "ecc");
  s.variants = variants;
  s.datasets = sets;
  s.scopes = scopes;
  s.options = {{"samples", samples}};
  s.needs.gpus = 1;
  return s;
}

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

std::vector<Experiment> ecc_paper_experiments() {
  std::vector<Experiment> v;
  {  // The table is built from a bench report: the kernel-scope ladder on the targets first.
    Step b = bench("bench", "ecc");
    b.suite = "targets";
    b.scopes = {"kernel"};
    b.exclude = {"seq"};
    b.needs.gpus = 1;
    Step t = table("ecc-ablation");
    t.reports = {"bench"};
    v.push_back({"ecc-ablation", "ecc",
                 "ECC optimisation ladder (paper section 4.3): the kernel-scope bench of the targets, then the gain per step",
                 {b, t}});
  }
  v.push_back({"ecc-roofline-kernel", "ecc",
               "gpu-opt and its ladder at kernel scope on float32 8192^2 and 512^3 (uniform, GRF, 1024 levels) vs the DRAM read bound",
               {ecc_bench("bench", kLadder, kKernelSets, {"kernel"}, "20")}});
  v.push_back({"ecc-roofline-kernel-int", "ecc",
               "the same ladder on uint8 (uniform, smooth noise-mask) and uint16 over 65536 levels vs the DRAM read bound",
               {ecc_bench("bench", kLadder, kKernelIntSets, {"kernel"}, "20")}});
  v.push_back({"ecc-roofline-e2e", "ecc",
               "gpu-opt (repix run ecc's path) beside gpu-stream end to end vs the pinned H2D bound, then the fixed cost per call on small images",
               {ecc_bench("e2e", {"gpu-opt", "gpu-stream"}, kE2eSets, {"end-to-end"}, "20"),
                ecc_bench("fixed", {"gpu-opt", "gpu-stream"}, kFixedSets, {"end-to-end"}, "50")}});
  {
    Step s = ecc_bench("bench", {"gpu-opt"}, concat(kE2eSets, kFixedSets), {"end-to-end"}, "20");
    s.options.push_back({"timeline", ""});
    v.push_back({"ecc-e2e-timeline", "ecc",
                 "gpu-opt end to end with each sample's timeline (upload, last kernels, finish, host wake-up, curve) in the rows' extra",
                 {s}});
  }
  v.push_back({"ecc-u16", "ecc",
               "gpu-opt against gpu-opt-direct, gpu-opt-cluster, gpu-opt-bins16, gpu-opt-hash-bins16 and gpu-opt-sampled16 on "
               "smooth, few-level and high-entropy uint16: which accumulator wins where",
               {ecc_bench("bench", {"gpu-opt", "gpu-opt-direct", "gpu-opt-cluster", "gpu-opt-bins16", "gpu-opt-hash-bins16",
                                    "gpu-opt-sampled16"},
                          kU16Sets, {"kernel"}, "10")}});
  {  // gpu-opt's least rows (2D) / planes (3D) a work item, kernel and end to end; then the small
     // images in 1 and 2 MiB chunks (under 8 MiB they upload whole by default).
    Experiment e{"ecc-chunk-sweep", "ecc",
                 "gpu-opt's work-item floor (--min-chunk-2d/-3d: 24/16, 12/9, 6/6, 3/3) on the small images it decides, "
                 "kernel and end to end, and end to end in 1 and 2 MiB chunks",
                 {}};
    for (const auto& [rows, planes] : std::vector<std::pair<std::string, std::string>>{
             {"24", "16"}, {"12", "9"}, {"6", "6"}, {"3", "3"}}) {
      const std::string tag = "floor-" + rows + "-" + planes;
      Step s = ecc_bench(tag, {"gpu-opt"}, kChunkSets, {"kernel", "end-to-end"}, "30");
      s.options.insert(s.options.end(), {{"min-chunk-2d", rows}, {"min-chunk-3d", planes}});
      e.steps.push_back(s);
      for (const char* mib : {"1", "2"}) {
        Step c = ecc_bench(tag + "-mib" + mib, {"gpu-opt"}, kChunkSmallSets, {"end-to-end"}, "30");
        c.options.insert(c.options.end(), {{"min-chunk-2d", rows}, {"min-chunk-3d", planes}, {"chunk-mib", mib}});
        e.steps.push_back(c);
      }
    }
    v.push_back(e);
  }
  v.push_back({"ecc-carried-rows", "ecc",
               "gpu-opt (row words carried from the step before) beside gpu-opt-fresh-rows (made afresh) from 1024^2 "
               "to 8192^2 and 512^3, then Nsight Compute of both on uniform float32 2048^2, where the carry loses",
               {ecc_bench("bench", {"gpu-opt-fresh-rows", "gpu-opt"}, kCarrySets, {"kernel"}, "300"),
                profile("gpu-opt-2048", "ecc", "gpu-opt", "uniform:2048x2048:levels=256:dtype=float32:seed=1",
                        {{"sections", kGrfGapSections}}),
                profile("gpu-opt-fresh-rows-2048", "ecc", "gpu-opt-fresh-rows",
                        "uniform:2048x2048:levels=256:dtype=float32:seed=1", {{"sections", kGrfGapSections}})}});
  v.push_back({"ecc-grf-gap", "ecc",
               "Nsight Compute of gpu-opt's float32 2D kernel on uniform and GRF 8192^2 and GRF 2048^2 (SourceCounters, SchedulerStats)",
               {profile("uniform-8192", "ecc", "gpu-opt", "uniform:8192x8192:levels=256:dtype=float32:seed=1",
                        {{"sections", kGrfGapSections}}),
                profile("grf-8192", "ecc", "gpu-opt", "grf:8192x8192:alpha=3:seed=2", {{"sections", kGrfGapSections}}),
                profile("grf-2048", "ecc", "gpu-opt", "grf:2048x2048:alpha=3:seed=2", {{"sections", kGrfGapSections}})}});
  // Executed warp instructions / (pixels / 384) places the real path of the row loop between the
  // static bracket's shortest and longest; an IPC near 4 per SM means issue-bound. The bracket's
  // kernels are those the three profiles launch at 8192^2: vectorised loads, no emit, 3 blocks an
  // SM, modes opt (uint8, float32) and direct (uint16); 384 pixels a warp iteration (12 a thread).
  v.push_back({"ecc-issue-bound", "ecc",
               "Nsight Compute instructions and IPC of gpu-opt (uint8, float32) and gpu-opt-direct (uint16) at 8192^2, "
               "and the static issue bound of the same kernels' row loop from their SASS: issue-bound or not",
               {profile("gpu-opt-uint8", "ecc", "gpu-opt", "uniform:8192x8192:levels=256:dtype=uint8:seed=1"),
                profile("gpu-opt-direct-uint16", "ecc", "gpu-opt-direct", "uniform:8192x8192:levels=65536:dtype=uint16:seed=1"),
                profile("gpu-opt-float32", "ecc", "gpu-opt", "uniform:8192x8192:levels=256:dtype=float32:seed=1"),
                sass_bracket("sass-bracket", "ecc", "ecc2d_kernelI(hLb1ELb0ELi3ELi0E|tLb1ELb0ELi3ELi1E|fLb1ELb0ELi3ELi0E)",
                             "384")}});
  return v;
}

}  // namespace repix::experiments
