// The epoch kernels' engine (gpu-opt, gpu-epoch-pipelined, gpu-epoch-runs): uint8 labels copied into 16-byte-pitched rows,
// one block per chunk of one lag's items (16 consecutive pairs of an overlap row each), the lag's
// 256 x 256 histogram in shared memory as 16-bit counters kept exact by epochs (epoch_core.hpp says
// why each piece is there). uint16 labels (k = 257) go through gpu-run-merge's count. The
// variants differ in two template flags: Prefetch issues the next item's loads before this item's
// atomics; Merge adds each run of equal consecutive bins of a thread's item once (smooth images:
// fewer atomics on one address), at a compare per pair.
#pragma once
#include <algorithm>
#include <cstdint>
#include <deque>
#include <utility>

#include "ami/auto_mi/epoch_core.hpp"
#include "ami/auto_mi/shared_hist.cuh"

namespace repix::ami::auto_mi::gpu {

// What a block of the epoch kernel needs beyond the batch: the pitched labels copy.
struct EpochBatch {
  Batch b;
  const std::uint8_t* rows = nullptr;  // h rows of `pitch` bytes, 16-byte aligned
  std::int64_t pitch = 0;
  std::int64_t chunks = 1;            // per lag
  std::uint32_t level = epoch::kDefaultLevel;
  int items_per_epoch = 3;
};

// Adds the pairs of a 32-bit word of two bins (low and high halves; `take_lo` / `take_hi` say
// whether each is a pair of the item) to the shared counters, or to the thread's current run.
template <bool Merge>
struct PairSink {
  std::uint32_t* words;
  std::uint32_t run_bin = 0xFFFFFFFFu, run_len = 0;
  __device__ void add_one(std::uint32_t bin16) {
    if constexpr (Merge) {
      if (bin16 == run_bin) {
        ++run_len;
        return;
      }
      flush();
      run_bin = bin16;
      run_len = 1;
    } else {
      atomicAdd(&words[epoch::word_of(bin16)], epoch::unit_of(bin16));
    }
  }
  __device__ void flush() {
    if (Merge && run_len != 0) atomicAdd(&words[epoch::word_of(run_bin)], run_len * epoch::unit_of(run_bin));
    run_len = 0;
  }
  __device__ void add_word(std::uint32_t two, bool take_lo, bool take_hi) {
    if (take_lo) add_one(two & 0xFFFFu);
    if (take_hi) add_one(two >> 16);
  }
};

// One item's labels: the 16 first labels and the five words holding its 16 partners; n = pairs of
// the item (0: none).
struct ItemData {
  uint4 f;
  std::uint32_t w[5];
  std::uint32_t n;
};

// The n (1..16) first pairs of an item into the shared counters; n == kItemPairs as a constant
// compiles to the item's 16 atomics with no bound check.
template <bool Merge>
__device__ __forceinline__ void count_item(const ItemData& d, unsigned mis, std::uint32_t n, std::uint32_t* words) {
  const std::uint32_t f[4] = {d.f.x, d.f.y, d.f.z, d.f.w};
  PairSink<Merge> sink{words};
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const std::uint32_t pb = epoch::partner_word(d.w[j], d.w[j + 1], mis);
#pragma unroll
    for (int t = 0; t < 2; ++t) {
      const std::uint32_t pair = 4u * j + 2u * t;  // the word's first pair within the item
      sink.add_word(epoch::two_bins(f[j], pb, t), pair < n, pair + 1 < n);
    }
  }
  sink.flush();
}

