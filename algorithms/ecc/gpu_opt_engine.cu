// gpu-opt's host engine: the global accumulator's workspace, the launches of the 2D/3D kernels
// over slab ranges (whole images, or gpu-stream's chunks), the read-back into a curve, and the
// exact sort-based fallback for float images whose distinct values overflow the global table.
// See NOTES-gpu-opt.md.
#include <cub/block/block_scan.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cuda/std/functional>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>

#include "core/gpu.hpp"
#include "core/nvtx.hpp"
#include "ecc/gpu_opt.cuh"
#include "ecc/gpu_opt_kernels.cuh"
#include "ecc/gpu_opt_readback.hpp"

namespace repix::ecc {
namespace opt {
using namespace detail;
namespace {

// ---- finishing (float) -------------------------------------------------------------------------

// The finishing kernels write the curve's raw material straight into the engine's pinned read-back
// buffer (mapped: a kernel stores to host memory over PCIe) and leave the global accumulator empty
// for the next pass. Until then a pass cost, besides its kernel, a gather kernel, three device-to-
// host copies and a memset (float), or three memsets before and two copies after it (integers):
// each a stream operation of a few microseconds, most of the "fixed" part of a kernel-scope sample
// and of a small image's end to end (NOTES-gpu-opt.md, "Finishing").

// Float: the occupied slots (in insertion order) as (key, VCEC) pairs: the first `spec` into host
// memory after the header [n, overflow flag], the rest into the device arrays `rest_*` (collect()
// copies them when n > spec); each slot cleared. The last block to finish writes the header and
// zeroes the counters (every block has read n by then).
__global__ void finish_hash_kernel(GlobalAcc acc, std::uint32_t spec, std::uint32_t* host_head,
                                   std::uint32_t* host_keys, long long* host_vcec, std::uint32_t* rest_keys,
                                   long long* rest_vcec, std::uint32_t* done, CopyAlong along) {
  const std::uint32_t n = acc.counters[0];
  for (std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const std::uint32_t slot = acc.list[i];
    const std::uint32_t key = acc.keys[slot];
    const long long v = static_cast<long long>(acc.vcec[slot]);
    if (i < spec) {
      host_keys[i] = key;
      host_vcec[i] = v;
    } else {
      rest_keys[i] = key;
      rest_vcec[i] = v;
    }
    acc.keys[slot] = kEmptyKey;
    acc.vcec[slot] = 0;
  }
  __syncthreads();  // this block's threads have all read n
  if (threadIdx.x != 0) return;
  __threadfence();
  if (atomicAdd(done, 1u) != gridDim.x - 1) return;
  host_head[0] = n;
  host_head[1] = acc.counters[1];
  if (along.from) *along.to = *along.from;
  acc.counters[0] = 0;
  acc.counters[1] = 0;
  *done = 0;
}

// Integers: the values that occur, with their VCEC, a segment of kSegmentBins values a block (block
// s writes its count word to host_counts[s] and its entries from index s * kSegmentBins, in the
// sparse or the dense form of gpu_opt_readback.hpp); bins and occurrence cleared. A value that does
// not occur has VCEC 0 (a voxel's change goes to its own value), so the host's running sum over
// the entries is the curve. uint16 images of few values write a few hundred sparse entries where
// the whole bins were 520 KiB, and of many values (kDenseFrom a segment) a bitmap and int32 VCECs,
// a third of the sparse bytes. A pass of the block handles 256 consecutive values, one a thread,
// so that a warp's stores to host memory are consecutive: with 4 consecutive values a thread (4
// strided stores a warp), a 4096^2 uint16 image of 65536 values took 0.47 ms a kernel-scope sample
// against 0.21 ms with the bins copied (H100); this way 0.219 against 0.215 (same call;
// NOTES-gpu-opt.md, "Finishing"). `dense_from`: the least occurring values of a dense segment
// (OptTuning::dense_from, --dense-from; kDenseFrom by default); `dense_limit`: the largest |VCEC|
// the dense form takes (INT32_MAX; the tests lower it, set_dense_limit_for_tests).
constexpr int kFinishThreads = 256;  // kSegmentBins: gpu_opt_readback.hpp
constexpr int kFinishPasses = kSegmentBins / kFinishThreads;
__global__ void __launch_bounds__(kFinishThreads) finish_bins_kernel(GlobalAcc acc, int nbins, bool bits,
                                                                     int dense_from, long long dense_limit,
                                                                     std::uint32_t* host_counts,
                                                                     std::uint32_t* host_values,
                                                                     long long* host_vcec, CopyAlong along) {
  using Scan = cub::BlockScan<int, kFinishThreads>;
  __shared__ typename Scan::TempStorage scan;
  const int first = blockIdx.x * kSegmentBins;
  const std::size_t out = static_cast<std::size_t>(first);
  // This thread's value of a pass, counted from the segment's first value.
  const auto in_segment = [](int pass) { return pass * kFinishThreads + static_cast<int>(threadIdx.x); };
  bool occurs[kFinishPasses];
  long long v[kFinishPasses];
  int count = 0, fits = 1;
#pragma unroll
  for (int pass = 0; pass < kFinishPasses; ++pass) {
    const int i = first + in_segment(pass);
    occurs[pass] = i < nbins && (bits ? ((acc.present[i >> 5] >> (i & 31)) & 1u) != 0 : acc.present[i] != 0);
    v[pass] = i < nbins ? static_cast<long long>(acc.vcec[i]) : 0;
    fits &= v[pass] >= -dense_limit && v[pass] <= dense_limit;
    count += __syncthreads_count(occurs[pass]);
  }
  const bool dense = __syncthreads_and(fits) != 0 && count >= dense_from;
  if (dense) {
    auto* v32 = reinterpret_cast<std::int32_t*>(host_vcec + out);
#pragma unroll
    for (int pass = 0; pass < kFinishPasses; ++pass) {
      const int j = in_segment(pass);
      const unsigned word = __ballot_sync(0xFFFFFFFFu, occurs[pass]);
      if ((threadIdx.x & 31) == 0) host_values[out + j / 32] = word;
      v32[j] = static_cast<std::int32_t>(v[pass]);
    }
  } else {
    int written = 0;  // this segment's entries so far (the same in every thread)
#pragma unroll
    for (int pass = 0; pass < kFinishPasses; ++pass) {
      int at = 0, total = 0;
      Scan(scan).ExclusiveSum(occurs[pass] ? 1 : 0, at, total);
      if (occurs[pass]) {
        host_values[out + written + at] = static_cast<std::uint32_t>(first + in_segment(pass));
        host_vcec[out + written + at] = v[pass];
      }
      written += total;
      __syncthreads();  // the scan's storage is reused by the next pass
    }
  }
#pragma unroll
  for (int pass = 0; pass < kFinishPasses; ++pass) {
    const int i = first + in_segment(pass);
    if (i < nbins) acc.vcec[i] = 0;
  }
  // Occurrence, cleared after every thread has read it (a uint16 word is 32 values of one warp's
  // pass; the __syncthreads_count above are the barrier).
  if (bits) {
    const int word = (first >> 5) + static_cast<int>(threadIdx.x);
    if (threadIdx.x < kSegmentBins / 32 && word < (nbins + 31) / 32) acc.present[word] = 0;
  } else {
    for (int i = first + static_cast<int>(threadIdx.x); i < min(nbins, first + kSegmentBins); i += kFinishThreads)
      acc.present[i] = 0;
  }
  if (threadIdx.x == 0) host_counts[blockIdx.x] = static_cast<std::uint32_t>(count) | (dense ? kDenseSegment : 0u);
  if (along.from && blockIdx.x == 0 && threadIdx.x == 0) *along.to = *along.from;
}

// Smallest (linear index * 2 + is_inf) of a non-finite value among n floats at linear index
// base..base+n-1: the minimum index wins, and its kind travels in the low bit. A thread issues
// kNonfiniteBatch loads (a grid stride apart, each coalesced across the warp) before it tests any:
// a grid-stride loop of one load a step waited for DRAM once a value, and in the end-to-end path
// this kernel is part of the last chunk's tail (a 4 MiB float32 chunk, 8 values a thread: 6.5-7.1 us
// under Nsight Compute on the H100, 4.6-5.1 us so, same call; NOTES-gpu-opt.md, "The small
// images' tail").
constexpr int kNonfiniteBatch = 8;
__global__ void first_nonfinite_kernel(const float* __restrict__ p, std::int64_t n, std::int64_t base,
                                       unsigned long long* first) {
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i0 = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i0 < n; i0 += stride * kNonfiniteBatch) {
    float v[kNonfiniteBatch];
#pragma unroll
    for (int j = 0; j < kNonfiniteBatch; ++j) v[j] = i0 + j * stride < n ? __ldg(p + i0 + j * stride) : 0.0f;
    unsigned long long found = ~0ull;  // this thread's first in index order: the lowest j
#pragma unroll
    for (int j = kNonfiniteBatch - 1; j >= 0; --j)
      if (!isfinite(v[j])) found = static_cast<unsigned long long>(base + i0 + j * stride) * 2u + (isinf(v[j]) ? 1u : 0u);
    if (found != ~0ull) atomicMin(first, found);
  }
}

__global__ void touch_kernel(unsigned char* p) { *p = 0; }

// gpu-opt-bins16: the blocks' 16-bit counters (rows of GlobalAcc::block_bins, one a block of the
// launch) summed into the global bins. Thread w reads word w of the rows blockIdx.y, blockIdx.y +
// gridDim.y, ... (coalesced across the threads), eight rows' loads in flight, and adds its two
// halves' sums. Nsight Compute at 8192^2 (132 rows, 17 MB; H200): 16.9 us (latency bound, 34 warps
// a issue waiting on the long scoreboard); 17.4 us without the unrolling, and 19.1 us with a
// quarter of the threads reading 16 bytes each (11 % occupancy).
// `gate` (gpu-opt-sampled16, Geom::gate): only where the sample chose the 16-bit bins; nullptr: always.
constexpr int kBlockBinsWords = 32768;
__global__ void reduce_block_bins_kernel(GlobalAcc acc, int rows, const std::uint32_t* gate) {
  const int w = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (w >= kBlockBinsWords || (gate != nullptr && *gate != sampled16::kBins16)) return;
  long long lo = 0, hi = 0;
#pragma unroll 8
  for (int r = static_cast<int>(blockIdx.y); r < rows; r += static_cast<int>(gridDim.y)) {
    const std::uint32_t x = __ldcg(acc.block_bins + static_cast<std::size_t>(r) * kBlockBinsWords + w);
    lo += bins16::low_half(x);
    hi += bins16::high_half(x);
  }
  if (lo != 0) atomicAdd(&acc.vcec[w], static_cast<unsigned long long>(lo));
  if (hi != 0) atomicAdd(&acc.vcec[w + kBlockBinsWords], static_cast<unsigned long long>(hi));
}

// gpu-opt-sampled16: the choice of gpu_opt_core.cuh's sampled16 for the n values at p, written to
// *gate for the two accumulating kernels and the counters' reduction behind it. One block: each warp
// reads kSampleRuns runs, a lane 4 consecutive values of each (one 8-byte load where p is 8-byte
// aligned), all loads in flight before the set is marked. Nsight Compute (H200): 3.7-4.5 us, where
// 256 threads with 32 two-byte loads and 8 64-bit modulos each took 7.3 us; NOTES-gpu-opt.md.
constexpr int kSampleThreads = 1024;
constexpr int kSampleRuns = sampled16::kSegments / (kSampleThreads / 32);
constexpr int kSampleLaneValues = sampled16::kSegmentValues / 32;
static_assert(kSampleRuns * (kSampleThreads / 32) == sampled16::kSegments && kSampleLaneValues * 32 == sampled16::kSegmentValues);
__global__ void __launch_bounds__(kSampleThreads)
    sample_distinct16_kernel(const std::uint16_t* __restrict__ p, std::int64_t n, std::uint32_t* gate) {
  __shared__ std::uint32_t seen[65536 / 32];
  __shared__ unsigned distinct;
  for (int i = static_cast<int>(threadIdx.x); i < 65536 / 32; i += kSampleThreads) seen[i] = 0;
  if (threadIdx.x == 0) distinct = 0;
  __syncthreads();
  const int lane = static_cast<int>(threadIdx.x & 31u), warp = static_cast<int>(threadIdx.x >> 5);
  static_assert(kSampleLaneValues == 4, "a lane's values are one 8-byte load");
  const bool aligned = (reinterpret_cast<std::uintptr_t>(p) & 7u) == 0;  // block-uniform
  std::uint16_t v[kSampleRuns][kSampleLaneValues];
#pragma unroll
  for (int k = 0; k < kSampleRuns; ++k) {
    const std::int64_t at = sampled16::segment_start(warp * kSampleRuns + k, n) + lane * kSampleLaneValues;
    if (aligned) {
      const uint2 w = __ldg(reinterpret_cast<const uint2*>(p + at));
      v[k][0] = static_cast<std::uint16_t>(w.x);
      v[k][1] = static_cast<std::uint16_t>(w.x >> 16);
      v[k][2] = static_cast<std::uint16_t>(w.y);
      v[k][3] = static_cast<std::uint16_t>(w.y >> 16);
    } else {
#pragma unroll
      for (int i = 0; i < kSampleLaneValues; ++i) v[k][i] = __ldg(p + at + i);
    }
  }
#pragma unroll
  for (int k = 0; k < kSampleRuns; ++k)
#pragma unroll
    for (int i = 0; i < kSampleLaneValues; ++i) atomicOr(&seen[v[k][i] >> 5], 1u << (v[k][i] & 31u));
  __syncthreads();
  unsigned c = 0;
  for (int i = static_cast<int>(threadIdx.x); i < 65536 / 32; i += kSampleThreads) c += __popc(seen[i]);
  c = __reduce_add_sync(0xFFFFFFFFu, c);
  if (lane == 0) atomicAdd(&distinct, c);
  __syncthreads();
  if (threadIdx.x == 0) *gate = sampled16::choice(distinct);
}

__global__ void fill_keys_kernel(std::uint32_t* keys, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    keys[i] = kEmptyKey;
}

// ---- launch plumbing -----------------------------------------------------------------------------

KernelFn pick_kernel(DType dt, int dims, bool vec, bool emit, int mode, const OptTuning& t) {
  return dims == 2 ? pick_kernel_2d(dt, vec, emit, mode, t.blocks_2d) : pick_kernel_3d(dt, vec, emit, mode, t.blocks_3d);
}

std::size_t next_pow2(std::size_t v) {
  std::size_t p = 1;
  while (p < v) p <<= 1;
  return p;
}
int log2_exact(std::size_t p) {
  int l = 0;
  while ((std::size_t(1) << l) < p) ++l;
  return l;
}

// The accumulating kernel's blocks: the 2D uint16 kernels of gpu-opt-bins16 and gpu-opt-hash-bins16
// have blocks of 24 warps with their counters in dynamic shared memory (block_warps,
// kDynamicBlockAcc); every other kernel blocks of kThreads and static shared memory only.
// bins16_smem: the dynamic shared memory of the accumulating kernel for this type, dims and mode
// when it has the 16-bit bins (the kind pick_mode picks, in its precedence), else 0.
using Bins16Acc = BlockAccOf<std::uint16_t, BlockKind::bins16>;
using HashBins16Acc = BlockAccOf<std::uint16_t, BlockKind::hash_bins16>;
static_assert(Bins16Acc::kCounterWords == kBlockBinsWords);
std::size_t bins16_smem(DType dt, int dims, int mode) {
  if (dt != DType::u16 || dims != 2 || (mode & kModeCluster16) != 0) return 0;
  if (mode & kModeHashBins16) return sizeof(HashBins16Acc);
  return (mode & kModeBins16) ? sizeof(Bins16Acc) : 0;
}

// A launch of `grid` blocks of kThreads in clusters of `cluster` blocks, its attribute in `a[0]`
// (which must outlive the config; cudaOccupancyMaxActiveClusters reads it from the config too).
cudaLaunchConfig_t cluster_config(std::int64_t grid, cudaStream_t s, int cluster, cudaLaunchAttribute* a) {
  a[0].id = cudaLaunchAttributeClusterDimension;
  a[0].val.clusterDim.x = static_cast<unsigned>(cluster);
  a[0].val.clusterDim.y = 1;
  a[0].val.clusterDim.z = 1;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(static_cast<unsigned>(grid));
  cfg.blockDim = dim3(kThreads);
  cfg.dynamicSmemBytes = 0;
  cfg.stream = s;
  cfg.attrs = a;
  cfg.numAttrs = 1;
  return cfg;
}

constexpr std::size_t kMaxGlobalSlots = std::size_t(1) << 21;
constexpr std::int64_t kFallbackVoxels = std::int64_t(1) << 23;

std::size_t auto_global_slots(const Shape& sh, bool /*streaming*/) {
  // An image of n voxels has at most n distinct values (streamed or not): 2n slots never
  // overflow; larger images get 2^21 slots and may take the fallback.
  return std::min(kMaxGlobalSlots, next_pow2(std::max<std::size_t>(1024, 2 * static_cast<std::size_t>(sh.size()))));
}

std::int64_t fallback_voxels(const Shape& sh) {
  return std::min<std::int64_t>(sh.size(), std::max<std::int64_t>(kFallbackVoxels, slab_elems(sh)));
}

template <class T>
void* raw(DeviceBuffer<T>& b) { return static_cast<void*>(b.get()); }

// (value, VCEC) pairs read back by finish_queued() before the count of distinct values is known:
// 48 KiB, a 128^3 GRF image's ~1000 values with room to spare.
constexpr std::size_t kQueuedPairs = 4096;

}  // namespace

struct Engine::Impl {
  DType dtype = DType::f32;
  Shape shape;
  int dims = 2;
  bool streaming = false;
  int mode = kModeOpt;     // set_mode: the ablation step's kernels
  OptTuning tuning;        // setup's: the work items' split, the kernels' budgets, the read-back's form
  bool ready = false;
  std::size_t cap_override = 0;
  int sms = 1;
  int blocks_per_sm = 1;   // accumulate kernel
  int emit_blocks_per_sm = 1;
  int cluster = 1;         // accumulate kernel's blocks a cluster (cluster_blocks)
  bool bins16 = false;     // the accumulate kernel has the 16-bit shared bins (bins16_smem)
  int block_threads = kThreads;   // accumulate kernel
  std::size_t dynamic_smem = 0;   // accumulate kernel
  // gpu-opt-sampled16 on this image (2D uint16 of sampled16::kFrom voxels or more): a pass launches
  // the sample kernel, then `kern` (gpu-opt's) and the 16-bit bins' kernel (gpu-opt-bins16's), each
  // working only where the sample chose it (Geom::gate).
  bool sampled = false;
  int bins_blocks_per_sm = 1;  // the 16-bit bins' kernel when sampled
  // The kernel with the 16-bit bins (the accumulating one, or the second of a sampled pass): its mode
  // and dynamic shared memory (0: none).
  int bins_mode = kModeOpt;
  std::size_t bins_smem = 0;
  DeviceBuffer<std::uint32_t> block_bins;  // the 16-bit shared bins: a row of counter words a block
  KernelFn kern = nullptr, emit_kern = nullptr;

