// ami: the whole ranklet + AMI texture descriptor (Pal, MSc thesis 2020; issue 13): the ranklet
// stage (ami/ranklet/) and the feature stage (ami/auto_mi/) run back to back.
//
// Semantics (every pipeline variant computes exactly this):
//   Input: a non-empty 2-D uint8 image f (H x W); window sizes r, powers of two in 2..32, each at
//   most once, in any order (default 4, 8, 16, 32).
//   For each window (in the order given) and each orientation H, V, D: the ranklet plane R of
//   ranklet.hpp, quantised to Q = min(256, floor(256 R) + 1) (levels 1..256; R = 1 is clamped into
//   256; ranklet::quantise, exact), then auto-mi's A_x (horizontal) and A_y (vertical) of that
//   label image (auto_mi.hpp). 6 features per window, in the order window, orientation H/V/D,
//   direction horizontal/vertical: 24 for the default windows.
//
// The labels are stored as Q - 1 in uint8 (0..255), not Q in uint16 (1..256): the relabelling
// keeps the order of the labels, so every lag's joint histogram holds the same counts in the same
// bin order (shifted by one row and column; bin 0 of the uint16 form is always empty), and
// auto-mi's NMI sums over the bins in index order, where empty bins add nothing: every NMI, hence
// every feature, is identical bit for bit (tests/ami/pipeline: QMinusOne). And auto-mi's uint8
// paths (256 bins, one byte per label) apply.
//
// Equivalence between variants: the ranklet planes are bit-identical across ranklet variants and
// the features within max(1e-9 |v|, 1e-12) across auto-mi variants, so the 24 features of every
// pipeline variant agree with seq's within max(1e-9 |v|, 1e-12).
//
// Variants (register.cpp): each names its (ranklet variant, auto-mi variant) pair.
#pragma once
#include <string>
#include <vector>

#include <cstdint>

#include "ami/ranklet/ranklet.hpp"
#include "core/hd.hpp"
#include "core/image.hpp"
#include "core/variant.hpp"

namespace repix::ami {

constexpr int kOrientations = 3;       // H, V, D
constexpr int kFeaturesPerWindow = 6;  // 3 orientations x 2 directions

struct Options {
  std::vector<int> windows{4, 8, 16, 32};  // window sizes r, in output order
  int threads = 0;      // CPU stages (omp, omp-hist and the quantisation): threads; 0 = OpenMP's default
  int gpus = 0;         // multi-device: GPUs used by the feature stage (0 = every visible one)
  int flush_level = 0;  // auto-mi gpu-opt's 16-bit counter flush level (0 = the safe maximum)
};

// What a run measures of itself: the time of each stage, summed over the planes. The host path
// times each stage's run() (GPU stages there include their transfers); the GPU plan times its
// device work with CUDA events and counts the quantisation kernels in auto_mi_ms (quantise_ms 0).
struct Stats {
  double ranklet_ms = 0;   // the ranklet stage (all windows and orientations)
  double quantise_ms = 0;  // R -> Q - 1 of every plane
  double auto_mi_ms = 0;   // the feature stage, every plane
  std::int64_t pairs = 0;  // pairs counted by the feature stage, all planes and both directions
};

struct Result {
  std::vector<int> windows;       // as asked, in output order
  std::vector<double> features;   // 6 per window: (H, V, D) x (horizontal, vertical)
  Stats stats;
};

using DevicePlan = repix::DevicePlan<Options, Result, Stats>;

// A pipeline variant: its metadata and run, and the stage variants it chains.
struct Variant : repix::Variant<Result(const HostImage& input, const Options&), DevicePlan> {
  std::string ranklet_id;  // ami::ranklet variant
  std::string auto_mi_id;  // ami::auto_mi variant
};

// All registered variants (register.cpp).
const std::vector<Variant>& variants();
// Throws repix::Error listing the known ids when `id` is unknown.
const Variant& find_variant(const std::string& id);

// "H", "V", "D" of orientation o; "horizontal", "vertical" of direction d (0, 1).
const char* orientation_name(int o);
const char* direction_name(int d);
// Index of feature (window index w, orientation o, direction d) in Result::features.
inline std::size_t feature_index(std::size_t w, int o, int d) {
  return w * kFeaturesPerWindow + static_cast<std::size_t>(o) * 2 + static_cast<std::size_t>(d);
}

// Throws repix::Error (one line) unless `img` is a non-empty 2-D uint8 image and the windows are
// valid (ranklet's checks).
void check_input(const HostImage& img, const Options& opt);
void check_input(const InputDesc& in, const Options& opt);  // the same (it reads no values)

// The stored label of a ranklet value R of window r: Q - 1 = min(256, floor(256 R) + 1) - 1, 0..255
// (exact: ranklet::quantise). The host's quantise_plane and the GPU plan's kernel both use it.
REPIX_HD std::uint8_t label_of(float value, int r) {
  return static_cast<std::uint8_t>(ranklet::quantise(value, r) - 1);
}

// Q - 1 (0..255) of one ranklet plane of window r (n floats) into `labels`, OpenMP-parallel
// (threads as Options::threads).
void quantise_plane(const float* plane, std::int64_t n, int r, std::uint8_t* labels, int threads);

// `window,orientation,direction,ami` CSV, rows in feature order, 17 significant digits; atomic.
void write_csv(const Result& r, const std::string& path);

}  // namespace repix::ami
