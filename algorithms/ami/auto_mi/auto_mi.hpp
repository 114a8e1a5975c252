// auto-mi: the feature stage of the ranklet + AMI texture family (Pal, MSc thesis 2020, Eq.
// 2.8-2.10; issue 13), on its own: the auto-mutual-information of a label image.
//
// Semantics (every variant computes exactly this):
//   Input: a label image L of H rows x W columns, uint8, or uint16 with values 0..256 (the
//   ranklet stage's levels are 1..256; above 256 is refused). Not 2-D, another dtype or an empty
//   image is refused too.
//   Horizontal A_x = sum over lags i = 1 .. W-1 of NMI_i over the pairs (L[y,x], L[y,x+i]),
//   every y and x = 0 .. W-1-i; vertical A_y likewise over (L[y,x], L[y+i,x]), i = 1 .. H-1.
//   A 1-wide image has no horizontal lags (A_x = 0), a 1-high one no vertical lags.
//   NMI = I(X;Y) / sqrt(H(X) H(Y)), I = H(X) + H(Y) - H(X,Y), the entropies of that lag's
//   overlap only: its joint histogram of exact integer counts, the marginals its row and column
//   sums. NMI = 0 when X or Y takes a single value in the overlap, decided from the counts (never
//   from a floating-point entropy near 0). Entropies in double, natural log (the base cancels).
//   Every variant computes each lag's NMI from the same integer counts through one shared
//   function (nmi_core.hpp: nmi_from_columns, a fixed summation order) and sums the lags in lag
//   order; results agree within max(1e-9 |v|, 1e-12) (in practice to the last bits: only the host
//   and device log1p may differ).
//
// Variants (register.cpp, ablation order): seq (the reference), omp, gpu-naive, gpu-global-hist,
// gpu-shared-hist, gpu-shared-warp-agg, gpu-opt, multi-device. Each is one file named after its id.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/image.hpp"
#include "core/variant.hpp"

namespace repix::ami::auto_mi {

struct Options {
  int threads = 0;  // omp: CPU threads; 0 = OpenMP's default
  // gpu-shared-hist / gpu-opt: the level at which a 16-bit shared counter is moved to the global
  // histogram (1 .. kMaxFlushLevel; 0 = kMaxFlushLevel). A tiny level forces flushes (tests).
  int flush_level = 0;
  int gpus = 0;  // multi-device: GPUs used (0 = every visible one)
  int block = 0;  // gpu-naive: threads per 1-D block (1 .. 1024; 0 = kNaiveThreads), thesis Table 5.6
  // A variant computes only the lags of part `part` of `parts` (lag_part, nmi_core.hpp) and
  // leaves the others' NMI 0: how multi-device shares the lags out over GPUs and a distributed run
  // over ranks. Not a command-line option.
  int part = 0, parts = 1;
};

constexpr int kNaiveThreads = 128;  // gpu-naive's default block (the thesis's runs)

// What a run counts of itself.
struct Stats {
  std::int64_t pairs = 0;       // pairs counted into joint histograms, both directions
  std::int64_t lags = 0;        // lags, both directions
  std::int64_t batches = 0;     // GPU: lag batches (histograms of a batch live together)
  std::int64_t hot_flushes = 0; // gpu-shared-hist / gpu-opt: rounds that moved hot 16-bit counters
};

struct Features {
  double horizontal = 0;            // A_x
  double vertical = 0;              // A_y
  std::vector<double> nmi_x, nmi_y; // per lag, lag i at index i-1
  Stats stats;
};

using DevicePlan = repix::DevicePlan<Options, Features, Stats>;
using Variant = repix::Variant<Features(const HostImage&, const Options&), DevicePlan>;

// A GPU plan that can measure issue 13's pairs bound on its last input (the epoch plans of
// gpu-opt and its variations, epoch_hist.cuh): the best shared-memory 256 x 256 histogram kernel
// replaying the same pairs stream without its loads, pairs per second of kernel time. It reuses
// the plan's buffers: the plan's last result is lost (take result() first).
class PairsBoundSource {
 public:
  virtual ~PairsBoundSource() = default;
  virtual double measure_pairs_bound(cudaStream_t stream) = 0;
};

// All registered variants, in ablation order (register.cpp).
const std::vector<Variant>& variants();
// Throws repix::Error listing the known ids when `id` is unknown.
const Variant& find_variant(const std::string& id);

// ---- shared pieces (common.cpp) -----------------------------------------------------------------

// Throws repix::Error (one line) unless `img` is a non-empty 2-D uint8 image, or uint16 with
// every value <= 256.
void check_labels(const HostImage& img);
// The largest label of a uint16 image.
constexpr int kMaxLabel = 256;
// check_labels' checks that read no values (labels elsewhere: on the device), and the error of
// the one that does, for callers that find the label themselves.
void check_label_description(const InputDesc& in);
[[noreturn]] void throw_label_above(const Shape& shape, std::int64_t index, int label);
// Bins per label axis: 256 for uint8, 257 for uint16 (labels 0..256).
int label_bins(DType dtype);
// Pairs of both directions on an h x w image: h w (w-1)/2 + w h (h-1)/2.
std::int64_t total_pairs(std::int64_t h, std::int64_t w);
// A lag's NMI from its k x k joint histogram (row a = the first label, column b = its partner),
// in the canonical order of nmi_core.hpp. `scratch` is reused between calls.
struct NmiScratch {
  std::vector<double> col_terms;
  std::vector<std::uint64_t> col_counts, row_counts;
};
double nmi_of_histogram(const std::uint64_t* hist, int k, NmiScratch& scratch);
// One lag's NMI on the CPU: its joint histogram counted into `hist` (k x k, reused), then
// nmi_of_histogram. The loop every CPU variant runs per lag.
double lag_nmi_cpu(const HostImage& labels, int direction, std::int64_t lag, std::vector<std::uint64_t>& hist,
                   NmiScratch& scratch);
// Fills A_x and A_y from the per-lag NMIs (summed in lag order) and the pair and lag counts.
void finish_features(Features& f, std::int64_t h, std::int64_t w);
// Runs a GPU plan end to end: upload, compute, result (NVTX phases h2d/kernel/d2h).
Features run_plan_end_to_end(DevicePlan& plan, const HostImage& img, const Options& opt, const char* nvtx_name);

// `direction,ami` CSV, rows horizontal then vertical, 17 significant digits; atomic.
void write_csv(const Features& f, const std::string& path);

// The CPU variants (one file each); the GPU ones are factories in variants.hpp.
Features run_seq(const HostImage& labels, const Options& opt);
Features run_omp(const HostImage& labels, const Options& opt);
Features run_multi_device(const HostImage& labels, const Options& opt);

}  // namespace repix::ami::auto_mi