  // Global accumulator.
  std::size_t slots = 0;   // float hash capacity
  // counters: [0] list length, [1] overflow flag (GlobalAcc), then kQueueLanes pairs of dynamic-
  // schedule counters (Geom::queue), then gpu-opt-sampled16's choice (written by its sample kernel
  // before each pass) and finish_hash_kernel's count of finished blocks. Each
  // kernel leaves its own at 0 for the next pass; reset() zeroes them all where a pass was cut.
  static constexpr int kQueueLanes = 16;
  static constexpr int kCounters = 2 + 2 * kQueueLanes + 2;
  std::uint32_t* finished_blocks() const { return counters.get() + kCounters - 1; }
  std::uint32_t* gate() const { return counters.get() + kCounters - 2; }  // gpu-opt-sampled16's choice
  DeviceBuffer<std::uint32_t> keys, present, list, counters;
  // A lane's dynamic-schedule counters; nullptr (the static schedule) for lanes beyond them.
  std::uint32_t* queue_for(int lane) const {
    return lane >= 0 && lane < kQueueLanes ? counters.get() + 2 + 2 * lane : nullptr;
  }
  DeviceBuffer<unsigned long long> vcec;
  DeviceBuffer<std::uint32_t> out_keys;
  DeviceBuffer<long long> out_vcec;
  // True from an accumulate() to the finish_queued() whose kernel empties the accumulator again;
  // reset() clears it only then (a pass that threw before its finish).
  bool dirty = false;

