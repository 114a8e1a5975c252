// The ranklet stage of the AMI texture descriptor (Pal, MSc thesis 2020, section 2.2; issue 13).
//
// Semantics (every variant computes exactly this):
//
//  * Input: a 2-D uint8 image f of H rows and W columns (non-empty); window sizes r, powers of two
//    from 2 to 32, each at most once, in any order (default 4, 8, 16, 32); h = r / 2, N = r^2.
//  * The window of output pixel (y, x) is rows y-h+1 .. y+h, columns x-h+1 .. x+h: the output
//    pixel is the bottom-right pixel of the window's top-left quadrant (thesis Figure 4.1a).
//    Pixels outside the image read 255 (the thesis pads with 255).
//  * Quadrants TL, TR, BL, BR (h x h each). Orientations, in this order:
//      H: T = TL u BL (left half),  C = TR u BR (right half)
//      V: T = TL u TR (top half),   C = BL u BR (bottom half)
//      D: T = TL u BR,              C = TR u BL
//  * R = (sum over T of the 1-based midranks within the window - (N/4)(N/2+1)) / (N^2/4)
//    (thesis Eq. 2.1; tied pixels share the average of their ranks). Equivalently R = U / (N^2/4)
//    with the Mann-Whitney U = #{(t,c) in T x C: t > c} + 1/2 #{t = c}. Every variant computes
//    the integer 2U (at most N^2/2 = 2^19) and R = 2U / (N^2/2): a power-of-two denominator, so
//    R is exact in float32 and the variants agree bit for bit.
//  * Output: float32 of numpy shape (windows, 3, H, W), windows in the order given, orientations
//    H, V, D (HostImage of Shape::d3(W, H, 3 * windows): plane 3 * w + o).
//  * Quantisation for the feature stage (thesis Eq. 2.2, q = 256): Q = min(256, floor(256 R) + 1),
//    levels 1..256, computed from the integer 2U (quantise_two_u) or from R exactly (quantise:
//    R * (N^2/2) is the integer 2U again). R = 1 (every T pixel above every C pixel: common at
//    edges) would be level 257 by Eq. 2.2 and is clamped into level 256.
//
// Consequences worth knowing: a constant image gives R = 0.5 where the window lies inside the
// image, but not near the bottom/right (and top/left) borders, where the 255 padding enters T or
// C unevenly (an image of 255 alone gives 0.5 everywhere). An image smaller than the window is
// fine: most of its windows are padding.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/hd.hpp"
#include "core/image.hpp"
#include "core/variant.hpp"

