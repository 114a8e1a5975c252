// Euler characteristic curves (Wang, Wagner & Chen, SoCG 2022) of 2D/3D grayscale images.
//
// Semantics (the paper's T-construction): voxels are the top cells of a cubical complex; every
// lower cell takes the minimum value of the voxels containing it. ECC(t) = sum_k (-1)^k #{k-cells
// with value <= t}, reported for every distinct input value t, ascending. A voxel introduces a
// cell when it comes first among the cell's voxels in the order (value, linear index): compare
// with `<` against neighbours of smaller linear index and `<=` against larger ones; outside the
// image nothing ever wins. VCEC(t) = sum over voxels of value t of (-1)^dim(cell) over the cells
// they introduce, and ECC is its prefix sum.
//
// Every variant is one function (or one DevicePlan for GPU variants) registered in register.cpp,
// in the shape of core/variant.hpp.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/image.hpp"
#include "core/slab_source.hpp"
#include "core/variant.hpp"

namespace repix::ecc {

struct Curve {
  std::vector<float> values;       // distinct input values, ascending (-0 folded into +0)
  std::vector<std::int64_t> ecc;   // ECC at each value (exact)
  bool operator==(const Curve& o) const { return values == o.values && ecc == o.ecc; }
};

// gpu-opt's engine tuning (gpu_opt_engine.cu, gpu_opt_graph.cu), read per call by the variants
// that run the engine: gpu-opt-static, gpu-opt-fresh-rows, gpu-opt, gpu-opt-direct, gpu-opt-warp, gpu-opt-cluster,
// gpu-opt-bins16, gpu-opt-hash-bins16, gpu-opt-sampled16 and gpu-stream
// (graph_chunks: gpu-opt end to end only). The defaults are the measured ones
// (NOTES-gpu-opt.md); the CLI's --min-chunk-2d ... --graph-chunks set them
// (harness/families/ecc/adapter.cpp declares the ranges). A value that changes the engine's plan
// is part of every cached workspace's key.
struct OptTuning {
  int min_chunk_2d = 12;  // least rows a work item covers (1..4096)
  int min_chunk_3d = 9;   // least planes a work item covers (1..4096)
  int items_2d = 8;       // dynamic schedule: the tail's items a warp slot (1..4096)
  int items_3d = 8;       // dynamic schedule: the tail's items a block slot (1..4096)
  int head_pct_2d = 40;   // dynamic schedule: the head's share of the rows in percent (0..100)
  int head_pct_3d = 75;   // ... of the planes (0..100)
  int blocks_2d = 3;      // the 2D kernel's register budget, in minimum blocks an SM (2 or 3)
  int blocks_3d = 2;      // the 3D kernel's (2 or 3)
  int dense_from = 353;   // integer read-back: least occurring values of a dense segment (1..1025;
                          // 1025: never dense); kDenseFrom (gpu_opt_readback.hpp)
  int graph_chunks = 0;   // gpu-opt end to end as one CUDA graph of K chunks (0: off; 1..16)
  static constexpr int kMaxItems = 4096;        // min_chunk_* and items_*
  static constexpr int kMaxDenseFrom = 1025;    // kSegmentBins + 1: never dense
  static constexpr int kMaxGraphChunks = 16;    // a chunk a dynamic-schedule lane
  auto tie() const {
    return std::tie(min_chunk_2d, min_chunk_3d, items_2d, items_3d, head_pct_2d, head_pct_3d, blocks_2d, blocks_3d,
                    dense_from, graph_chunks);
  }
  bool operator==(const OptTuning& o) const { return tie() == o.tie(); }
  bool operator!=(const OptTuning& o) const { return !(*this == o); }
  bool operator<(const OptTuning& o) const { return tie() < o.tie(); }
};

struct Options {
  int threads = 0;                  // CPU threads for omp variants; 0 = OpenMP's default
  std::size_t chunk_bytes = 0;      // gpu-stream / gpu-opt end-to-end chunk size; 0 = automatic
  int streams = 3;                  // gpu-stream: concurrent chunk pipelines
  // gpu-stream over a generated source whose kind has a GPU generator (uniform): its chunks made
  // on the GPU (the same values) instead of on the host and copied. Off by default: the paper's
  // out-of-core pipeline (Table 1) moves its chunks over PCIe; the distributed run sets it.
  bool generate_on_device = false;
  // gpu-opt and gpu-stream end to end: record where the call's time goes (EndToEndTimeline; CUDA
  // events with timing and one more host wait, a few microseconds a call). Diagnostic: off in
  // every timing that is reported as the call's cost.
  bool timeline = false;
  OptTuning tuning;                 // gpu-opt's engine (see OptTuning)
};

// Where an end-to-end call's time went (Options::timeline), in microseconds. GPU times count from
// an event recorded before the first upload; host times from the call's entry. A GPU time and a
// host time are on different clocks: compare GPU times with GPU times, host with host.
struct EndToEndTimeline {
  std::int64_t chunks = 0;        // 1: the whole image in one upload and one pass
  double gpu_uploaded_us = 0;     // the last upload done
  double gpu_kernels_us = 0;      // every accumulation kernel done (gpu-stream's chunks; -1 where
                                  // not recorded: the whole-image pass, the graph path)
  double gpu_finished_us = 0;     // the finishing kernel done: the curve's raw material in host memory
  double host_issued_us = 0;      // the host queued the last GPU operation
  double host_woken_us = 0;       // the host saw the finishing kernel done
  double host_returned_us = 0;    // the curve made: the call returns
  // Of the host's time from woken to returned, the part that made the curve out of the read-back
  // (its sort or running sum and the vectors; Engine::collect_work_us); the rest is API calls,
  // the NaN/inf check's word and the workspace's return to its cache.
  double host_curve_work_us = 0;
};
// The timeline of the calling thread's last end-to-end call made with Options::timeline, once
// (a second take, or one after a call without it, returns nothing).
std::optional<EndToEndTimeline> take_timeline();

// What a run counts of itself.
struct Stats {
  // gpu-opt's float path overflowed its global hash table and took the exact sort-based path: a
  // different algorithm, so a timing says which one it timed.
  bool used_fallback = false;
};

// GPU variants expose a plan (core/variant.hpp): one input image, the curve out, so the harness
// can time them on device-resident data ("kernel" scope) as well as end to end.
using DevicePlan = repix::DevicePlan<Options, Curve, Stats>;

struct Variant : repix::Variant<Curve(const HostImage&, const Options&), DevicePlan> {
  // Streaming variants only: the image comes from a slab source, never held whole.
  std::function<Curve(SlabSource&, const Options&)> run_source;
};

// All registered variants, in ablation order (register.cpp).
const std::vector<Variant>& variants();
// Throws repix::Error listing the known ids when `id` is unknown.
const Variant& find_variant(const std::string& id);

// ---- shared pieces --------------------------------------------------------------------------

// Throws repix::Error naming the first NaN/inf (float images only), or an empty image.
void check_input(const HostImage& img);
// The error check_input throws, for callers that find the bad element themselves (the GPU).
[[noreturn]] void throw_nonfinite(const Shape& shape, std::int64_t index, bool is_nan);
// gpu-stream's pipeline over the slabs [first, last) of `src` (along the slowest axis) only: the
// contributions of their voxels, the slabs next to them read as neighbours (a distributed
// run's part). The curve lists the values of those voxels with the running sum of their
// contributions; a NaN/inf among them is said with its place in the whole image.
Curve run_gpu_stream_slabs(SlabSource& src, const Options& opt, std::int64_t first, std::int64_t last);
// Runs a GPU plan end to end: upload, compute, result (NVTX phases h2d/kernel/d2h); `opt` goes to
// the plan's setup.
Curve run_plan_end_to_end(DevicePlan& plan, const HostImage& img, const std::string& nvtx_name, const Options& opt);

// Turns a VCEC over bins into the curve: keeps bins that occur (present[i] != 0), prefix-sums.
Curve curve_from_bins(const std::vector<float>& bin_values, const std::vector<std::int64_t>& vcec,
                      const std::vector<std::int64_t>& present);

// Writes `value,ecc` CSV (values printed to read back as the same float32); atomic.
void write_csv(const Curve& c, const std::string& path);
// Reads it back (tests, `repix compare`).
Curve read_csv(const std::string& path);

// The variants (one file each).
Curve run_seq(const HostImage& img, const Options& opt);
Curve run_omp(const HostImage& img, const Options& opt);

}  // namespace repix::ecc