  // finish_queued() / collect(): the pinned read-back, written by the finishing kernels through
  // its device address `queued_dev`: the counters and the first queued_pairs pairs (float), or
  // the occurring values (integers, BinsLayout).
  HostBuffer queued;
  unsigned char* queued_dev = nullptr;
  std::size_t queued_pairs = kQueuedPairs;  // grows to what an image of the batch needed
  bool queued_pending = false;
  double collect_work_us = 0;  // collect_work_us()

  // Fallback.
  std::int64_t fb_cap = 0;
  DeviceBuffer<std::uint32_t> fb_k0, fb_k1;
  DeviceBuffer<int> fb_v0, fb_v1;
  DeviceBuffer<unsigned char> fb_temp;
  DeviceBuffer<long long> fb_nruns;
  std::size_t fb_temp_bytes = 0;
  std::vector<std::uint32_t> fb_keys;   // merged on the host, ascending ordered keys
  std::vector<std::int64_t> fb_vcec;

  std::size_t nbins() const { return dtype == DType::u8 ? 256 : 65536; }
  // Occurrence: a word a value for uint8, a bit a value for uint16 (GlobalAcc::present).
  bool present_bits() const { return dtype != DType::u8; }
  std::size_t present_words() const { return present_bits() ? nbins() / 32 : nbins(); }
  bool hashed_global() const { return dtype == DType::f32; }

