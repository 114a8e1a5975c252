// Grayscale morphological reconstruction by dilation (Teodoro et al., Parallel Computing 2013,
// "irregular wavefront propagation"; Vincent 1993).
//
// Definition: start from min(marker, mask); repeat the elementary geodesic dilation (4- or
// 8-connectivity; nothing crosses the image border) followed by a pointwise min with the mask
// until nothing changes. The result is unique, so every variant must equal the reference `seq`
// (Vincent's fast hybrid algorithm) exactly, for each connectivity and dtype. A marker above the
// mask anywhere is an error unless Options::clip is set (then the marker is clipped to the mask).
//
// 2D images (ny rows of nx pixels, x fastest); uint8, uint16 and float32 (NaN/inf rejected).
// Every variant is one function (CPU) or one DevicePlan (GPU), registered in
// register.cpp; the harness finds them through variants().
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/image.hpp"
#include "core/variant.hpp"
#include "core/tiling/tile_stats.hpp"

namespace repix::reconstruct {

struct Options {
  int connectivity = 8;            // 4 or 8
  bool clip = false;               // clip the marker to the mask instead of rejecting it
  int threads = 0;                 // CPU variants: OpenMP threads; 0 = OpenMP's default
  int tile = 0;                    // tiled variants: tile edge in pixels; 0 = automatic
  int gpus = 0;                    // multi-device: GPU workers; 0 = every visible GPU
  int cpu_groups = 0;              // multi-device: CPU workers (groups of cores), each on its own tiles
  int cpu_group_threads = 0;       // multi-device: OpenMP threads per CPU group; 0 = share the cores out
  int raster_scans = 1;            // hybrid variants: raster+anti-raster pairs before the queue phase
  std::int64_t queue_capacity = 0; // queue variants: elements; 0 = automatic. Overflow re-runs.
  int queue_blocks_per_sm = 0;     // queue variants: persistent blocks per SM; 0 = as many as fit
                                   // (the paper's Table 1 ran 1 per SM)
};

// Counters the paper's Table 1 reports, and what a run did.
struct Stats {
  std::int64_t initially_queued = 0;  // queue variants: elements queued after the raster scans
  std::int64_t total_queued = 0;      // every enqueue over the whole run
  std::int64_t passes = 0;            // raster passes / dilation iterations / propagation rounds
  std::int64_t overflow_reruns = 0;   // queue overflows that restarted from the current state
  double wavefront_ms = -1;           // queue variants: GPU time of the propagation kernels (the paper's
                                      // "wavefront phase", CUDA events); -1 where not measured
  tiling::TiledRun tiled;               // multi-device: tiles, phase times, per-worker counters
};

struct Result {
  HostImage image;  // same dtype and shape as the mask
  Stats stats;
};

// GPU variants expose a plan (core/variant.hpp) so the harness can time them on device-resident
// data: inputs {marker, mask} (already checked: same shape/dtype, marker <= mask unless clip), the
// result in the plan's device buffer; compute() may synchronise its stream (convergence checks).
class DevicePlan : public repix::DevicePlan<Options, Result, Stats> {
 public:
  // The result of the last compute() where it lies on the device (the mask's dtype, rows back to
  // back; valid until the next setup or compute), with its Stats: for callers that copy it
  // themselves (multi-device moves tiles into a larger host image).
  struct DeviceResult {
    const void* data = nullptr;
    Stats stats;
  };
  virtual DeviceResult device_result() const;
  Stats stats() const override { return device_result().stats; }
};

using Variant = repix::Variant<Result(const HostImage& marker, const HostImage& mask, const Options&), DevicePlan>;

// All registered variants, in ablation order (register.cpp).
const std::vector<Variant>& variants();
// Throws repix::Error listing the known ids when `id` is unknown.
const Variant& find_variant(const std::string& id);

// Throws repix::Error (one line) for: empty or non-2D images, shape or dtype mismatch, NaN/inf,
// connectivity other than 4/8, and (unless opt.clip) the first pixel where marker > mask.
void check_inputs(const HostImage& marker, const HostImage& mask, const Options& opt);
// check_inputs for pixels of a larger image of shape `whole` (a distributed run's rows), which
// start there at linear index `first_index`: the places in its errors are the whole image's.
void check_part(const HostImage& marker, const HostImage& mask, const Options& opt, const Shape& whole,
                std::int64_t first_index);
// The checks of check_inputs that read no values (options, shapes, types), for inputs elsewhere
// (on the device), and the errors of those that do, for callers that find the element themselves.
void check_descriptions(const InputDesc& marker, const InputDesc& mask, const Options& opt);
[[noreturn]] void throw_nonfinite(const std::string& name, const Shape& shape, std::int64_t index, bool is_nan);
[[noreturn]] void throw_marker_above(const Shape& shape, std::int64_t index, double marker, double mask);

}  // namespace repix::reconstruct