// Replay (the pairs bound, EpochPlan::pairs_bound): each thread loads its first item once and
// counts those labels again at every later step, with the same pair count per step as the real
// walk: the same atomics, epochs and scans, without the loads.
template <bool Merge, bool Prefetch, bool Replay = false>
__global__ void __launch_bounds__(epoch::kThreads, 1) epoch_kernel(EpochBatch e) {
  using namespace epoch;
  const Batch& b = e.b;
  const LagGeometry g = block_lag(b);
  const std::int64_t lag = b.lag0 + blockIdx.x;
  const std::uint32_t segs = static_cast<std::uint32_t>((g.cols + kItemPairs - 1) / kItemPairs);
  const std::int64_t items = g.rows * std::int64_t(segs);
  const std::int64_t begin = chunk_begin(items, e.chunks, block_chunk());
  const std::int64_t end = chunk_begin(items, e.chunks, block_chunk() + 1);
  if (begin >= end) return;  // uniform over the block: before any barrier

  extern __shared__ uint4 epoch_words4_[];
  std::uint32_t* words = reinterpret_cast<std::uint32_t*>(epoch_words4_);
  for (int i = threadIdx.x; i < kWords / 4; i += kThreads) epoch_words4_[i] = make_uint4(0, 0, 0, 0);
  __syncthreads();

  // Partner offset in the pitched copy, and its misalignment within a 4-byte word (0 vertically:
  // the pitch is a multiple of 16).
  const std::int64_t off = b.direction == kHorizontal ? lag : lag * e.pitch;
  const unsigned mis = static_cast<unsigned>(off & 3);
  const std::uint32_t cols = static_cast<std::uint32_t>(g.cols);
  std::uint32_t* hist = block_hist(b);
  const std::uint32_t level2 = e.level | (e.level << 16);
  const std::int64_t per_epoch = std::int64_t(kThreads) * e.items_per_epoch;

  // The thread's steps: items_per_epoch per epoch, the same count for every thread (the epoch
  // barriers); a step past `end` holds no item. Pipelined: the next step's loads are issued
  // before this step's atomics (and before the epoch's barrier and scan: the labels are
  // read-only), so one item's global-load latency hides behind the previous item's work.
  const int steps = static_cast<int>((end - begin + per_epoch - 1) / per_epoch) * e.items_per_epoch;
  ItemCursor c(static_cast<std::uint32_t>(begin + threadIdx.x), segs, kThreads);
  std::int64_t q = begin + threadIdx.x;
  bool loaded = false;
  auto load = [&](ItemData& d) {
    d.n = 0;
    if (q < end && (!Replay || !loaded)) {
      loaded = true;
      const std::uint8_t* first = e.rows + std::int64_t(c.y) * e.pitch + std::int64_t(c.x) * kItemPairs;
      d.f = __ldg(reinterpret_cast<const uint4*>(first));
      const auto* pw = reinterpret_cast<const std::uint32_t*>(first + off - mis);
#pragma unroll
      for (int j = 0; j < 5; ++j) d.w[j] = __ldg(pw + j);
    }
    if (q < end) d.n = min(static_cast<std::uint32_t>(kItemPairs), cols - c.x * kItemPairs);
    q += kThreads;
    c.advance();
  };
  ItemData cur, next;
  load(cur);
  for (int step = 0; step < steps; ++step) {
    if constexpr (Prefetch) load(next);
    // A full item (all but a row's last) adds its 16 pairs with no per-pair bound check.
    if (cur.n == kItemPairs) count_item<Merge>(cur, mis, kItemPairs, words);
    else if (cur.n != 0) count_item<Merge>(cur, mis, cur.n, words);
    if constexpr (Prefetch) cur = next;
    else load(cur);
    if ((step + 1) % e.items_per_epoch != 0) continue;
    // Epoch end: every counter at or above the level moved to the lag's global histogram.
    __syncthreads();
    bool moved = false;
    for (int i = threadIdx.x; i < kWords / 4; i += kThreads) {
      uint4 v = epoch_words4_[i];
      std::uint32_t* vw = reinterpret_cast<std::uint32_t*>(&v);
      if ((__vcmpgeu2(v.x, level2) | __vcmpgeu2(v.y, level2) | __vcmpgeu2(v.z, level2) | __vcmpgeu2(v.w, level2)) == 0)
        continue;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const std::uint32_t word = 4u * i + j;
        const std::uint32_t lo = vw[j] & 0xFFFFu, hi = vw[j] >> 16;
        if (lo >= e.level) {
          atomicAdd(&hist[bin_of_half(word, 0)], lo);
          vw[j] -= lo;
        }
        if (hi >= e.level) {
          atomicAdd(&hist[bin_of_half(word, 1)], hi);
          vw[j] -= hi << 16;
        }
      }
      epoch_words4_[i] = v;
      moved = true;
    }
    if (__syncthreads_or(moved) && threadIdx.x == 0) atomicAdd(b.hot_flushes, 1ull);
  }
  // Every remaining counter to the global histogram.
  for (int i = threadIdx.x; i < kWords; i += kThreads) {
    const std::uint32_t v = words[i];
    if (v & 0xFFFFu) atomicAdd(&hist[bin_of_half(i, 0)], v & 0xFFFFu);
    if (v >> 16) atomicAdd(&hist[bin_of_half(i, 1)], v >> 16);
  }
}