namespace repix::ami::ranklet {

constexpr int kOrientations = 3;  // H, V, D
constexpr int kMinWindow = 2, kMaxWindow = 32;
constexpr std::uint8_t kPad = 255;  // what pixels outside the image read
constexpr int kLevels = 256;        // quantisation levels q

struct Options {
  int threads = 0;                        // omp: OpenMP threads; 0 = OpenMP's default
  std::vector<int> windows{4, 8, 16, 32};  // window sizes r, in output order
  int block = 8;                          // gpu-naive: thread block edge (block x block threads; thesis Table 5.5)
};

// What a run measures of itself. Every variant does the same work whatever the input, so
// nothing is counted; GPU variants time their kernels (CUDA events around compute(), all windows).
struct Stats {
  double kernel_ms = -1;  // GPU variants: the last compute()'s kernels; -1: not measured (CPU)
};

struct Result {
  std::vector<int> windows;  // as asked, in output order
  HostImage ranklet;         // float32, Shape::d3(W, H, 3 * windows.size()); plane 3 * w + o
  Stats stats;
};

// GPU variants' plans (core/variant.hpp): input {image (uint8)}; the ranklet planes in the plan's
// device buffer.
using DevicePlan = repix::DevicePlan<Options, Result, Stats>;

struct Variant : repix::Variant<Result(const HostImage& input, const Options&), DevicePlan> {};

// All registered variants, in ablation order (register.cpp).
const std::vector<Variant>& variants();
// Throws repix::Error listing the known ids when `id` is unknown.
const Variant& find_variant(const std::string& id);

// ---- checks and layout (common.cpp) -------------------------------------------------------------

// Throws repix::Error (one line) unless `img` is a non-empty 2-D uint8 image.
void check_input(const HostImage& img);
void check_input(const InputDesc& in);  // the same (it reads no values), for an input elsewhere
// Throws repix::Error (one line) unless `windows` is non-empty, each a power of two in 2..32, none
// twice.
void check_windows(const std::vector<int>& windows);
// "4,8,16,32" -> {4, 8, 16, 32}, checked as above; throws repix::Error naming the bad entry.
std::vector<int> parse_windows(const std::string& text);
// "4,8,16,32".
std::string windows_text(const std::vector<int>& windows);
// The output of `windows` on an image of `shape` (2-D), uninitialised; pinned where asked.
Result make_result(const Shape& shape, const std::vector<int>& windows, bool pinned = false);
// Plane (window index w, orientation o) of r.ranklet.
float* plane(Result& r, std::size_t w, int o);
const float* plane(const Result& r, std::size_t w, int o);

// ---- per-pixel arithmetic, host and device -------------------------------------------------------

// Pixel (x, y) of an image of width w and height h, stored x fastest; 255 outside.
REPIX_HD std::uint8_t pixel_or_pad(const std::uint8_t* img, std::int64_t w, std::int64_t h, std::int64_t x,
                                   std::int64_t y) {
  return (x >= 0 && x < w && y >= 0 && y < h) ? img[y * w + x] : kPad;
}

// N^2 / 2 for window r: the denominator of R = 2U / (N^2/2); a power of two (2^(4k-1)).
REPIX_HD std::uint32_t two_u_scale(int r) {
  const std::uint32_t n = static_cast<std::uint32_t>(r) * static_cast<std::uint32_t>(r);
  return n * n / 2;
}

// R from the integer 2U: exact in float32 (2U < 2^24, a power-of-two denominator).
REPIX_HD float ranklet_value(std::uint32_t two_u, int r) {
  return static_cast<float>(two_u) / static_cast<float>(two_u_scale(r));
}

// Q = min(256, floor(256 R) + 1) from the integer 2U, in integers: 256 R = 512 * 2U / N^2
// (512 * 2^19 = 2^28 fits 32 bits).
REPIX_HD int quantise_two_u(std::uint32_t two_u, int r) {
  const std::uint32_t n = static_cast<std::uint32_t>(r) * static_cast<std::uint32_t>(r);
  const std::uint32_t level = (two_u * 512u) / (n * n) + 1u;
  return level > static_cast<std::uint32_t>(kLevels) ? kLevels : static_cast<int>(level);
}

// The integer 2U behind a ranklet value R of window r (exact: R * N^2/2 is an integer in float32).
REPIX_HD std::uint32_t two_u_of(float value, int r) {
  return static_cast<std::uint32_t>(value * static_cast<float>(two_u_scale(r)));
}

// Q of a ranklet value R of window r: quantise_two_u(two_u_of(R, r), r).
REPIX_HD int quantise(float value, int r) { return quantise_two_u(two_u_of(value, r), r); }

// 2U of an orientation from the doubled midrank sum of its T half: 2U = 2 sum(ranks) - n(n+1),
// n = N/2 (Eq. 2.1 times N^2/2).
REPIX_HD std::uint32_t two_u_from_rank_sum(std::uint32_t doubled_rank_sum, int r) {
  const std::uint32_t n = static_cast<std::uint32_t>(r) * static_cast<std::uint32_t>(r) / 2;
  return doubled_rank_sum - n * (n + 1);
}

// Which quadrant window element (i, j) (row i, column j from the window's top-left, 0 .. r-1)
// is in: bit 0 = right half, bit 1 = bottom half (TL 0, TR 1, BL 2, BR 3).
REPIX_HD int quadrant_of(int i, int j, int h) { return (j >= h ? 1 : 0) | (i >= h ? 2 : 0); }

// Whether quadrant q is in T of orientation o (0 H, 1 V, 2 D).
REPIX_HD bool in_treatment(int q, int o) {
  return o == 0 ? (q & 1) == 0 : o == 1 ? (q & 2) == 0 : (q == 0 || q == 3);
}

// ---- the shared reference-side helpers (common.cpp) ----------------------------------------------

// The three orientations' 2U at (x, y) for window r from `sorted`, the window's N values sorted
// ascending: a run of value v at sorted[lo, hi) has the 1-based midrank (lo + 1 + hi) / 2, so
// twice_rank[v] = lo + hi + 1 (filled for the values present, the only ones read); then the T
// halves' doubled rank sums over the window (read again through pixel_or_pad). Shared by seq,
// omp and gpu-naive.
REPIX_HD void two_u_from_sorted(const std::uint8_t* img, std::int64_t w, std::int64_t h, std::int64_t x,
                                std::int64_t y, int r, const std::uint8_t* sorted, std::uint32_t two_u[3]) {
  const int hh = r / 2, n = r * r;
  std::uint16_t twice_rank[256];
  for (int lo = 0; lo < n;) {
    int hi = lo + 1;
    while (hi < n && sorted[hi] == sorted[lo]) ++hi;
    twice_rank[sorted[lo]] = static_cast<std::uint16_t>(lo + hi + 1);
    lo = hi;
  }
  std::uint32_t doubled[3] = {0, 0, 0};
  for (int i = 0; i < r; ++i)
    for (int j = 0; j < r; ++j) {
      const std::uint32_t t = twice_rank[pixel_or_pad(img, w, h, x - hh + 1 + j, y - hh + 1 + i)];
      const int q = quadrant_of(i, j, hh);
      for (int o = 0; o < kOrientations; ++o)
        if (in_treatment(q, o)) doubled[o] += t;
    }
  for (int o = 0; o < kOrientations; ++o) two_u[o] = two_u_from_rank_sum(doubled[o], r);
}

// Copies window r of (x, y) into out[0, r^2) row by row (255 outside the image).
REPIX_HD void gather_window(const std::uint8_t* img, std::int64_t w, std::int64_t h, std::int64_t x, std::int64_t y,
                            int r, std::uint8_t* out) {
  const int hh = r / 2;
  for (int i = 0; i < r; ++i)
    for (int j = 0; j < r; ++j) out[i * r + j] = pixel_or_pad(img, w, h, x - hh + 1 + j, y - hh + 1 + i);
}

// 2U of the three orientations for one window position from its quadrant histograms, one bin at
// a time, from the highest value down: c[q] = quadrant q's count of value v, g[q] = quadrant q's
// count of values above v (updated here). For each orientation, every C pixel of value v meets
// g_T pixels of T above it (2 each) and c_T equal to it (1 each). seq-hist runs it over all 256
// bins; gpu-opt's lanes over their own 8 bins, g starting at the counts of the lanes above.
REPIX_HD void accumulate_bin(const std::uint32_t c[4], std::uint32_t g[4], std::uint32_t two_u[3]) {
  two_u[0] += (c[1] + c[3]) * (2 * (g[0] + g[2]) + c[0] + c[2]);  // H: T = TL u BL, C = TR u BR
  two_u[1] += (c[2] + c[3]) * (2 * (g[0] + g[1]) + c[0] + c[1]);  // V: T = TL u TR, C = BL u BR
  two_u[2] += (c[1] + c[2]) * (2 * (g[0] + g[3]) + c[0] + c[3]);  // D: T = TL u BR, C = TR u BL
  for (int q = 0; q < 4; ++q) g[q] += c[q];
}

}  // namespace repix::ami::ranklet
