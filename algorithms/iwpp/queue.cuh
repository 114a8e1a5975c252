// The IWPP GPU queue (Teodoro et al. 2013, sections 3.1-3.2, Algorithm 4), generic over the
// propagation step so that reconstruction and the distance transform share it.
//
// One propagation *episode* is one kernel launch of persistent blocks:
//   - the initial queue (seeds, filled by the caller's seed kernel) is split statically among the
//     blocks (Algorithm 4 line 1);
//   - each block then runs rounds on its own double-buffered queue region in global memory (the
//     paper's GBQ): the items queued in one round are the input of the next; the block stops when a
//     round queues nothing. Blocks never wait for each other.
//   - how a round appends to the block's queue is the ablation step (Table 1):
//       atomic:       one global atomicAdd per queued element (Hong et al.'s AddQueue, the paper's
//                     Naive queue), one hardware atomic per element (see AtomicTail);
//       warp_atomic:  the same source as `atomic` compiled as nvcc does by itself: ptxas turns a
//                     warp-uniform atomicAdd into one atomic per warp (the step the compiler takes);
//       scan:         a block-wide prefix sum (CUB BlockScan) per dequeued batch, no atomics;
//       thread_queue: per-thread queues in shared memory, flushed by a warp prefix sum and one
//                     shared-memory atomic per warp, only when a thread's queue is nearly full.
//   - capacity is bounded: an element that does not fit is dropped and the episode's overflow flag
//     is raised. The caller must then re-seed from the current state and run another episode
//     (sound for monotone propagations: the state is a partial solution). Nothing is silently lost.
//
// The step functor: `template <class Emit> __device__ void operator()(std::uint32_t item, Emit& emit)
// const` processes one dequeued item and calls emit(next) at most Step::kMaxFanout times. It must
// read state that other blocks update with L2-coherent loads (__ldcg / atomics): a plain load may
// hit a stale L1 line inside a persistent kernel.
#pragma once
#include <cooperative_groups.h>
#include <cub/block/block_scan.cuh>
#include <cub/warp/warp_reduce.cuh>
#include <cub/warp/warp_scan.cuh>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

#include "core/gpu.hpp"
#include "iwpp/queue_policy.hpp"

