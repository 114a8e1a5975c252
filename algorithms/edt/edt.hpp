// Euclidean distance transform by wavefront propagation (Teodoro et al. 2013, Algorithms 3 and
// 6) and exact EDTs.
//
// Input: a 2D image whose zero pixels are background (the sites). Output: float32 Euclidean
// distance of every pixel to its nearest background pixel (0 on background) and, on request,
// the site map (linear index of the nearest background pixel; -1 where the image has no
// background at all, where the distance is +inf).
//
// Exact variants (seq-exact, and any exact GPU variant) agree with each other to float32
// rounding of sqrt of the same integer. Propagation variants depend on processing order, so they
// are checked by properties (check_propagation in verify.cpp): every site is background and
// the distance equals the distance to it; no 8-neighbour's site is strictly closer; exact where
// the exact squared distance is below 169; elsewhere never below exact and at most 0.29 px above.
#pragma once
#include <cuda_runtime_api.h>

#include <climits>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/image.hpp"
#include "core/tiling/tile_stats.hpp"
#include "core/variant.hpp"

namespace repix::edt {

// A column's nearest background row outside a part (Options::column_bounds) where it has none.
constexpr std::int32_t kNoRow = INT32_MIN;

struct Options {
  int threads = 0;                  // CPU variants: OpenMP threads; 0 = OpenMP's default
  int tile = 0;                     // tiled variants: tile edge; 0 = automatic
  std::int64_t queue_capacity = 0;  // queue variants: elements; 0 = automatic. Overflow re-runs.
  bool want_sites = true;           // fill Result::sites
  int gpus = 0;                     // multi-device: GPU workers; 0 = every visible GPU
  int cpu_groups = 0;               // multi-device: CPU workers (groups of cores), each on its own tiles
  int cpu_group_threads = 0;        // multi-device: OpenMP threads per CPU group; 0 = share the cores out
  // The image is a part of rows of a larger one (the distributed runs): column x's nearest
  // background row above the part at [x] and below it at [nx + x], as rows counted from the
  // part's first (negative above, >= its rows below; kNoRow: none). The exact separable GPU
  // variants (gpu-opt, gpu-exact-envelope, gpu-exact-rowfill) read it; their sites are then
  // indices into the part's rows extended by those (row r of the part at r * nx: negative
  // above it), for the caller to shift. Empty: the image is whole. Not a command-line option.
  std::vector<std::int32_t> column_bounds;
};

struct Stats {
  std::int64_t initially_queued = 0;
  std::int64_t total_queued = 0;
  std::int64_t passes = 0;
  std::int64_t overflow_reruns = 0;
  std::int64_t fallback_rows = 0;   // gpu-opt: rows its windowed search left to the envelope path
  tiling::TiledRun tiled;  // multi-device: tiles, phase times, per-worker counters
};

struct Result {
  HostImage distance;                // float32, input's shape
  std::vector<std::int64_t> sites;   // linear index of the nearest site per pixel (if wanted)
  Stats stats;
};

// GPU variants' plans (core/variant.hpp): input {image}; distance (and sites, if wanted) in the
// plan's device buffers.
using DevicePlan = repix::DevicePlan<Options, Result, Stats>;

struct Variant : repix::Variant<Result(const HostImage& input, const Options&), DevicePlan> {
  bool exact = false;  // true: must match seq-exact; false: checked by the propagation properties
};

const std::vector<Variant>& variants();
const Variant& find_variant(const std::string& id);

// Throws repix::Error (one line) for empty or non-2D input, NaN/inf.
void check_input(const HostImage& input);
// The same for pixels of a larger image of shape `whole` (a distributed run's rows) that start
// there at linear index `first_index`: the places in its errors are the whole image's.
void check_part(const HostImage& input, const Shape& whole, std::int64_t first_index);
// Its checks that read no values (an input elsewhere: on the device), and the error of the one
// that does, for callers that find the element themselves.
void check_description(const Shape& shape);
[[noreturn]] void throw_nonfinite(const Shape& shape, std::int64_t index, bool is_nan);

}  // namespace repix::edt