  GlobalAcc acc() const {
    GlobalAcc g;
    g.keys = keys.get();
    g.vcec = vcec.get();
    g.present = present.get();
    if (hashed_global()) {
      g.list = list.get();
    } else {
      g.block_bins = block_bins.get();
    }
    g.counters = counters.get();
    g.log2cap = hashed_global() ? log2_exact(slots) : 1;
    return g;
  }

  void alloc_table() {
    if (hashed_global()) {
      slots = cap_override ? std::max<std::size_t>(2, next_pow2(cap_override)) : auto_global_slots(shape, streaming);
      keys.allocate(slots);
      vcec.allocate(slots);
      list.allocate(slots);
      out_keys.allocate(slots);
      out_vcec.allocate(slots);
      fill_keys_kernel<<<256, 256>>>(keys.get(), slots);
      REPIX_CUDA_LAUNCH();
      REPIX_CUDA(cudaMemset(vcec.get(), 0, vcec.bytes()));
      REPIX_CUDA(cudaMemset(counters.get(), 0, counters.bytes()));
      REPIX_CUDA(cudaDeviceSynchronize());
    }
  }

  // Launch geometry for slabs [s0, s1) (split_items); `queue`: the lane's dynamic-schedule
  // counters, or nullptr for the static schedule.
  Geom geom(std::int64_t b0, std::int64_t s0, std::int64_t s1, int bps, std::uint32_t* queue,
            std::int64_t& grid, int block_voxels_log2 = SplitParams{}.block_voxels_log2, int block_warps = kWarps) const {
    SplitParams p;
    p.block_voxels_log2 = block_voxels_log2;
    p.block_warps = block_warps;
    p.dims = dims;
    p.nx = shape.nx;
    p.ny = shape.ny;
    p.nz = shape.nz;
    p.slots_b = static_cast<std::int64_t>(bps) * sms;
    p.floor = dims == 2 ? tuning.min_chunk_2d : tuning.min_chunk_3d;
    p.head_pct = dims == 2 ? tuning.head_pct_2d : tuning.head_pct_3d;
    p.items_per_slot = dims == 2 ? tuning.items_2d : tuning.items_3d;
    p.cap_for_tests = detail::schedule_cap_for_tests();
    return split_items(p, b0, s0, s1, queue, grid);
  }
  // The accumulating kernel's launch geometry: a cluster's blocks share their bins, so a block
  // takes fewer voxels, and the grid is whole clusters (blocks beyond the items take none).
  Geom accumulate_geom(std::int64_t b0, std::int64_t s0, std::int64_t s1, std::uint32_t* queue,
                       std::int64_t& grid) const {
    Geom g = geom(b0, s0, s1, blocks_per_sm, queue, grid,
                  cluster > 1 ? kClusterVoxelsLog2 : SplitParams{}.block_voxels_log2, block_threads / 32);
    grid = (grid + cluster - 1) / cluster * cluster;
    return g;
  }
  // The 16-bit bins' kernel's launch geometry when sampled.
  Geom bins_geom(std::int64_t b0, std::int64_t s0, std::int64_t s1, std::uint32_t* queue, std::int64_t& grid) const {
    return geom(b0, s0, s1, bins_blocks_per_sm, queue, grid, SplitParams{}.block_voxels_log2, kBins16Warps);
  }

  // Float: the pairs a read-back holds (queued_pairs changes only in collect(), after its read).
  std::size_t queued_spec() const { return std::min(queued_pairs, slots); }
  // The read-back buffer's bytes for the next finish_queued(): the header and queued_spec() pairs
  // (float), or BinsLayout (integers).
  std::size_t readback_bytes() const {
    if (!hashed_global()) return BinsLayout(nbins()).bytes;
    return 2 * sizeof(std::uint32_t) + queued_spec() * (sizeof(std::uint32_t) + sizeof(long long));
  }
  // Allocated by setup() (and grown by the finish_queued() after a collect() that asked for more,
  // when no finishing kernel writes the old one), not inside a pass. Made by the first pass, it
  // cost Table 2's fresh plan 0.62-0.93 ms in that pass (ECC exec at N = 1, against 0.071 ms
  // before the read-back existed; H100): the allocation, its device address or the GPU's
  // first store to it, not told apart. All three are here now (a one-thread kernel stores, in `s`'s
  // order, before any finishing kernel): ECC exec at N = 1 0.045 ms (NOTES-gpu-opt.md, "Item
  // starts").
  void ensure_readback(std::size_t bytes, cudaStream_t s) {
    if (queued.bytes() >= bytes) return;
    queued = HostBuffer(bytes, true);
    if (!queued.pinned()) throw Error("ecc gpu-opt: cannot allocate " + std::to_string(bytes) + " bytes of pinned host memory");
    void* dev = nullptr;
    REPIX_CUDA(cudaHostGetDevicePointer(&dev, queued.data(), 0));
    queued_dev = static_cast<unsigned char*>(dev);
    touch_kernel<<<1, 1, 0, s>>>(queued_dev);
    REPIX_CUDA_LAUNCH();
  }