namespace repix::iwpp {

constexpr int kQueueThreads = 256;  // threads per block of the propagation kernel
constexpr int kThreadQueueSlots = 16;  // per-thread queue (thread_queue policy)

// Device counters of one episode (zeroed by QueueBuffers::reset before the seed kernel).
struct QueueCounters {
  unsigned long long seed_count;  // seeds pushed (may exceed the seed capacity: then overflow)
  unsigned long long total;       // every element stored (seeds and propagation)
  unsigned long long rounds;      // max rounds of any block in the episode
  unsigned int overflow;          // something was dropped: re-seed and run again
  unsigned int pad;
};

struct QueueView {
  std::uint32_t* seeds = nullptr;        // initial queue, seed_cap elements
  unsigned long long seed_cap = 0;
  std::uint32_t* store = nullptr;        // per block: 2 x block_cap elements
  unsigned long long block_cap = 0;
  unsigned long long* tails = nullptr;   // per block: global tail (atomic policy)
  QueueCounters* ctr = nullptr;
};

// ---- seed push: warp-aggregated atomics (one atomicAdd per warp of seeds) ------------------------

__device__ __forceinline__ void push_seed(const QueueView& q, std::uint32_t item) {
  namespace cg = cooperative_groups;
  cg::coalesced_group g = cg::coalesced_threads();
  unsigned long long base = 0;
  if (g.thread_rank() == 0) base = atomicAdd(&q.ctr->seed_count, static_cast<unsigned long long>(g.size()));
  base = g.shfl(base, 0);
  const unsigned long long pos = base + g.thread_rank();
  if (pos < q.seed_cap) {
    q.seeds[pos] = item;
  } else {
    atomicOr(&q.ctr->overflow, 1u);
  }
}

// ---- block enqueue policies ---------------------------------------------------------------------
// Protocol, executed by all threads of the block with block-uniform control flow:
//   start_round(out)      before the first item of a round
//   per batch of kQueueThreads dequeued items: step(item, enq) (only threads with an item), then
//   end_batch()           collective
//   finish_round()        collective; returns the number of items stored in `out` (<= cap)
// Each policy counts the elements it stored in `stored` and sets the sticky `dropped` (per thread).

template <QueuePolicy P, int kMaxFanout>
struct BlockEnqueue;

// The output side common to the policies: the round's queue region, its capacity, and what was
// stored or dropped by this thread.
struct QueueOut {
  std::uint32_t* out = nullptr;
  unsigned long long cap = 0;
  unsigned long long stored = 0;
  bool dropped = false;
  __device__ void put(unsigned long long pos, std::uint32_t item) {
    if (pos < cap) {
      out[pos] = item;
      ++stored;
    } else {
      dropped = true;
    }
  }
};

// A block-local tail in shared memory (scan and thread_queue policies).
struct SharedTail {
  unsigned long long& tail;
  __device__ void start() {
    if (threadIdx.x == 0) tail = 0;
    __syncthreads();
  }
  __device__ unsigned long long finish(unsigned long long cap) {
    __syncthreads();  // the round's last tail update is visible
    const unsigned long long n = tail;
    __syncthreads();  // read by all before the next start() rewrites it
    return n < cap ? n : cap;
  }
};

// A per-block tail in global memory, one atomicAdd per enqueue (atomic and warp_atomic policies).
// ptxas aggregates an atomicAdd whose address it can prove warp-uniform (here: the block's tail)
// by itself: VOTEU.ANY + UPOPC, one ATOMG by the leader lane, the others' slots by POPC of the
// lower lanes (the SASS of the plain form shows it). That is a real optimisation, but it is not
// the paper's Naive queue, whose cost Table 1 measures. With kPerElement the address gets
// threadIdx.x / blockDim.x added: 0 in every thread, but not provably warp-uniform, so every
// enqueue is its own ATOMG (scripts/check-queue-sass, run by device-check's build stage, checks
// both forms in the SASS).
template <bool kPerElement>
struct AtomicTail : QueueOut {
  struct Shared {
    unsigned long long n_out;
  };
  Shared& sh;
  unsigned long long* tail;  // this block's global tail

  __device__ AtomicTail(Shared& s, unsigned long long* t, unsigned long long c)
      : sh(s), tail(kPerElement ? t + threadIdx.x / blockDim.x : t) {
    cap = c;
  }
  __device__ void start_round(std::uint32_t* o) { out = o; }  // *tail is 0 here (see finish_round)
  __device__ void operator()(std::uint32_t item) { put(atomicAdd(tail, 1ull), item); }
  __device__ void end_batch() {}
  __device__ unsigned long long finish_round() {
    __syncthreads();  // every atomicAdd of the round has returned before the read
    if (threadIdx.x == 0) sh.n_out = atomicExch(tail, 0ull);  // read and reset for the next round
    __syncthreads();
    const unsigned long long n = sh.n_out;
    __syncthreads();  // sh is rewritten by the next finish_round
    return n < cap ? n : cap;
  }
};

template <int kMaxFanout>
struct BlockEnqueue<QueuePolicy::atomic, kMaxFanout> : AtomicTail<true> {
  using AtomicTail<true>::AtomicTail;
};

template <int kMaxFanout>
struct BlockEnqueue<QueuePolicy::warp_atomic, kMaxFanout> : AtomicTail<false> {
  using AtomicTail<false>::AtomicTail;
};

// The running tail lives in the scan's block-prefix callback (called by the first warp with each
// batch's total; lane 0's return value offsets every thread's result), so no atomics at all.
struct RunningPrefix {
  unsigned long long running = 0;
  __device__ unsigned long long operator()(unsigned long long batch_total) {
    const unsigned long long before = running;
    running += batch_total;
    return before;
  }
};

template <int kMaxFanout>
struct BlockEnqueue<QueuePolicy::scan, kMaxFanout> : QueueOut {
  using Scan = cub::BlockScan<unsigned long long, kQueueThreads>;
  struct Shared {
    typename Scan::TempStorage scan;
    unsigned long long tail;
  };
  Shared& sh;
  RunningPrefix prefix;
  std::uint32_t items[kMaxFanout];
  unsigned int k = 0;

