// The thesis's Tables 5.1-5.8 (Pal 2020, chapter 5) as grids (grid.hpp): what each row and column
// measures, its sizes, and which of the thesis's columns each of ours stands beside. Images: the
// camera texture (scikit-image's CC0 `camera`, mirrored to each size: datasets/texture.cpp) for
// the ranklet and pipeline tables and as the label image of the feature-stage tables (its 256 grey
// levels as labels, like a quantised ranklet plane); the thesis used mini-MIAS mammograms
// (1024^2, 8-bit), which are not available here.
#include <chrono>
#include <numeric>
#include <string>

#include "harness/papers/ami/grid.hpp"

namespace repix::tables::ami_paper {

using nlohmann::json;

namespace {

std::string side(std::int64_t n) { return std::to_string(n) + "^2"; }

std::string camera(const std::string&, std::int64_t n) {
  return "texture:" + std::to_string(n) + "x" + std::to_string(n) + ":name=camera";
}

cli::Args opts(std::initializer_list<std::pair<const char*, std::string>> kv) {
  cli::Args a;
  for (const auto& [k, v] : kv) a.options.emplace(k, v);
  return a;
}

Column col(std::string heading, std::string family, std::string variant, std::string scope, cli::Args options,
           std::string paper_key, double paper_to_s = 1, std::int64_t max_size = 0) {
  Column c;
  c.heading = std::move(heading);
  c.family = std::move(family);
  c.variant = std::move(variant);
  c.scope = std::move(scope);
  c.options = std::move(options);
  c.paper_key = std::move(paper_key);
  c.paper_to_s = paper_to_s;
  c.max_size = max_size;
  return c;
}

Grid sized(const Run& run, std::string title, std::string explanation, std::vector<std::int64_t> small,
           std::vector<std::int64_t> paper) {
  Grid g;
  g.title = std::move(title);
  g.explanation = std::move(explanation);
  g.x_label = "size";
  g.spec = camera;
  for (std::int64_t n : run.pick(std::move(small), std::move(paper))) g.rows.push_back({side(n), n, 0, {}});
  const json table = run.paper;
  g.paper_row = [table](const Row& r) {
    const json* p = paper_row(table, [&](const json& row) { return row.value("size", std::int64_t(0)) == r.size; });
    return p ? *p : json();
  };
  return g;
}

const char* const kTimed =
    "Every cell is checked against the family's reference before its samples count (`repix bench`'s checks). "
    "End-to-end: host image in, host result out (allocation, copies), host clock; kernel: inputs on the GPU, CUDA "
    "events. GPU cells: the median of at least --reps samples after one warm-up, by repix's stopping rule (each "
    "cell's JSON holds its samples and what stopped them); CPU cells: up to 3 runs within a second. One image per "
    "size (the thesis averaged 50 mammograms).";

Grid t51(const Run& run) {
  Grid g = sized(run, "Thesis Table 5.1: AMI (ranklet + features), sequential vs OpenMP, r = 8",
                 std::string("Both stages, one window r = 8 (6 features): `ami seq` (ranklet seq -> auto-mi seq) vs "
                             "`ami omp` (the thesis's parallel loops) on all cores, end to end. seq is not run above "
                             "1024^2 (2048^2 would take minutes; the thesis extrapolated from 2048^2 on) and omp "
                             "not above 4096^2 (8192^2: about 2 minutes). ") + kTimed,
                 {16, 24}, {128, 256, 512, 1024, 2048, 4096, 8192});
  const cli::Args w = opts({{"windows", "8"}});
  g.columns = {col("seq (s)", "ami", "seq", "end-to-end", w, "seq_s", 1, 1024),
               col("omp (s)", "ami", "omp", "end-to-end", w, "omp_s", 1, 4096)};
  g.ratios = {{"omp speedup", 1, 0, "omp_s", "seq_s", "speedup"}};
  return g;
}

Grid t52(const Run& run) {
  Grid g = sized(run, "Thesis Table 5.2: the CUDA feature stage (one thread per lag), kernels and total",
                 std::string("auto-mi on a label image (the camera texture's grey levels). The thesis's MI kernel "
                             "and reduction kernel are our `gpu-naive` kernel scope (the counting kernel and the "
                             "per-lag NMI kernel together: our NMI kernel is not timed apart); its total is our "
                             "end to end (allocation, transfers, kernels). `gpu-opt` beside it. gpu-naive is not run "
                             "above 2048^2 (one thread per lag: minutes). ") + kTimed,
                 {16, 24}, {128, 256, 512, 1024, 2048, 4096, 8192});
  g.columns = {col("gpu-naive kernels (s)", "auto-mi", "gpu-naive", "kernel", {}, "mi_kernel_ms", 1e-3, 2048),
               col("gpu-naive total (s)", "auto-mi", "gpu-naive", "end-to-end", {}, "total_s", 1, 2048),
               col("gpu-opt kernels (s)", "auto-mi", "gpu-opt", "kernel", {}, ""),
               col("gpu-opt total (s)", "auto-mi", "gpu-opt", "end-to-end", {}, "")};
  g.ratios = {{"total / gpu-opt total", 3, 1, "", "", ""}};
  return g;
}

Grid t53(const Run& run) {
  Grid g = sized(run, "Thesis Table 5.3: the feature vector, OpenMP vs CUDA",
                 std::string("auto-mi end to end on a label image: `omp` (lags in parallel on all cores) vs "
                             "`gpu-naive` (the thesis's CUDA) and `gpu-opt`. omp not above 4096^2, gpu-naive not "
                             "above 2048^2. ") + kTimed,
                 {16, 24}, {128, 256, 512, 1024, 2048, 4096, 8192});
  g.columns = {col("omp (s)", "auto-mi", "omp", "end-to-end", {}, "omp_s", 1, 4096),
               col("gpu-naive (s)", "auto-mi", "gpu-naive", "end-to-end", {}, "cuda_s", 1, 2048),
               col("gpu-opt (s)", "auto-mi", "gpu-opt", "end-to-end", {}, "")};
  g.ratios = {{"CUDA speedup over omp", 1, 0, "cuda_s", "omp_s", ""}, {"gpu-opt over omp", 2, 0, "", "", ""}};
  return g;
}

Grid t54(const Run& run) {
  Grid g = sized(run, "Thesis Table 5.4: the ranklet transform, OpenMP vs CUDA, r = 8 and r = 32",
                 std::string("ranklet end to end, one window: `omp` (the thesis's loop B: a sort per window, on all "
                             "cores) vs `gpu-naive` (the thesis's CUDA: one thread per pixel sorting its window) and "
                             "`gpu-opt`. r = 32 omp not above 1024^2 and gpu-naive not above 2048^2 (a sort of "
                             "1024 values per pixel). ") + kTimed,
                 {16, 40}, {128, 256, 512, 1024, 2048, 4096, 8192});
  const cli::Args r8 = opts({{"windows", "8"}}), r32 = opts({{"windows", "32"}});
  g.columns = {col("r8 omp (s)", "ranklet", "omp", "end-to-end", r8, "r8_omp_s", 1, 4096),
               col("r8 gpu-naive (s)", "ranklet", "gpu-naive", "end-to-end", r8, "r8_cuda_s"),
               col("r8 gpu-opt (s)", "ranklet", "gpu-opt", "end-to-end", r8, ""),
               col("r32 omp (s)", "ranklet", "omp", "end-to-end", r32, "r32_omp_s", 1, 1024),
               col("r32 gpu-naive (s)", "ranklet", "gpu-naive", "end-to-end", r32, "r32_cuda_s", 1, 2048),
               col("r32 gpu-opt (s)", "ranklet", "gpu-opt", "end-to-end", r32, "")};
  g.ratios = {{"r8 CUDA over omp", 1, 0, "r8_cuda_s", "r8_omp_s", ""}, {"r32 CUDA over omp", 4, 3, "r32_cuda_s", "r32_omp_s", ""}};
  return g;
}

// Rows: (block, size) pairs of the thesis (ami-5.5) or block sizes with sizes as columns (5.6).
Grid t55(const Run& run) {
  Grid g;
  g.title = "Thesis Table 5.5: ranklet gpu-naive with square thread blocks, r = 8";
  g.explanation = std::string("`ranklet gpu-naive` (one thread per pixel) end to end with --block B (B x B "
                              "threads), window 8 (the thesis does not state its window; its default runs use "
                              "8). ") + kTimed;
  g.x_label = "block, size";
  g.spec = camera;
  const auto sizes = run.pick({16, 24}, {128, 256, 512, 1024});
  for (int b : {2, 4, 8, 16, 32})
    for (std::int64_t n : sizes) g.rows.push_back({std::to_string(b) + " x " + std::to_string(b) + ", " + side(n), n, b, {}});
  g.columns = {col("gpu-naive (s)", "ranklet", "gpu-naive", "end-to-end", opts({{"windows", "8"}}), "ranklet_s")};
  const json table = run.paper;
  g.paper_row = [table](const Row& r) {
    const json* p = paper_row(table, [&](const json& row) {
      return row.value("size", std::int64_t(0)) == r.size && row.contains("block") && row["block"].is_array() &&
             row["block"].size() == 2 && row["block"][0] == r.block && row["block"][1] == r.block;
    });
    return p ? *p : json();
  };
  return g;
}

Grid t56(const Run& run) {
  Grid g;
  g.title = "Thesis Table 5.6: auto-mi gpu-naive with 1-D blocks at 1024^2 and 2048^2";
  g.explanation = std::string("`auto-mi gpu-naive` (one thread per lag) with --block B threads per block, on the "
                              "camera texture's labels: kernel scope (counting + NMI kernels) and end to end. ") + kTimed;
  g.x_label = "threads per block";
  g.spec = camera;
  const auto sizes = run.pick({16, 24}, {1024, 2048});
  for (int b : {2, 4, 8, 16, 32, 64, 128, 256}) g.rows.push_back({std::to_string(b), 0, b, {}});
  const char* keys[2][2] = {{"k1024_ms", "t1024_s"}, {"k2048_ms", "t2048_s"}};
  for (std::size_t i = 0; i < sizes.size() && i < 2; ++i) {
    Column k = col(side(sizes[i]) + " kernels (s)", "auto-mi", "gpu-naive", "kernel", {}, keys[i][0], 1e-3);
    Column t = col(side(sizes[i]) + " total (s)", "auto-mi", "gpu-naive", "end-to-end", {}, keys[i][1]);
    k.size = t.size = sizes[i];
    if (run.small || !run.sizes.empty()) k.paper_key = t.paper_key = "";  // other sizes than the thesis's
    g.columns.push_back(k);
    g.columns.push_back(t);
  }
  const json table = run.paper;
  g.paper_row = [table](const Row& r) {
    const json* p = paper_row(table, [&](const json& row) { return row.value("threads_per_block", 0) == r.block; });
    return p ? *p : json();
  };
  return g;
}

// ami-5.7: the thesis sums the per-lag NMI vector on the GPU (a reduction kernel) or on the host;
// ours always sums it on the host, in lag order (bit-reproducible: every variant gives the same
// A_x, A_y). The summation itself is timed here on a vector of the size's lags.
Timing host_sum(std::int64_t n) {
  Timing t;
  t.family = "auto-mi";
  t.variant = "host lag sum";
  t.scope = "kernel";
  std::vector<double> nmi(static_cast<std::size_t>(2 * (n - 1)), 0.5);
  for (int s = 0; s < 5; ++s) {
    const auto t0 = std::chrono::steady_clock::now();
    volatile double sink = 0;
    for (int rep = 0; rep < 1000; ++rep) sink = sink + std::accumulate(nmi.begin(), nmi.end(), 0.0);
    t.samples_ms.push_back(ms_since(t0) / 1000);
  }
  t.median_ms = median_of(t.samples_ms);
  t.verified = true;
  t.verification = "a sum of " + std::to_string(nmi.size()) + " doubles (no output to check)";
  return t;
}

Grid t57(const Run& run) {
  Grid g = sized(run, "Thesis Table 5.7: summing the per-lag NMI vector",
                 std::string("The thesis compared a sequential sum of the per-lag NMIs with a CUDA reduction kernel "
                             "(128 and 256 threads) and found it negligible either way. Ours sums on the host in lag "
                             "order (so every variant's A_x and A_y agree to the last bit): its time (the mean of "
                             "1000 sums, median of 5) beside the thesis's 128-thread kernel, and the whole feature "
                             "stage (auto-mi gpu-naive end to end) beside its totals. gpu-naive not above 2048^2. ") + kTimed,
                 {16, 24}, {128, 256, 512, 1024, 2048, 4096, 8192});
  Column sum = col("lag sum (s)", "auto-mi", "host lag sum", "kernel", {}, "k128_ms", 1e-3);
  sum.custom = host_sum;
  g.columns = {sum, col("gpu-naive total (s)", "auto-mi", "gpu-naive", "end-to-end", {}, "seq_total_s", 1, 2048)};
  return g;
}

Grid t58(const Run& run) {
  Grid g = sized(run, "Thesis Table 5.8: the feature stage on 1 and 2 GPUs",
                 std::string("`auto-mi multi-device` end to end with --gpus 1 and --gpus 2 (lags split into ranges of "
                             "equal pair counts, one per GPU; the thesis split the features over up to 3 cards: ours "
                             "has no third column, we had no 3-GPU machine). A 2-GPU cell is skipped where fewer "
                             "GPUs are visible. ") + kTimed,
                 {16, 24}, {128, 256, 512, 1024, 2048, 4096, 8192});
  Column two = col("2 GPUs (s)", "auto-mi", "multi-device", "end-to-end", opts({{"gpus", "2"}}), "gpu2_s");
  two.gpus = 2;
  g.columns = {col("1 GPU (s)", "auto-mi", "multi-device", "end-to-end", opts({{"gpus", "1"}}), "gpu1_s"), two};
  g.ratios = {{"speedup, 2 GPUs", 1, 0, "gpu2_s", "gpu1_s", "speedup2"}};
  return g;
}

}  // namespace

std::vector<TableInfo> tables() {
  return {
      table_info("ami-5.1", "Thesis Table 5.1: AMI seq vs omp (ranklet + features), r = 8, vs size", t51),
      table_info("ami-5.2", "Thesis Table 5.2: auto-mi gpu-naive kernels and total (and gpu-opt) vs size", t52),
      table_info("ami-5.3", "Thesis Table 5.3: auto-mi omp vs gpu-naive vs gpu-opt vs size", t53),
      table_info("ami-5.4", "Thesis Table 5.4: ranklet omp vs gpu-naive vs gpu-opt, r = 8 and 32, vs size", t54),
      table_info("ami-5.5", "Thesis Table 5.5: ranklet gpu-naive block shapes vs size", t55),
      table_info("ami-5.6", "Thesis Table 5.6: auto-mi gpu-naive 1-D block sizes at 1024^2 and 2048^2", t56),
      table_info("ami-5.7", "Thesis Table 5.7: summing the per-lag NMI vector (ours: on the host)", t57),
      table_info("ami-5.8", "Thesis Table 5.8: auto-mi multi-device on 1 and 2 GPUs vs size", t58),
  };
}

}  // namespace repix::tables::ami_paper

namespace repix::tables {
std::vector<TableInfo> ami_paper_tables() { return in_group("ami", ami_paper::tables()); }
}  // namespace repix::tables