  bool vec_ok(const void* buf) const {
    return shape.nx % 4 == 0 && (reinterpret_cast<std::uintptr_t>(buf) % 16) == 0;
  }
};

namespace {
struct ScheduleOverride {  // set_schedule_for_tests
  int dynamic = -1;        // -1: the plan's (static for gpu-opt-static)
  std::int64_t cap = 0;    // 0: none
};
ScheduleOverride& schedule_override() {
  static ScheduleOverride o;
  return o;
}
std::int64_t& sampled_from_override() {  // set_sampled_from_for_tests
  static std::int64_t v = 0;
  return v;
}
}  // namespace

namespace detail {
// The largest |VCEC| an integer segment's dense form holds (finish_bins_kernel): int32's, unless a
// test lowered it to make segments of small VCECs take the sparse form.
long long& dense_limit_override() {
  static long long v = 0;
  return v;
}
long long dense_limit() { return dense_limit_override() > 0 ? dense_limit_override() : INT32_MAX; }

// The tuning (OptTuning, per call; the CLI's --min-chunk-2d ... --dense-from):
// - The floor of a work item's slabs (min_chunk_2d / _3d). Small images are the case it decides:
//   at 24 rows a 2048^2 image is 1376 items, one a warp of 172 blocks (IPC 1.0 under Nsight
//   Compute, most SMs at one block), and a 4 MiB chunk of gpu-stream's pipeline 352 items on 44
//   blocks. Smaller floors give more warps and more halo rows (2 an item). 12 rows / 9 planes:
//   under the dynamic schedule they beat 24 / 16 by 4-14 % on GRF 2048^2 and 128^3, uniform
//   1024^2 and uint8 2048^2 and 128^3 (kernel scope) and tied elsewhere; 6 / 6 and 3 / 3 lost on
//   the larger of those images (H100; NOTES-gpu-opt.md, "Dynamic schedule").
// - The dynamic schedule's split (Impl::geom), where the image is large enough that the floors do
//   not decide: the head's share of the slabs in percent (head_pct_2d / _3d, 0 for none) and the
//   tail's items per warp slot (2D) or block slot (3D) (items_2d / _3d). More and smaller items
//   balance better and cost more warm-ups and halo slabs; on GRF data in 2D they also cost
//   locality: a block's table meets more new keys when its warps' items come from all over the
//   image (NOTES-gpu-opt.md, "Dynamic schedule").
// - The kernels' register budgets (blocks_2d / _3d: ecc2d_kernel, ecc3d_kernel) and the least
//   occurring values of a dense integer segment (dense_from: finish_bins_kernel).
bool dynamic_schedule(int mode) {
  const int set = schedule_override().dynamic;
  return set < 0 ? (mode & kModeStaticSchedule) == 0 : set == 1;
}
std::int64_t schedule_cap_for_tests() { return schedule_override().cap; }
}  // namespace detail

void set_schedule_for_tests(int dynamic, std::int64_t cap) {
  if (dynamic < -1 || dynamic > 1 || cap < 0) throw Error("internal: set_schedule_for_tests takes -1..1 and a cap of 0 or more");
  schedule_override() = {dynamic, cap};
}

void set_sampled_from_for_tests(std::int64_t voxels) {
  if (voxels < 0) throw Error("internal: set_sampled_from_for_tests takes 0 (the default) or more voxels");
  sampled_from_override() = voxels;
}

void set_dense_limit_for_tests(long long limit) {
  if (limit < 0 || limit > INT32_MAX) throw Error("internal: set_dense_limit_for_tests takes 0 (the default) .. INT32_MAX");
  detail::dense_limit_override() = limit;
}

static_assert(OptTuning{}.dense_from == static_cast<int>(kDenseFrom) && OptTuning::kMaxDenseFrom == kSegmentBins + 1,
              "OptTuning's dense_from is the read-back's");

void check_tuning(const OptTuning& t) {
  auto in = [](int v, int lo, int hi) { return v >= lo && v <= hi; };
  constexpr int most = OptTuning::kMaxItems;
  if (!in(t.min_chunk_2d, 1, most) || !in(t.min_chunk_3d, 1, most) || !in(t.items_2d, 1, most) ||
      !in(t.items_3d, 1, most) || !in(t.head_pct_2d, 0, 100) || !in(t.head_pct_3d, 0, 100) ||
      !in(t.blocks_2d, 2, 3) || !in(t.blocks_3d, 2, 3) || !in(t.dense_from, 1, OptTuning::kMaxDenseFrom) ||
      !in(t.graph_chunks, 0, OptTuning::kMaxGraphChunks))
    throw Error("internal: ecc gpu-opt tuning out of range (the CLI's ranges: harness/families/ecc/adapter.cpp)");
}

void NonfiniteCheck::reset(cudaStream_t s) {
  REPIX_CUDA(cudaMemsetAsync(first_.get(), 0xFF, sizeof(unsigned long long), s));
}

void NonfiniteCheck::check(const float* d, std::int64_t n, std::int64_t base, cudaStream_t s) {
  static const int sms = [] {  // the grid's size only: any device's count is correct
    int dev = 0, v = 0;
    REPIX_CUDA(cudaGetDevice(&dev));
    REPIX_CUDA(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, dev));
    return v;
  }();
  // One batch a thread where a grid of up to 16 blocks an SM covers n (4 MiB: 512 blocks).
  constexpr std::int64_t kPerBlock = 256 * kNonfiniteBatch;
  const auto blocks = static_cast<unsigned>(std::clamp<std::int64_t>((n + kPerBlock - 1) / kPerBlock, 1, sms * 16));
  first_nonfinite_kernel<<<blocks, 256, 0, s>>>(d, n, base, first_.get());
  REPIX_CUDA_LAUNCH();
}

CopyAlong NonfiniteCheck::readback_along() {
  if (!host_dev_) {
    void* dev = nullptr;
    REPIX_CUDA(cudaHostGetDevicePointer(&dev, host_.data(), 0));
    host_dev_ = static_cast<unsigned long long*>(dev);
  }
  return {first_.get(), host_dev_};
}

void NonfiniteCheck::throw_if_found(const Shape& shape) const {
  const unsigned long long v = *static_cast<const unsigned long long*>(host_.data());
  if (v != ~0ull) throw_nonfinite(shape, static_cast<std::int64_t>(v / 2), (v & 1u) == 0);
}

Engine::Engine() : impl_(new Impl) {}
Engine::~Engine() = default;