  __device__ BlockEnqueue(Shared& s, unsigned long long*, unsigned long long c) : sh(s) { cap = c; }
  __device__ void start_round(std::uint32_t* o) {
    out = o;
    prefix.running = 0;
  }
  __device__ void operator()(std::uint32_t item) { items[k++] = item; }
  __device__ void end_batch() {
    unsigned long long pos = 0;
    Scan(sh.scan).ExclusiveSum(static_cast<unsigned long long>(k), pos, prefix);
    __syncthreads();  // the scan storage is reused by the next batch
#pragma unroll
    for (int j = 0; j < kMaxFanout; ++j)
      if (j < static_cast<int>(k)) put(pos + j, items[j]);
    k = 0;
  }
  __device__ unsigned long long finish_round() {
    if (threadIdx.x == 0) sh.tail = prefix.running;
    return SharedTail{sh.tail}.finish(cap);
  }
};

template <int kMaxFanout>
struct BlockEnqueue<QueuePolicy::thread_queue, kMaxFanout> : QueueOut {
  static_assert(kThreadQueueSlots >= 2 * kMaxFanout, "a thread queue holds at least two items' output");
  struct Shared {
    std::uint32_t tq[kThreadQueueSlots * kQueueThreads];  // slot j of thread t at j*threads + t
    unsigned long long tail;
  };
  Shared& sh;
  unsigned int k = 0;  // items in this thread's queue