// The plan of gpu-opt (Merge = Prefetch = false), gpu-epoch-pipelined (Prefetch) and
// gpu-epoch-runs (both): the pitched copy made once per compute, then LagPlan's batches counted by epoch_kernel.
template <bool Merge, bool Prefetch>
class EpochPlan final : public LagPlan, public PairsBoundSource {
 public:
  void setup(const InputDesc& in, const Options& opt, cudaStream_t stream) override {
    LagPlan::setup(in, opt, stream);  // checks the flush level (1 .. kMaxFlushLevel, or 0)
    level_ = opt.flush_level > 0 ? static_cast<std::uint32_t>(opt.flush_level) : epoch::kDefaultLevel;
    u16_ = in.dtype == DType::u16;
    h_ = in.shape.ny;
    w_ = in.shape.nx;
    pitch_ = epoch::pitch_of(w_);
    int dev = 0;
    REPIX_CUDA(cudaGetDevice(&dev));
    REPIX_CUDA(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, dev));
    if (!u16_) {
      rows_.ensure(static_cast<std::size_t>(h_ * pitch_));
      // The padding is read (and masked) by the last items of rows: zero it once.
      REPIX_CUDA(cudaMemsetAsync(rows_.get(), 0, rows_.bytes(), stream));
    }
  }
  void compute(const DeviceInputs& in, cudaStream_t stream) override {
    if (!u16_)
      REPIX_CUDA(cudaMemcpy2DAsync(rows_.get(), static_cast<std::size_t>(pitch_), in.at(0), static_cast<std::size_t>(w_),
                                   static_cast<std::size_t>(w_), static_cast<std::size_t>(h_), cudaMemcpyDeviceToDevice,
                                   stream));
    LagPlan::compute(in, stream);
  }
  // The replay kernel (epoch_kernel<..., Replay>) over the same batches as the last compute, each
  // launch between two CUDA events: the pairs counted per second of kernel time.
  double measure_pairs_bound(cudaStream_t stream) override {
    if (u16_) return 0;  // their path is gpu-run-merge's
    replay_ = true;
    LagPlan::compute(DeviceInputs{rows_.get()}, stream);  // uint8: count() reads rows_, not the input
    replay_ = false;
    float total_ms = 0;
    for (auto& [start, stop] : replay_events_) {
      REPIX_CUDA(cudaEventSynchronize(stop.get()));
      total_ms += stop.ms_since(start);
    }
    replay_events_.clear();
    return total_ms > 0 ? static_cast<double>(stats().pairs) / (total_ms * 1e-3) : 0;
  }

 protected:
  void count(const Batch& b, cudaStream_t stream) override {
    if (b.u16) return count_run_merged(b, stream);
    const LagGeometry g = lag_geometry(b.h, b.w, b.direction, b.lag0);  // the batch's largest lag
    const std::int64_t most = g.rows * ((g.cols + epoch::kItemPairs - 1) / epoch::kItemPairs);
    EpochBatch e;
    e.b = b;
    e.rows = rows_.get();
    e.pitch = pitch_;
    e.chunks = epoch::chunks_per_lag(most, b.lags, sms_);
    e.level = level_;
    e.items_per_epoch = epoch::items_per_epoch(level_);
    const std::size_t smem = epoch::kWords * sizeof(std::uint32_t);
    const dim3 grid(static_cast<unsigned>(b.lags), static_cast<unsigned>(e.chunks));
    if (replay_) {
      replay_events_.emplace_back();
      replay_events_.back().first.record(stream);
      launch(epoch_kernel<Merge, false, true>, grid, smem, e, stream);
      replay_events_.back().second.record(stream);
    } else {
      launch(epoch_kernel<Merge, Prefetch>, grid, smem, e, stream);
    }
  }

 private:
  static void launch(void (*kernel)(EpochBatch), dim3 grid, std::size_t smem, const EpochBatch& e, cudaStream_t stream) {
    REPIX_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
    kernel<<<grid, epoch::kThreads, smem, stream>>>(e);
    REPIX_CUDA_LAUNCH();
  }
  bool replay_ = false;
  std::deque<std::pair<CudaEvent, CudaEvent>> replay_events_;  // CudaEvent does not move
  std::uint32_t level_ = epoch::kDefaultLevel;
  bool u16_ = false;
  std::int64_t h_ = 0, w_ = 0, pitch_ = 0;
  int sms_ = 1;
  DeviceBuffer<std::uint8_t> rows_;
};

}  // namespace repix::ami::auto_mi::gpu