void Engine::setup(DType dtype, const Shape& shape, bool streaming, const OptTuning& tuning) {
  Impl& m = *impl_;
  check_tuning(tuning);
  require_gpu();
  m.tuning = tuning;
  m.dtype = dtype;
  m.shape = shape;
  m.dims = shape.ndim == 3 ? 3 : 2;
  m.streaming = streaming;
  m.queued_pairs = kQueuedPairs;
  m.queued_pending = false;
  int dev = 0;
  REPIX_CUDA(cudaGetDevice(&dev));
  REPIX_CUDA(cudaDeviceGetAttribute(&m.sms, cudaDevAttrMultiProcessorCount, dev));
  // Occupancy of the vectorised variant (the scalar one uses the same resources within a few
  // registers); the grid never exceeds what is resident at once.
  m.kern = pick_kernel(dtype, m.dims, true, false, m.mode, m.tuning);
  m.emit_kern = pick_kernel(dtype, m.dims, true, true, kModeOpt, m.tuning);
  m.cluster = cluster_blocks(dtype, m.mode);
  m.dynamic_smem = bins16_smem(dtype, m.dims, m.mode);
  m.bins16 = m.dynamic_smem != 0;
  m.block_threads = m.bins16 ? kBins16Warps * 32 : kThreads;
  const std::int64_t sampled_from = sampled_from_override() > 0 ? sampled_from_override() : sampled16::kFrom;
  m.sampled = dtype == DType::u16 && m.dims == 2 && (m.mode & kModeSampled16) != 0 && shape.size() >= sampled_from;
  m.bins_mode = m.sampled ? kModeBins16 : m.mode;
  m.bins_smem = bins16_smem(dtype, m.dims, m.bins_mode);
  if (m.bins_smem != 0) {
    int optin = 0;
    REPIX_CUDA(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    if (static_cast<std::size_t>(optin) < m.bins_smem)
      throw Error("ecc: this step's uint16 kernel needs " + std::to_string(m.bins_smem / 1024) +
                  " KiB of shared memory a block, this GPU gives " + std::to_string(optin / 1024) + " KiB; run gpu-opt instead");
    for (bool vec : {true, false})
      REPIX_CUDA(cudaFuncSetAttribute(reinterpret_cast<const void*>(pick_kernel(dtype, m.dims, vec, false, m.bins_mode, m.tuning)),
                                      cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(m.bins_smem)));
  }
  if (m.sampled) {
    REPIX_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &m.bins_blocks_per_sm, reinterpret_cast<const void*>(pick_kernel(dtype, m.dims, true, false, m.bins_mode, m.tuning)),
        kBins16Warps * 32, m.bins_smem));
    m.bins_blocks_per_sm = std::max(1, m.bins_blocks_per_sm);
  }
  if (m.cluster > 1) {
    if (!clusters_available())
      throw Error("ecc: this step's uint16 kernels need thread block clusters (compute capability 9.0 or newer); "
                  "run gpu-opt instead");
    // The grid: the clusters resident at once, in whole blocks an SM.
    cudaLaunchAttribute attr[1];
    cudaLaunchConfig_t cfg = cluster_config(m.cluster * m.sms, nullptr, m.cluster, attr);
    int clusters = 0;
    REPIX_CUDA(cudaOccupancyMaxActiveClusters(&clusters, reinterpret_cast<const void*>(m.kern), &cfg));
    m.blocks_per_sm = clusters * m.cluster / m.sms;
  } else {
    REPIX_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&m.blocks_per_sm, reinterpret_cast<const void*>(m.kern),
                                                             m.block_threads, m.dynamic_smem));
  }
  REPIX_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&m.emit_blocks_per_sm, reinterpret_cast<const void*>(m.emit_kern), kThreads, 0));
  m.blocks_per_sm = std::max(1, m.blocks_per_sm);
  m.emit_blocks_per_sm = std::max(1, m.emit_blocks_per_sm);

  m.counters.allocate(Impl::kCounters);
  REPIX_CUDA(cudaMemset(m.counters.get(), 0, m.counters.bytes()));
  m.dirty = false;
  m.block_bins.reset();
  if (m.bins16 || m.sampled) {  // a row a block of a pass over the whole image (accumulate() grows it for more)
    std::int64_t grid = 1;
    const std::int64_t slabs = m.dims == 3 ? shape.nz : shape.ny;
    if (m.sampled) {
      m.bins_geom(0, 0, slabs, m.queue_for(0), grid);
    } else {
      m.accumulate_geom(0, 0, slabs, m.queue_for(0), grid);
    }
    m.block_bins.allocate(static_cast<std::size_t>(grid) * kBlockBinsWords);
  }
  if (m.hashed_global()) {
    m.present.reset();
    m.alloc_table();
    m.fb_cap = fallback_voxels(shape);
    m.fb_k0.allocate(m.fb_cap);
    m.fb_k1.allocate(m.fb_cap);
    m.fb_v0.allocate(m.fb_cap);
    m.fb_v1.allocate(m.fb_cap);
    m.fb_nruns.allocate(1);
    cub::DoubleBuffer<std::uint32_t> dk(m.fb_k0.get(), m.fb_k1.get());
    cub::DoubleBuffer<int> dv(m.fb_v0.get(), m.fb_v1.get());
    std::size_t sort_bytes = 0, reduce_bytes = 0;
    REPIX_CUDA(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, dk, dv, m.fb_cap));
    REPIX_CUDA(cub::DeviceReduce::ReduceByKey(nullptr, reduce_bytes, m.fb_k0.get(), m.fb_k1.get(),
                                              m.fb_v0.get(), m.fb_v1.get(), m.fb_nruns.get(),
                                              ::cuda::std::plus<int>(), m.fb_cap));
    m.fb_temp_bytes = std::max(sort_bytes, reduce_bytes);
    m.fb_temp.allocate(std::max<std::size_t>(m.fb_temp_bytes, 16));
  } else {
    m.keys.reset();
    m.list.reset();
    m.vcec.allocate(m.nbins());
    m.present.allocate(m.present_words());
    REPIX_CUDA(cudaMemset(m.vcec.get(), 0, m.vcec.bytes()));
    REPIX_CUDA(cudaMemset(m.present.get(), 0, m.present.bytes()));
  }
  m.ensure_readback(m.readback_bytes(), nullptr);
  // The memsets and the kernel above ran on the legacy default stream, which the plan's non-blocking streams
  // do not wait for (cudaMemset returns before it is done).
  REPIX_CUDA(cudaDeviceSynchronize());
  m.ready = true;
}

void Engine::set_mode(int mode) { impl_->mode = mode; }

int cluster_blocks(DType dtype, int mode) {
  return dtype == DType::u16 && (mode & kModeCluster16) ? kClusterBlocks : 1;
}

bool clusters_available() {
  if (!gpu_available()) return false;
  int dev = 0, ok = 0;
  REPIX_CUDA(cudaGetDevice(&dev));
  REPIX_CUDA(cudaDeviceGetAttribute(&ok, cudaDevAttrClusterLaunch, dev));
  return ok != 0;
}

void Engine::set_global_capacity(std::size_t slots) {
  impl_->cap_override = slots;
  if (impl_->ready) impl_->alloc_table();
}

void Engine::reset(cudaStream_t s) {
  Impl& m = *impl_;
  if (!m.dirty) return;  // the last pass's finishing kernel left it empty
  REPIX_CUDA(cudaMemsetAsync(m.counters.get(), 0, m.counters.bytes(), s));
  if (m.hashed_global()) {
    fill_keys_kernel<<<256, 256, 0, s>>>(m.keys.get(), m.slots);
    REPIX_CUDA_LAUNCH();
  } else {
    REPIX_CUDA(cudaMemsetAsync(m.present.get(), 0, m.present.bytes(), s));
  }
  REPIX_CUDA(cudaMemsetAsync(m.vcec.get(), 0, m.vcec.bytes(), s));
  m.dirty = false;
}

