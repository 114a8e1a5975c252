// gpu-opt and gpu-stream: host-side API (no device code; includable from plain C++).
//
// opt::Engine owns one input type/shape's device workspace: the global accumulator, the launch
// configuration and the exact sort-based fallback. OptPlan (gpu-opt) runs it on a device-resident
// image; gpu_stream.cu runs it chunk by chunk on slabs streamed from the host. Design, numbers and
// predictions: NOTES-gpu-opt.md beside this file.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/gpu.hpp"
#include "core/image.hpp"
#include "ecc/ecc.hpp"

namespace repix::ecc {

namespace opt {

// The ablation steps around gpu-opt, as bits of the engine's mode (each step's variant file sets
// its bits; a later step after gpu-opt keeps the earlier ones). A bit changes only the input types
// it names.
enum Mode : int {
  kModeOpt = 0,           // gpu-opt
  kModeDirect16 = 1,      // gpu-opt-direct: uint16 by direct index into the global bins, no block hash
  kModeWarpAgg = 2,       // gpu-opt-warp: float32 keys aggregated per warp before the block hash
  kModeStaticSchedule = 4,  // gpu-opt-static, the step before gpu-opt: fixed shares of work items
  kModeCluster16 = 8,     // gpu-opt-cluster: uint16 bins in a thread block cluster's shared memory (wins over kModeDirect16)
  kModeBins16 = 16,       // gpu-opt-bins16: 2D uint16 in 16-bit bins of one block's shared memory (wins over kModeDirect16)
  kModeHashBins16 = 32,   // gpu-opt-hash-bins16: gpu-opt's uint16 block hash in front of those bins (2D)
  kModeSampled16 = 64,    // gpu-opt-sampled16: 2D uint16, a sample of the values picks gpu-opt's kernel or kModeBins16's
  kModeFreshRows = 128,   // gpu-opt-fresh-rows, the step before gpu-opt: rows compared with the row above (2D) or plane below (3D) afresh
};

// Blocks a cluster of the kernels of this type and mode (1: no cluster; gpu-opt-cluster's uint16
// kernels: 8, the portable maximum). In gpu_opt_engine.cu.
int cluster_blocks(DType dtype, int mode);
// Whether the current GPU launches thread block clusters (compute capability 9.0 or newer), which
// those kernels need (Engine::setup refuses them otherwise); false without a GPU.
bool clusters_available();

// A word the finishing kernel copies from device memory into pinned host memory once the pass is
// done (device addresses; none when `from` is null): the NaN/inf check's result rides along with
// the pass's read-back instead of a copy of its own behind it.
struct CopyAlong {
  const unsigned long long* from = nullptr;
  unsigned long long* to = nullptr;
};

// Float inputs checked for NaN/inf on the GPU as they arrive there (no host pass over the image):
// the smallest linear index of a non-finite value, and whether it is a NaN, read back into pinned
// memory (by the finishing kernel: readback_along). Used by gpu-opt's whole-image path and by
// gpu-stream's chunks.
class NonfiniteCheck {
 public:
  // None found so far (asynchronous, on `s`).
  void reset(cudaStream_t s);
  // Searches n device floats `d`, at image linear index base..base+n-1 (asynchronous, on `s`).
  void check(const float* d, std::int64_t n, std::int64_t base, cudaStream_t s);
  // The read-back, for Engine::finish_queued(), which must follow every check() on the GPU.
  CopyAlong readback_along();
  // After the stream of that finish_queued() was synchronised: throw_nonfinite() for the first
  // one found.
  void throw_if_found(const Shape& shape) const;

 private:
  DeviceBuffer<unsigned long long> first_{1};  // smallest (index * 2 + is_inf); ~0 for none
  HostBuffer host_{sizeof(unsigned long long), true};
  unsigned long long* host_dev_ = nullptr;     // host_'s device address
};

// Tests only (the test hooks that are no option): the largest |VCEC| an integer segment's dense
// read-back form takes (gpu_opt_readback.hpp); 0 restores int32's. A lower limit sends segments of
// larger VCECs to the sparse form, as VCECs beyond int32 do on images of billions of voxels.
void set_dense_limit_for_tests(long long limit);
// Tests only: the work distribution (gpu_opt_schedule.hpp) for launches after the call: `dynamic`
// 1 (tickets), 0 (static strides) or -1 (the plan's: static for gpu-opt-static, else dynamic);
// `cap` > 0 bounds the items a warp (2D) or block (3D) takes below what the int32 sums allow, so
// that the grid grows.
void set_schedule_for_tests(int dynamic, std::int64_t cap);
// Tests only: the least voxels of a 2D uint16 image that gpu-opt-sampled16 samples, for plans set up
// after the call (0 restores gpu_opt_core.cuh's sampled16::kFrom), so that small images take both
// of its kernels (a pass of fewer values than one sampled run still runs gpu-opt's kernel alone).
void set_sampled_from_for_tests(std::int64_t voxels);
// Throws Error when a field of `t` is outside its range (OptTuning; the CLI refuses such values
// before they get here).
void check_tuning(const OptTuning& t);

class Engine {
 public:
  Engine();
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Allocates everything for inputs of this type and shape; `streaming` sizes the float hash
  // table for an unknown number of distinct values (the whole image is never seen at once).
  // `tuning`: the work items' split, the kernels' register budgets and the integer read-back's
  // form for every pass of this set-up (a cache of engines keys on it).
  void setup(DType dtype, const Shape& shape, bool streaming, const OptTuning& tuning);
  // The ablation step's kernels (Mode bits; kModeOpt: gpu-opt's). Call before setup().
  void set_mode(int mode);
  // Tests: global float hash table capacity (rounded up to a power of two, at least 2), to force
  // the overflow fallback. 0 restores the automatic size. Reallocates when already set up.
  void set_global_capacity(std::size_t slots);