  __device__ BlockEnqueue(Shared& s, unsigned long long*, unsigned long long c) : sh(s) { cap = c; }
  __device__ void start_round(std::uint32_t* o) {
    out = o;
    SharedTail{sh.tail}.start();
  }
  __device__ void operator()(std::uint32_t item) { sh.tq[k++ * kQueueThreads + threadIdx.x] = item; }
  // Warp-level flush: an exclusive prefix sum of the lanes' counts (CUB WarpScan: shuffles, no
  // shared memory), one shared atomicAdd per warp. Called by all 32 lanes (the block's control
  // flow is uniform and blocks are whole warps).
  __device__ void flush_warp() {
    const unsigned lane = threadIdx.x & 31u;
    using WarpScan = cub::WarpScan<unsigned int>;
    typename WarpScan::TempStorage scratch;  // empty for the shuffle-based full-warp scan
    unsigned int before = 0, total = 0;
    WarpScan(scratch).ExclusiveSum(k, before, total);
    unsigned long long base = 0;
    if (lane == 0 && total > 0) base = atomicAdd(&sh.tail, static_cast<unsigned long long>(total));
    base = __shfl_sync(0xffffffffu, base, 0) + before;
    for (unsigned int j = 0; j < k; ++j) put(base + j, sh.tq[j * kQueueThreads + threadIdx.x]);
    k = 0;
  }
  __device__ void end_batch() {
    // Flush only when some lane could not take another item's full output.
    if (__any_sync(0xffffffffu, k > static_cast<unsigned>(kThreadQueueSlots - kMaxFanout))) flush_warp();
  }
  __device__ unsigned long long finish_round() {
    flush_warp();
    return SharedTail{sh.tail}.finish(cap);
  }
};

// ---- the propagation kernel ---------------------------------------------------------------------

template <QueuePolicy P, class Step>
__global__ void __launch_bounds__(kQueueThreads) propagate_kernel(QueueView q, Step step) {
  using Enq = BlockEnqueue<P, Step::kMaxFanout>;
  __shared__ typename Enq::Shared sh;

  const unsigned long long b = blockIdx.x, nb = gridDim.x;
  const unsigned long long pushed = q.ctr->seed_count;  // written by the seed kernel
  const unsigned long long n0 = pushed < q.seed_cap ? pushed : q.seed_cap;
  // Static split of the initial queue (Algorithm 4, line 1).
  const unsigned long long lo = n0 * b / nb, hi = n0 * (b + 1) / nb;
  const std::uint32_t* in = q.seeds + lo;
  unsigned long long n_in = hi - lo;
  std::uint32_t* region = q.store + b * 2ull * q.block_cap;
  unsigned long long* tail = q.tails + b;
  if (threadIdx.x == 0) *tail = 0ull;  // atomic policies: the tail starts each round at 0
  __syncthreads();

  Enq enq(sh, tail, q.block_cap);
  unsigned long long rounds = 0;
  int which = 0;
  while (n_in > 0) {  // block-uniform: n_in comes from shared memory or the uniform split
    std::uint32_t* out = region + static_cast<unsigned long long>(which) * q.block_cap;
    enq.start_round(out);
    for (unsigned long long base = 0; base < n_in; base += kQueueThreads) {
      const unsigned long long i = base + threadIdx.x;
      if (i < n_in) step(in[i], enq);
      enq.end_batch();
    }
    const unsigned long long n_out = enq.finish_round();
    in = out;
    n_in = n_out;
    which ^= 1;
    ++rounds;
  }
  // Report: overflow, stored elements (warp-aggregated), rounds.
  if (__syncthreads_or(enq.dropped) && threadIdx.x == 0) atomicOr(&q.ctr->overflow, 1u);
  using WarpReduce = cub::WarpReduce<unsigned long long>;
  typename WarpReduce::TempStorage scratch;  // empty for the shuffle-based full-warp reduction
  const unsigned long long stored = WarpReduce(scratch).Sum(enq.stored);  // valid in lane 0
  if ((threadIdx.x & 31u) == 0 && stored) atomicAdd(&q.ctr->total, stored);
  if (threadIdx.x == 0) atomicMax(&q.ctr->rounds, rounds);
}

// ---- host side: buffers of one queue and the episode loop ---------------------------------------

class QueueBuffers {
 public:
  // capacity: elements of the initial queue; the per-block queues share the same total (at least
  // one element each). 0 = automatic: one seed slot per element of the domain, and per-block
  // queues of domain / blocks but at least min(domain, kAutoBlockFloor) elements, since a block's
  // wave is not confined to its share of the seeds.
  static constexpr std::int64_t kAutoBlockFloor = 16384;
  void setup(std::int64_t domain, std::int64_t capacity, int blocks) {
    if (domain <= 0 || domain > std::int64_t(0xffffffffll))
      throw Error("queue: domain of " + std::to_string(domain) + " elements (1 to 2^32-1 supported)");
    if (capacity < 0) throw Error("queue: negative capacity " + std::to_string(capacity));
    blocks_ = std::max(1, blocks);
    const std::int64_t cap = capacity > 0 ? capacity : domain;
    // A seed kernel pushes each element at most once; the block queues may hold duplicates.
    seed_cap_ = static_cast<unsigned long long>(std::min(cap, domain));
    std::int64_t per_block = std::max<std::int64_t>(1, (cap + blocks_ - 1) / blocks_);
    if (capacity == 0) per_block = std::max(per_block, std::min(domain, kAutoBlockFloor));
    block_cap_ = static_cast<unsigned long long>(per_block);
    seeds_.allocate(static_cast<std::size_t>(seed_cap_));
    store_.allocate(static_cast<std::size_t>(2ull * block_cap_ * static_cast<unsigned long long>(blocks_)));
    tails_.allocate(static_cast<std::size_t>(blocks_));
    ctr_.allocate(1);
    if (!start_) start_ = std::make_unique<CudaEvent>();
    if (!end_) end_ = std::make_unique<CudaEvent>();
  }
  int blocks() const { return blocks_; }
  QueueView view() const {
    return {seeds_.get(), seed_cap_, store_.get(), block_cap_, tails_.get(), ctr_.get()};
  }
  void reset(cudaStream_t s) { REPIX_CUDA(cudaMemsetAsync(ctr_.get(), 0, sizeof(QueueCounters), s)); }
  // Synchronises `s`.
  QueueCounters counters(cudaStream_t s) const {
    QueueCounters c{};
    REPIX_CUDA(cudaMemcpyAsync(&c, ctr_.get(), sizeof c, cudaMemcpyDeviceToHost, s));
    REPIX_CUDA(cudaStreamSynchronize(s));
    return c;
  }
  unsigned long long seed_cap() const { return seed_cap_; }
  // Events around each propagation kernel (EpisodeStats::propagate_ms); owned through pointers so
  // that the buffers stay movable.
  CudaEvent& propagate_start() const { return *start_; }
  CudaEvent& propagate_end() const { return *end_; }