// `cluster` blocks a cluster (1: none; the grid a multiple of it); blocks of `threads` with
// `dynamic_smem` bytes of dynamic shared memory (clusters: kThreads and none).
static void launch(KernelFn k, std::int64_t grid, cudaStream_t s, const void* buf, const Geom& g,
                   const GlobalAcc& acc, const EmitOut& out, int cluster = 1, int threads = kThreads,
                   std::size_t dynamic_smem = 0) {
  void* args[] = {const_cast<void**>(&buf), const_cast<Geom*>(&g), const_cast<GlobalAcc*>(&acc),
                  const_cast<EmitOut*>(&out)};
  if (cluster > 1) {
    cudaLaunchAttribute attr[1];
    cudaLaunchConfig_t cfg = cluster_config(grid, s, cluster, attr);
    REPIX_CUDA(cudaLaunchKernelExC(&cfg, reinterpret_cast<const void*>(k), args));
    return;
  }
  REPIX_CUDA(cudaLaunchKernel(reinterpret_cast<const void*>(k), dim3(static_cast<unsigned>(grid)),
                              dim3(static_cast<unsigned>(threads)), args, dynamic_smem, s));
}

void Engine::accumulate(const void* buf, std::int64_t b0, std::int64_t s0, std::int64_t s1,
                        cudaStream_t s, int lane) {
  Impl& m = *impl_;
  if (s1 <= s0) return;
  std::int64_t grid = 1;
  std::uint32_t* queue = detail::dynamic_schedule(m.mode) ? m.queue_for(lane) : nullptr;
  const Geom g = m.accumulate_geom(b0, s0, s1, queue, grid);
  const KernelFn k = pick_kernel(m.dtype, m.dims, m.vec_ok(buf), false, m.mode, m.tuning);
  m.dirty = true;
  const std::int64_t values = (s1 - s0) * m.shape.nx;
  const bool sample = m.sampled && values >= sampled16::kSegmentValues;
  if (!m.bins16 && !sample) {
    launch(k, grid, s, buf, g, m.acc(), EmitOut{}, m.cluster);
    return;
  }
  // One row of counters a block: launches on several lanes at once (gpu-stream) would share the
  // rows, and only OptPlan runs these steps (one launch a pass).
  if (lane != 0) throw Error("internal: ecc's 16-bit shared bins accumulate on lane 0 only");
  // The kernel with the 16-bit bins over `bg` (`bins_grid` blocks), then the sum of its blocks' rows.
  auto bins_and_reduction = [&](const Geom& bg, std::int64_t bins_grid) {
    m.block_bins.ensure(static_cast<std::size_t>(bins_grid) * kBlockBinsWords);
    launch(pick_kernel(m.dtype, m.dims, m.vec_ok(buf), false, m.bins_mode, m.tuning), bins_grid, s, buf, bg, m.acc(),
           EmitOut{}, 1, kBins16Warps * 32, m.bins_smem);
    constexpr int kReduceThreads = 256, kRowGroups = 4;
    reduce_block_bins_kernel<<<dim3(kBlockBinsWords / kReduceThreads, kRowGroups), kReduceThreads, 0, s>>>(
        m.acc(), static_cast<int>(bins_grid), bg.gate);
    REPIX_CUDA_LAUNCH();
  };
  if (!sample) {
    bins_and_reduction(g, grid);
    return;
  }
  // gpu-opt-sampled16: the sample's choice in *gate, then both kernels in stream order; the blocks of
  // the one not chosen return before touching the queue or the accumulator.
  std::uint32_t* gate = m.gate();
  sample_distinct16_kernel<<<1, kSampleThreads, 0, s>>>(static_cast<const std::uint16_t*>(buf) + (s0 - b0) * m.shape.nx,
                                                        values, gate);
  REPIX_CUDA_LAUNCH();
  Geom gh = g;
  gh.gate = gate;
  gh.gate_open = sampled16::kHash;
  launch(k, grid, s, buf, gh, m.acc(), EmitOut{});
  std::int64_t bins_grid = 1;
  Geom gb = m.bins_geom(b0, s0, s1, queue, bins_grid);
  gb.gate = gate;
  gb.gate_open = sampled16::kBins16;
  bins_and_reduction(gb, bins_grid);
}

void Engine::finish_queued(cudaStream_t s, CopyAlong along) {
  Impl& m = *impl_;
  if (m.queued_pending) throw Error("internal: ecc gpu-opt finish_queued() twice without collect()");
  m.ensure_readback(m.readback_bytes(), s);  // grows only after a collect() asked for more pairs
  if (m.hashed_global()) {
    // Counters, then `spec` keys, then `spec` VCECs (8-aligned: spec is even).
    const std::size_t spec = m.queued_spec();
    auto* head = reinterpret_cast<std::uint32_t*>(m.queued_dev);
    auto* keys = head + 2;
    auto* vcec = reinterpret_cast<long long*>(m.queued_dev + 8 + spec * sizeof(std::uint32_t));
    finish_hash_kernel<<<std::max(1, m.sms * 2), 256, 0, s>>>(m.acc(), static_cast<std::uint32_t>(spec), head,
                                                               keys, vcec, m.out_keys.get(), m.out_vcec.get(),
                                                               m.finished_blocks(), along);
  } else {
    const BinsLayout lay(m.nbins());
    finish_bins_kernel<<<static_cast<unsigned>(lay.segments), kFinishThreads, 0, s>>>(
        m.acc(), static_cast<int>(m.nbins()), m.present_bits(), m.tuning.dense_from, dense_limit(),
        reinterpret_cast<std::uint32_t*>(m.queued_dev),
        reinterpret_cast<std::uint32_t*>(m.queued_dev + lay.values_at),
        reinterpret_cast<long long*>(m.queued_dev + lay.vcec_at), along);
  }
  REPIX_CUDA_LAUNCH();
  m.dirty = false;  // in stream order, the kernel above empties the accumulator
  m.queued_pending = true;
}

void Engine::drop_queued() { impl_->queued_pending = false; }

void Engine::prepare_readback(cudaStream_t s) { impl_->ensure_readback(impl_->readback_bytes(), s); }

std::size_t Engine::readback_bytes() const { return impl_->readback_bytes(); }

void Engine::finish_replayed() {
  Impl& m = *impl_;
  if (m.queued_pending) throw Error("internal: ecc gpu-opt finish replayed twice without collect()");
  m.dirty = false;  // the replayed finishing kernel empties the accumulator, as finish_queued()'s
  m.queued_pending = true;
}