  // Clears the accumulator (asynchronous) where a pass left it in use: finish_queued()'s kernel
  // leaves it empty, so after a finished pass this queues nothing.
  void reset(cudaStream_t s);
  // Adds the contributions of slabs [s0, s1) of the image, read from a device buffer whose first
  // slab is image slab b0 and which holds every image slab of [s0 - 1, s1 + 1) (asynchronous).
  // Launches that may run at once (on different streams) pass different `lane`s (0..15 share out
  // their work items dynamically; higher lanes take the static schedule).
  void accumulate(const void* buf, std::int64_t b0, std::int64_t s0, std::int64_t s1,
                  cudaStream_t s, int lane = 0);

  // After the last accumulate(): finish_queued() queues one kernel that writes the accumulated
  // values into pinned host memory (float: the counters and the first few thousand (value, VCEC)
  // pairs; integers: the values that occur and their VCEC) and empties the accumulator for the
  // next pass; nothing waits. collect() synchronises `s` and returns false when the float table
  // overflowed (use the fallback), else the curve in `out`; a float image with more distinct
  // values than were read back costs one more copy and synchronisation, and later images read
  // back that many. Every finish_queued() is followed by one collect() or drop_queued().
  // `along`: a word copied into host memory by the same kernel (NonfiniteCheck::readback_along).
  void finish_queued(cudaStream_t s, CopyAlong along = {});
  bool collect(cudaStream_t s, Curve& out);
  // The last complete collect()'s host time after its synchronisation: the curve made from the
  // read-back (sort or running sum, the vectors), with the extra copy of a float image of more
  // values than were read back (0 after one that found the table overflowed). The timeline's
  // host_curve_work_us.
  double collect_work_us() const;
  // For a CUDA graph of accumulate() and finish_queued() (gpu_opt_graph.cu): prepare_readback()
  // makes the read-back buffer the next finish_queued() needs (an allocation: outside a stream
  // capture); readback_bytes() is that buffer's size, which a captured finish_queued() depends on
  // (re-capture when it changes); finish_replayed() is the host's part of a finish_queued() that a
  // graph launch replays (the accumulator's state for collect() and reset()).
  void prepare_readback(cudaStream_t s);
  std::size_t readback_bytes() const;
  void finish_replayed();
  // Forgets a finish_queued() no one will collect (the next one's read-back, queued behind it on
  // the same stream, overwrites it).
  void drop_queued();

  // Exact sort-based path: per-voxel (key, change) pairs, radix sort, reduce by key, merged on
  // the host. Same buffer contract as accumulate(); synchronous.
  void fallback_begin();
  void fallback_add(const void* buf, std::int64_t b0, std::int64_t s0, std::int64_t s1,
                    cudaStream_t s);
  Curve fallback_curve() const;

  // Device bytes setup() allocates (for fits_on_device).
  static std::size_t workspace_bytes(DType dtype, const Shape& shape, bool streaming);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace opt

// gpu-opt's plan: one pass over a device-resident image.
class OptPlan final : public DevicePlan {
 public:
  // `mode`: the ablation step after gpu-opt whose kernels the plan runs (opt::Mode bits).
  explicit OptPlan(int mode = opt::kModeOpt) { engine_.set_mode(mode); }
  void setup(const InputDesc& in, const Options& opt, cudaStream_t stream) override;
  void compute(const DeviceInputs& in, cudaStream_t stream) override;
  Curve result(cudaStream_t stream) override;
  Stats stats() const override { return {used_fallback_}; }
  // compute() then result() as two steps a caller can interleave with other work: compute_queued()
  // queues the pass and its read-back on `stream`; collect() waits once and returns the curve,
  // running the exact fallback (synchronously) when the float table overflowed. `d_input` must
  // stay valid until collect(). For BatchRunner's per-image path and gpu-opt's end to end.
  // `along`: see Engine::finish_queued.
  void compute_queued(const void* d_input, cudaStream_t stream, opt::CopyAlong along = {});
  Curve collect(cudaStream_t stream);
  double collect_work_us() const { return engine_.collect_work_us(); }  // see opt::Engine
  // True when the last computation overflowed the global hash table and took the exact
  // sort-based path (float: known once result() has collected it).
  bool used_fallback() const { return used_fallback_; }
  // Tests: see opt::Engine::set_global_capacity.
  void set_global_capacity_for_tests(std::size_t slots) { engine_.set_global_capacity(slots); }