 private:
  int blocks_ = 1;
  unsigned long long seed_cap_ = 0, block_cap_ = 0;
  DeviceBuffer<std::uint32_t> seeds_, store_;
  DeviceBuffer<unsigned long long> tails_;
  DeviceBuffer<QueueCounters> ctr_;
  std::unique_ptr<CudaEvent> start_, end_;
};

// Blocks of the propagation kernel: as many as can be resident at once on this device, or
// blocks_per_sm per multiprocessor when that is given (> 0; never more than fit: the paper's
// Table 1 runs one block per SM), and never more than one per kQueueThreads elements of the
// domain (the blocks split the initial queue; a tile of a few hundred pixels needs no thousand
// blocks, and each launched block costs a pass over the episode's rounds).
template <QueuePolicy P, class Step>
int propagate_blocks(std::int64_t domain, int blocks_per_sm = 0) {
  if (blocks_per_sm < 0)
    throw Error("queue: blocks per SM must be >= 0 (0 = as many as fit), got " + std::to_string(blocks_per_sm));
  int dev = 0, sms = 0, per_sm = 0;
  REPIX_CUDA(cudaGetDevice(&dev));
  REPIX_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  REPIX_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, propagate_kernel<P, Step>,
                                                           kQueueThreads, 0));
  per_sm = std::max(1, per_sm);
  if (blocks_per_sm > 0) per_sm = std::min(per_sm, blocks_per_sm);
  const std::int64_t by_domain = std::max<std::int64_t>(1, (domain + kQueueThreads - 1) / kQueueThreads);
  return static_cast<int>(std::min<std::int64_t>(std::int64_t(sms) * per_sm, by_domain));
}

struct EpisodeStats {
  std::int64_t initially_queued = 0;  // seeds stored by the first episode
  std::int64_t total_queued = 0;
  std::int64_t rounds = 0;
  std::int64_t overflow_reruns = 0;
  double propagate_ms = 0;  // GPU time of the propagation kernels (CUDA events), seed kernels excluded
};

// Runs episodes until one completes without overflow: seed(view, stream) launches the caller's
// seed kernel (push_seed for every element of the current frontier); then the propagation kernel.
// Terminates for monotone steps: an episode that processes at least one seed makes strict progress,
// and an episode whose seed kernel finds nothing ends the loop.
template <QueuePolicy P, class Step, class Seed>
EpisodeStats run_episodes(QueueBuffers& qb, const Step& step, Seed&& seed, cudaStream_t s) {
  EpisodeStats st;
  for (bool first = true;; first = false) {
    qb.reset(s);
    seed(qb.view(), s);
    const QueueCounters c0 = qb.counters(s);
    const auto stored = static_cast<std::int64_t>(std::min(c0.seed_count, qb.seed_cap()));
    if (first) st.initially_queued = stored;
    st.total_queued += stored;
    if (stored == 0) break;  // nothing can propagate: the state is stable
    qb.propagate_start().record(s);
    propagate_kernel<P, Step><<<qb.blocks(), kQueueThreads, 0, s>>>(qb.view(), step);
    REPIX_CUDA_LAUNCH();
    qb.propagate_end().record(s);
    const QueueCounters c1 = qb.counters(s);  // synchronises: both events have completed
    st.propagate_ms += qb.propagate_end().ms_since(qb.propagate_start());
    st.total_queued += static_cast<std::int64_t>(c1.total);
    st.rounds += static_cast<std::int64_t>(c1.rounds);
    if (!c1.overflow) break;
    ++st.overflow_reruns;
  }
  return st;
}

}  // namespace repix::iwpp