bool Engine::collect(cudaStream_t s, Curve& out) {
  Impl& m = *impl_;
  if (!m.queued_pending) throw Error("internal: ecc gpu-opt collect() without finish_queued()");
  m.queued_pending = false;
  m.collect_work_us = 0;  // an overflowed table's collect() makes no curve
  REPIX_CUDA(cudaStreamSynchronize(s));
  const auto t0 = std::chrono::steady_clock::now();
  auto made = [&] {
    m.collect_work_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    return true;
  };
  const auto* base = static_cast<const unsigned char*>(m.queued.data());
  if (!m.hashed_global()) {
    out = curve_from_segments(base, BinsLayout(m.nbins()));
    return made();
  }
  const auto* counters = reinterpret_cast<const std::uint32_t*>(base);
  if (counters[1] != 0) return false;
  const std::size_t n = counters[0], spec = m.queued_spec();
  const auto* keys = reinterpret_cast<const std::uint32_t*>(base + 8);
  const auto* vcec = reinterpret_cast<const long long*>(base + 8 + spec * sizeof(std::uint32_t));
  if (n <= spec) {
    out = curve_from_pairs(keys, vcec, n);
    return made();
  }
  // More distinct values than were read back: the rest from the device arrays (untouched
  // until the next pass), and later images read back this many up front.
  std::vector<std::uint32_t> k(keys, keys + spec);
  std::vector<long long> v(vcec, vcec + spec);
  k.resize(n);
  v.resize(n);
  REPIX_CUDA(cudaMemcpyAsync(k.data() + spec, m.out_keys.get() + spec, (n - spec) * sizeof(std::uint32_t),
                             cudaMemcpyDeviceToHost, s));
  REPIX_CUDA(cudaMemcpyAsync(v.data() + spec, m.out_vcec.get() + spec, (n - spec) * sizeof(long long),
                             cudaMemcpyDeviceToHost, s));
  REPIX_CUDA(cudaStreamSynchronize(s));
  out = curve_from_pairs(k.data(), v.data(), n);
  m.queued_pairs = std::min(m.slots, next_pow2(n));
  return made();
}

double Engine::collect_work_us() const { return impl_->collect_work_us; }

void Engine::fallback_begin() {
  impl_->fb_keys.clear();
  impl_->fb_vcec.clear();
}

void Engine::fallback_add(const void* buf, std::int64_t b0, std::int64_t s0, std::int64_t s1,
                          cudaStream_t s) {
  Impl& m = *impl_;
  if (!m.hashed_global()) throw Error("internal: ecc gpu-opt fallback is for float32 only");
  nvtx::Range range("fallback");
  const std::int64_t per_slab = slab_elems(m.shape);
  const std::int64_t step = std::max<std::int64_t>(1, m.fb_cap / per_slab);
  const bool vec = m.vec_ok(buf);
  const KernelFn k = pick_kernel(m.dtype, m.dims, vec, true, kModeOpt, m.tuning);
  for (std::int64_t c0 = s0; c0 < s1; c0 += step) {
    const std::int64_t c1 = std::min(s1, c0 + step);
    const std::int64_t n = (c1 - c0) * per_slab;
    std::int64_t grid = 1;
    const Geom g = m.geom(b0, c0, c1, m.emit_blocks_per_sm, nullptr, grid);  // emitting: static
    EmitOut out;
    out.keys = m.fb_k0.get();
    out.changes = m.fb_v0.get();
    launch(k, grid, s, buf, g, m.acc(), out);
    cub::DoubleBuffer<std::uint32_t> dk(m.fb_k0.get(), m.fb_k1.get());
    cub::DoubleBuffer<int> dv(m.fb_v0.get(), m.fb_v1.get());
    std::size_t bytes = m.fb_temp_bytes;
    REPIX_CUDA(cub::DeviceRadixSort::SortPairs(m.fb_temp.get(), bytes, dk, dv, n, 0, 32, s));
    std::uint32_t* uk = dk.Current() == m.fb_k0.get() ? m.fb_k1.get() : m.fb_k0.get();
    int* uv = dv.Current() == m.fb_v0.get() ? m.fb_v1.get() : m.fb_v0.get();
    bytes = m.fb_temp_bytes;
    REPIX_CUDA(cub::DeviceReduce::ReduceByKey(m.fb_temp.get(), bytes, dk.Current(), uk,
                                              dv.Current(), uv, m.fb_nruns.get(),
                                              ::cuda::std::plus<int>(), n, s));
    long long runs = 0;
    REPIX_CUDA(cudaMemcpyAsync(&runs, m.fb_nruns.get(), sizeof(long long), cudaMemcpyDeviceToHost, s));
    REPIX_CUDA(cudaStreamSynchronize(s));
    std::vector<std::uint32_t> ck(static_cast<std::size_t>(runs));
    std::vector<int> cv(static_cast<std::size_t>(runs));
    if (runs) {
      REPIX_CUDA(cudaMemcpyAsync(ck.data(), uk, runs * sizeof(std::uint32_t), cudaMemcpyDeviceToHost, s));
      REPIX_CUDA(cudaMemcpyAsync(cv.data(), uv, runs * sizeof(int), cudaMemcpyDeviceToHost, s));
      REPIX_CUDA(cudaStreamSynchronize(s));
    }
    // Merge two ascending key lists.
    std::vector<std::uint32_t> mk;
    std::vector<std::int64_t> mv;
    mk.reserve(m.fb_keys.size() + ck.size());
    mv.reserve(m.fb_keys.size() + ck.size());
    std::size_t a = 0, b = 0;
    while (a < m.fb_keys.size() || b < ck.size()) {
      if (b == ck.size() || (a < m.fb_keys.size() && m.fb_keys[a] < ck[b])) {
        mk.push_back(m.fb_keys[a]);
        mv.push_back(m.fb_vcec[a++]);
      } else if (a == m.fb_keys.size() || ck[b] < m.fb_keys[a]) {
        mk.push_back(ck[b]);
        mv.push_back(cv[b++]);
      } else {
        mk.push_back(ck[b]);
        mv.push_back(m.fb_vcec[a++] + cv[b++]);
      }
    }
    m.fb_keys.swap(mk);
    m.fb_vcec.swap(mv);
  }
}

Curve Engine::fallback_curve() const {
  const Impl& m = *impl_;
  Curve c;
  std::int64_t acc = 0;
  c.values.reserve(m.fb_keys.size());
  c.ecc.reserve(m.fb_keys.size());
  for (std::size_t i = 0; i < m.fb_keys.size(); ++i) {
    acc += m.fb_vcec[i];
    c.values.push_back(float_from_bits(unordered_key(m.fb_keys[i])));
    c.ecc.push_back(acc);
  }
  return c;
}

std::size_t Engine::workspace_bytes(DType dtype, const Shape& shape, bool streaming) {
  if (dtype != DType::f32) return 65536 * 12 + 64;
  const std::size_t slots = auto_global_slots(shape, streaming);
  const std::size_t fb = static_cast<std::size_t>(fallback_voxels(shape));
  // table: keys, vcec, list, out keys, out vcec; fallback: 2 x (key + value) + CUB temp (~1x).
  return slots * (4 + 8 + 4 + 4 + 8) + fb * 16 + fb * 8 + (16 << 20);
}

}  // namespace opt

}  // namespace repix::ecc