 private:
  opt::Engine engine_;
  Shape shape_;
  DType dtype_ = DType::f32;
  bool used_fallback_ = false;
  const void* queued_input_ = nullptr;  // compute_queued()'s input, for collect()'s fallback
  bool pending_ = false;                // compute() queued a read-back that result() collects
  cudaStream_t pending_stream_ = nullptr;
  Curve curve_;                         // the last collected curve
};

// gpu-opt end to end (host image in, curve out; the default of `repix run ecc` on a GPU). Small
// images go through one cached OptPlan (no allocation, one synchronisation per call); larger ones
// through gpu-stream's pipeline (cached too), so that the upload of chunk c+1 overlaps the kernel
// of chunk c and the run approaches the host-to-device bound. See end_to_end_chunk_bytes.
Curve run_gpu_opt(const HostImage& img, const Options& opt);
// gpu-opt end to end as one CUDA graph of `opt.tuning.graph_chunks` copies and kernels
// (gpu_opt_graph.cu): taken by run_gpu_opt for pinned images up to 1 GiB when that count is
// positive (--graph-chunks, 0..16, default 0: off, as measured: gpu_opt_graph.cu).
Curve run_gpu_opt_graph(const HostImage& img, const Options& opt);
std::unique_ptr<DevicePlan> make_gpu_opt_plan();
// A variant of an ablation step after gpu-opt: OptPlan(mode) as its plan, and end to end a
// plan per call under the NVTX range "ecc/<id>" (gpu_opt.cu).
Variant make_opt_step_variant(std::string id, std::string step, std::string description, int mode);
// The ablation steps around gpu-opt (gpu_opt_static.cu, gpu_opt_fresh_rows.cu, gpu_opt_direct.cu, ...).
Variant gpu_opt_static_variant();
Variant gpu_opt_fresh_rows_variant();
Variant gpu_opt_direct_variant();
Variant gpu_opt_warp_variant();
Variant gpu_opt_cluster_variant();
Variant gpu_opt_bins16_variant();
Variant gpu_opt_hash_bins16_variant();
Variant gpu_opt_sampled16_variant();

// The chunk size gpu-opt's end-to-end run streams an image of `image_bytes` in `slabs` slabs
// with, or 0 to upload it whole and run one pass (images too small for two chunks of
// kMinEndToEndChunk, or of one slab). `requested` (Options::chunk_bytes, `--chunk-mib`) wins when
// non-zero and the image has two slabs or more. Host-only arithmetic (tested on the CPU).
// kMinEndToEndChunk: 4 MiB. A chunk of a few MiB fills only part of the GPU, and each costs the
// host its API calls: on the H100 (gpu-opt end to end, `--chunk-mib` 1 / 2 / 4 / whole,
// NOTES-gpu-opt.md) 2048^2 float32 took 0.486 / 0.447 / 0.432 ms, GRF
// 2048^2 0.649 / 0.580 / 0.498, 128^3 GRF (8 MiB) 0.418 / 0.416 / 0.354 (two chunks), and the
// 4 MiB uint8 images ran fastest whole (0.118 ms against 0.143 in 1 MiB chunks).
inline constexpr std::size_t kMinEndToEndChunk = std::size_t(4) << 20;
std::size_t end_to_end_chunk_bytes(std::size_t image_bytes, std::int64_t slabs, std::size_t requested);

// gpu-stream (gpu_stream.cu). `stats`, when given, reports what happened (tests, harness).
struct StreamStats {
  std::int64_t chunks = 0;
  std::int64_t slabs_per_chunk = 0;
  bool used_fallback = false;
  bool direct_from_pinned = false;  // host image was pinned: uploaded without staging copies
};
Curve run_gpu_stream(const HostImage& img, const Options& opt);
Curve run_gpu_stream_source(SlabSource& src, const Options& opt);
// `nvtx_name`: the range the run is recorded under (gpu-opt's end-to-end path runs this pipeline
// under its own name). [own_first, own_last): the slabs whose contributions are counted (the
// others are read as halos only; -1: to the last slab).
Curve run_gpu_stream_ex(SlabSource& src, const Options& opt, const HostImage* whole,
                        std::size_t global_capacity_for_tests, StreamStats* stats,
                        const char* nvtx_name = "ecc/gpu-stream", std::int64_t own_first = 0,
                        std::int64_t own_last = -1);
// True when an image of this type and shape plus gpu-opt's workspace fits in the GPU's free
// memory (with a safety margin); false also when there is no GPU. The CLI uses gpu-stream when
// this is false.
bool fits_on_device(DType dtype, const Shape& shape);

}  // namespace repix::ecc
