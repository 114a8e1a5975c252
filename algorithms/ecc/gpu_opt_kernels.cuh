// gpu-opt's device pieces shared by its 2D and 3D kernels (gpu_opt_2d.cu, gpu_opt_3d.cu) and its
// host engine (gpu_opt_engine.cu): the tile constants, the global accumulator the kernels write,
// the block and thread accumulators, and the loads. The per-voxel rule itself is in
// gpu_opt_core.cuh (host-tested). See NOTES-gpu-opt.md.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "core/gpu/block_hash.cuh"
#include "ecc/gpu_opt.cuh"  // opt::Mode
#include "ecc/gpu_opt_core.cuh"
#include "ecc/gpu_opt_schedule.hpp"

namespace repix::ecc::opt::detail {

constexpr int kThreads = kWarps * 32;
constexpr int kLog2Smem = 12;              // block hash table: 4096 slots
constexpr int kSmemProbes = 16;
constexpr int kGlobalProbes = 64;
constexpr int kTileRows = kWarps + 2;      // 3D plane tile: rows y0-1 .. y0+8
constexpr int kRowStride = 136;            // [3] = x0-1, [4..131] = x0..x0+127, [132] = x0+128
constexpr int kPlaneFloats = kTileRows * kRowStride;
constexpr float kInf = __builtin_huge_valf();

struct GlobalAcc {
  std::uint32_t* keys = nullptr;           // float: hash table keys (kEmptyKey = free)
  unsigned long long* vcec = nullptr;      // float: per slot; integers: per value
  std::uint32_t* present = nullptr;        // uint8: a word per value; uint16: bit v % 32 of word v / 32
  // One pointer for two types' needs (a field more changed the float kernels' SASS: the struct is
  // copied for the slow path's calls).
  union {
    std::uint32_t* list = nullptr;         // float: occupied slots in insertion order
    std::uint32_t* block_bins;             // gpu-opt-bins16 (uint16): each block's 32768 counter words
  };
  std::uint32_t* counters = nullptr;       // [0] list length, [1] overflow flag
  int log2cap = 1;
};

struct EmitOut {
  std::uint32_t* keys = nullptr;           // ordered keys (float) or values (integers)
  int* changes = nullptr;
};

// ---- work distribution (gpu_opt_schedule.hpp) ---------------------------------------------

// The last block of a dynamic launch zeroes its counters for the next launch on them. Call after a
// __syncthreads behind the block's loop: every warp of every block done has taken its last ticket.
__device__ __forceinline__ void release_queue(const Geom& g) {
  if (g.queue == nullptr || threadIdx.x != 0) return;
  __threadfence();
  if (atomicAdd(g.queue + 1, 1u) == gridDim.x - 1) {
    atomicExch(g.queue, 0u);
    atomicExch(g.queue + 1, 0u);
  }
}

// ---- accumulation ---------------------------------------------------------------------------

// The global hash (float32). A key is claimed once a pass and never moves until finish_hash_kernel
// clears the table, so a key seen at its home slot by a plain load from L2 (__ldcg: another SM's
// claim is not in this SM's L1) is there for good, and its add needs no CAS. inline: one
// definition across the kernel files that include this header (the __noinline__ ones are still
// never inlined).

// Adds v to the sum of slot h, which holds its key.
__device__ __forceinline__ void global_add_at(const GlobalAcc& g, std::uint32_t h, long long v) {
  if (v != 0) atomicAdd(&g.vcec[h], static_cast<unsigned long long>(v));
}

// Adds v to key's slot, claiming one (atomicCAS from the home slot on) if key is new to the pass;
// sets the overflow flag when kGlobalProbes slots are taken by other keys.
inline __device__ __noinline__ void global_claim_add(const GlobalAcc& g, std::uint32_t key, long long v) {
  const std::uint32_t mask = (1u << g.log2cap) - 1u;
  std::uint32_t h = hash_slot(key, g.log2cap);
#pragma unroll 1
  for (int p = 0; p < kGlobalProbes; ++p) {
    const std::uint32_t prev = atomicCAS(&g.keys[h], kEmptyKey, key);
    if (prev == kEmptyKey) g.list[atomicAdd(&g.counters[0], 1u)] = h;
    if (prev == kEmptyKey || prev == key) {
      global_add_at(g, h, v);
      return;
    }
    h = (h + 1u) & mask;
  }
  atomicOr(&g.counters[1], 1u);
}

// Adds v to key's slot: at home by a plain load, else claimed.
inline __device__ __noinline__ void global_add_hash(const GlobalAcc& g, std::uint32_t key, long long v) {
  const std::uint32_t h = hash_slot(key, g.log2cap);
  if (__ldcg(&g.keys[h]) == key) {
    global_add_at(g, h, v);
  } else {
    global_claim_add(g, key, v);
  }
}

// Block-private accumulator in shared memory. uint8: direct bins; float32: the shared-memory hash
// table of core/gpu (a key it cannot place goes to the global hash); uint16: a small block hash
// with 2 probes in front of the global direct bins (BlockKind::hash_then_bins).
//
// uint16 (65536 values: int32 VCEC bins for them would need 256 KiB, more than an SM's shared
// memory, so the only direct table is the global one). At first gpu-opt gave uint16 the
// float32 path: a 4096-slot hash with 16 probes, then a global hash. On uniform uint16 data a block
// sees most of the 65536 values, its table fills, and each later key paid 16 failed probes before
// going global anyway (8192^2, 65536 levels: 2.61 ms, H100). The next step,
// gpu-opt-direct (kModeDirect16, BlockKind::presence_bits) sends every run by value to the global
// bins, with presence in a block-private bitmap: 3.2x faster there, but 28x slower than gpu-opt with
// 16 levels (smooth uint16, kernel scope), where every voxel of a block hit the same
// few L2 lines. gpu-opt's uint16 path now takes both: few values live in the block hash
// (as fast as the 4096-slot one on few-level and natural images), the rest find no slot within 2
// probes and go by value to the global bins at the cost of one failed CAS pair.
enum class BlockKind { hash, bins256, hash_then_bins, presence_bits, cluster_bins, bins16, hash_bins16 };
// The Mode bits that change the kernels of element type T (the others select gpu-opt's kernel,
// so no kernel is compiled twice). uint16 has five, one kernel a type and mode (pick_mode), in
// this order of precedence: kModeFreshRows (whose steps set no other kernel bit), kModeCluster16,
// kModeHashBins16, kModeBins16, kModeDirect16.
template <class T>
inline constexpr int modes_for = kModeFreshRows | (sizeof(T) == 2   ? (kModeDirect16 | kModeCluster16 | kModeBins16 | kModeHashBins16)
                                                   : sizeof(T) == 4 ? kModeWarpAgg
                                                                    : 0);
// Whether a kernel of this mode carries the comparisons of a step with the next row (2D) or plane
// (3D) to that row's or plane's step (change4_2d_carried, change4_3d_carried): all but
// gpu-opt-fresh-rows' (and gpu-opt-static's), which make them afresh.
template <int kMode>
inline constexpr bool kCarriesWords = (kMode & kModeFreshRows) == 0;
template <class T, int kMode>
inline constexpr BlockKind block_kind = sizeof(T) == 1   ? BlockKind::bins256
                                        : sizeof(T) == 4 ? BlockKind::hash
                                        : (kMode & kModeCluster16) ? BlockKind::cluster_bins
                                        : (kMode & kModeHashBins16) ? BlockKind::hash_bins16
                                        : (kMode & kModeBins16) ? BlockKind::bins16
                                        : (kMode & kModeDirect16) ? BlockKind::presence_bits
                                                                  : BlockKind::hash_then_bins;
// The 16-bit shared bins' kinds (gpu-opt-bins16, gpu-opt-hash-bins16): blocks of 24 warps, one an
// SM (136 KiB and more of counters, bitmap and hash), as many warps as gpu-opt's three blocks of 8
// (the 2D kernel is latency bound: 3 blocks of 8 warps were 1.26-1.32x faster than 2, gpu_opt_2d.cu).
constexpr int kBins16Warps = 24;
template <class T, int kMode>
inline constexpr bool kSharedBins16 =
    block_kind<T, kMode> == BlockKind::bins16 || block_kind<T, kMode> == BlockKind::hash_bins16;
template <class T, int kMode>
inline constexpr int block_warps = kSharedBins16<T, kMode> ? kBins16Warps : kWarps;

template <class T, BlockKind K>
struct BlockAccOf;

// float32: 4096 slots in buckets of 4 (core/gpu/block_hash.cuh's BucketHash, whose comment says
// why).
template <class T>
struct BlockAccOf<T, BlockKind::hash> : ::repix::gpu::BucketHash<kLog2Smem, kSmemProbes> {
  using Hash = ::repix::gpu::BucketHash<kLog2Smem, kSmemProbes>;
  __device__ std::uint32_t table_address() const { return Hash::address(); }
  // Every block flushes at its end, all at about the same time, each of its keys to the same few
  // global slots. One global_add_hash() a slot in turn waited for its atomicCAS's round trip
  // through those contended slots 16 times a thread: on the H100 the 2048^2 GRF kernel took
  // 52 us (Nsight Compute, IPC 1.0, top stall the barrier before this flush), where the voxels'
  // work at the 8192^2 rate is ~11 us. Here a thread loads the global home slots of kBatch keys
  // at once and adds with a RED where its key is there already (every block but the first few
  // to bring it); the rest take global_claim_add(). Same call, kernel scope: GRF 2048^2
  // 0.076 -> 0.071 ms, GRF 128^3 0.073 -> 0.065 (H100).
  // Two batches of 8, not one of 16 (one L2 round trip fewer): with 16, ptxas allocated the whole
  // kernel differently and the float32 row loop's common path grew from 484 to 499 SASS
  // instructions (sm_90, session 15), a cost on every voxel for a saving once a block.
  __device__ void flush(const GlobalAcc& g) {
    constexpr int kPerThread = Hash::kSlots / kThreads, kBatch = 8;
    static_assert(Hash::kSlots % kThreads == 0 && kPerThread % kBatch == 0);
    for (int b = 0; b < kPerThread; b += kBatch) {
      std::uint32_t key[kBatch], home[kBatch], there[kBatch];
      int sum[kBatch];
#pragma unroll
      for (int j = 0; j < kBatch; ++j) {
        const int i = static_cast<int>(threadIdx.x) + (b + j) * kThreads;
        key[j] = this->keys[i];
        sum[j] = this->sums[i];
        home[j] = hash_slot(key[j], g.log2cap);
        there[j] = key[j] != kEmptyKey ? __ldcg(&g.keys[home[j]]) : kEmptyKey;
      }
#pragma unroll
      for (int j = 0; j < kBatch; ++j) {
        if (key[j] == kEmptyKey) continue;
        if (there[j] == key[j]) {
          global_add_at(g, home[j], sum[j]);
        } else {
          global_claim_add(g, key[j], sum[j]);
        }
      }
    }
  }
};

template <class T>
struct BlockAccOf<T, BlockKind::bins256> {
  int vcec[256];
  unsigned present[256];  // right behind vcec: ThreadAcc::commit_runs addresses it from vcec's address
  __device__ std::uint32_t table_address() const { return ::repix::gpu::shared_address(vcec); }
  __device__ void init() {
    for (int i = threadIdx.x; i < 256; i += blockDim.x) {
      vcec[i] = 0;
      present[i] = 0;
    }
  }
  __device__ void flush(const GlobalAcc& g) {
    for (int i = threadIdx.x; i < 256; i += blockDim.x) {
      if (present[i]) atomicOr(&g.present[i], 1u);
      if (vcec[i]) atomicAdd(&g.vcec[i], static_cast<unsigned long long>(static_cast<long long>(vcec[i])));
    }
  }
};

// Presence of uint16 values in a block-private bitmap, one bit a value (8 KiB), set with a shared
// atomicOr; at the block's end each non-zero word is ORed into the global bitmap (GlobalAcc::present),
// at most 2048 global atomics a block. Nsight Compute (H100)
// had gpu-opt-direct at 85.8 % of L2 throughput with a global presence write and
// a VCEC reduction per voxel; with the bitmap a voxel costs only the reduction. Before the bitmap the
// global presence was a word a value, and a block marked each value it saw there: on a 2048^2
// image of 65536 levels each of ~400 blocks sees ~10 000 values, so the flush cost as many global
// operations as the image has voxels (2048^2 end to end 1.03 ms against a 0.17 ms upload,
// H100).
struct SeenBits {
  static constexpr int kWords = 65536 / 32;
  unsigned seen[kWords];  // bit v % 32 of word v / 32: value v occurred in this block
  __device__ void init() {
    for (int i = threadIdx.x; i < kWords; i += blockDim.x) seen[i] = 0;
  }
  __device__ void mark(std::uint32_t v) { atomicOr(&seen[v >> 5], 1u << (v & 31u)); }
  __device__ void flush(const GlobalAcc& g) {
    for (int i = threadIdx.x; i < kWords; i += blockDim.x)
      if (const unsigned bits = seen[i]) atomicOr(&g.present[i], bits);
  }
};

template <class T>
struct BlockAccOf<T, BlockKind::presence_bits> : SeenBits {};  // VCEC straight into the global bins

// 2048 slots (16 KiB): with the 8 KiB bitmap and the 3D kernel's planes under the 48 KiB of static
// shared memory. A value's presence is its slot when it has one (flush()), a bit in the bitmap when
// it has none, so few-level data pays no bitmap atomics.
constexpr int kDirectProbes = 2;
constexpr int kLog2DirectSmem = 11;
template <class T>
struct BlockAccOf<T, BlockKind::hash_then_bins> : SeenBits {
  using Hash = ::repix::gpu::BlockHash<kLog2DirectSmem, kDirectProbes, kThreads>;
  Hash hash;
  __device__ std::uint32_t table_address() const { return hash.address(); }
  __device__ void init() {
    hash.init();
    SeenBits::init();
  }
  // Called by every thread of the block.
  __device__ void flush(const GlobalAcc& g) {
    hash.flush([&](std::uint32_t key, int sum) {
      if (sum != 0) atomicAdd(&g.vcec[key], static_cast<unsigned long long>(static_cast<long long>(sum)));
      mark(key);
    });
    __syncthreads();  // the bits the hash's keys set, in words other threads flush
    SeenBits::flush(g);
  }
};

// uint16 (gpu-opt-cluster, kModeCluster16): every value a direct bin in shared memory after all,
// the 65536 int32 VCEC bins and their presence bits spread over the shared memory of a thread block
// cluster (distributed shared memory, sm_90): block r of a cluster of kClusterBlocks holds values
// [r * kClusterBins, (r + 1) * kClusterBins), 33 KiB, and a run goes by value to its owner's bins
// with a remote RED (core/gpu/shared_atomics.cuh). Each block hands its bins to the global ones once,
// at its end: 65536 values a cluster instead of a global reduction a run, which is what binds
// gpu-opt-direct on high-entropy data (8192^2, 65536 levels: L2 at 84 % of its peak, IPC 0.89 of
// 4, H200). Measured, it loses (H200, kernel scope, 8192^2): 65536 levels 1.863 ms against
// gpu-opt-direct's 0.627 and gpu-opt's 0.656; 16 levels 2.842 against 13.16 and 0.208. Nsight
// Compute: IPC 0.32, 43 warps waiting on the long scoreboard per issue, 27 % occupancy (37 % for
// gpu-opt-direct): a remote RED reaches ~0.55 G/s an SM (two a run: 1.3e8 in 1.85 ms), below the
// L2's global REDs. Kept as the measured step. The kernels open the bins with cluster_sync() (every
// block's bins zeroed before any block's first RED) and close them with another (every RED done
// before a block flushes and leaves). int32 bins: split_items() keeps a block at 2^23 voxels a
// launch (kClusterVoxelsLog2), 2^26 a cluster, |change| <= 13: far inside int32.
constexpr int kClusterBlocks = 8;
constexpr int kClusterBins = 65536 / kClusterBlocks;
constexpr int kClusterVoxelsLog2 = 23;
static_assert((kClusterBlocks << kClusterVoxelsLog2) * static_cast<long long>(kBias3) < (1ll << 31), "int32 bins");
template <class T>
struct BlockAccOf<T, BlockKind::cluster_bins> {
  int vcec[kClusterBins];
  unsigned seen[kClusterBins / 32];  // right behind vcec (commit_runs addresses it from vcec's address)
  __device__ std::uint32_t table_address() const { return ::repix::gpu::shared_address(vcec); }
  __device__ void init() {
    for (int i = threadIdx.x; i < kClusterBins; i += blockDim.x) vcec[i] = 0;
    for (int i = threadIdx.x; i < kClusterBins / 32; i += blockDim.x) seen[i] = 0;
  }
  // The shared::cluster addresses of value key's VCEC bin and presence word, in the block that
  // holds them; `table`: table_address().
  __device__ __forceinline__ static std::uint32_t bin_of(std::uint32_t table, std::uint32_t key) {
    return ::repix::gpu::cluster_address(table + 4u * (key % kClusterBins), key / kClusterBins);
  }
  __device__ __forceinline__ static std::uint32_t seen_of(std::uint32_t table, std::uint32_t key) {
    return ::repix::gpu::cluster_address(table + 4u * (kClusterBins + (key % kClusterBins) / 32u), key / kClusterBins);
  }
  __device__ __forceinline__ static void add(std::uint32_t table, std::uint32_t key, int sum) {
    ::repix::gpu::red_or_cluster(seen_of(table, key), 1u << (key & 31u));
    if (sum != 0) ::repix::gpu::red_add_cluster(bin_of(table, key), sum);
  }
  // After the closing cluster_sync(): this block's values into the global bins and bitmap.
  __device__ void flush(const GlobalAcc& g) {
    const int first = static_cast<int>(::repix::gpu::cluster_rank()) * kClusterBins;
    for (int i = threadIdx.x; i < kClusterBins; i += blockDim.x)
      if (vcec[i]) atomicAdd(&g.vcec[first + i], static_cast<unsigned long long>(static_cast<long long>(vcec[i])));
    for (int i = threadIdx.x; i < kClusterBins / 32; i += blockDim.x)
      if (seen[i]) atomicOr(&g.present[first / 32 + i], seen[i]);
  }
};

// uint16 (gpu-opt-bins16, kModeBins16, 2D): every value a direct bin in one block's shared memory
// after all, as a signed 16-bit counter (two a 32-bit word: 128 KiB, gpu_opt_core.cuh's bins16 says
// how a word reads and why its halves stay exact), with the presence bitmap in front. An add that
// leaves [-bins16::kLimit, kLimit) is taken back and goes to the global bin instead (few-level data: the same few
// counters fill up, and then every add goes global, as in gpu-opt-direct). At the block's end the
// counters go out as plain 16-byte stores into the block's row of GlobalAcc::block_bins, which a
// second kernel sums into the global bins (Engine::Impl::reduce_block_bins): 128 KiB a block, where
// a global reduction a non-zero counter would be ~65536 a block on high-entropy data.
template <class T>
struct BlockAccOf<T, BlockKind::bins16> : SeenBits {
  static constexpr int kCounterWords = 32768;
  static constexpr std::uint32_t kCountersAt = sizeof(SeenBits);  // bytes from the bitmap's start
  std::uint32_t counters[kCounterWords];
  // The threads' adds in flight: a thread's 4 voxels (|change| <= 3 each in 2D) before it checks them.
  static_assert(bins16::kLimit + 2 * (kBins16Warps * 32) * (kRun * 3) <= 32767, "a half stays within int16");
  __device__ std::uint32_t table_address() const { return ::repix::gpu::shared_address(seen); }
  __device__ void init() {
    SeenBits::init();
    uint4* c = reinterpret_cast<uint4*>(counters);
    for (int i = threadIdx.x; i < kCounterWords / 4; i += blockDim.x) c[i] = make_uint4(0, 0, 0, 0);
  }
  __device__ void flush(const GlobalAcc& g) {
    const uint4* c = reinterpret_cast<const uint4*>(counters);
    uint4* out = reinterpret_cast<uint4*>(g.block_bins + static_cast<std::size_t>(blockIdx.x) * kCounterWords);
    for (int i = threadIdx.x; i < kCounterWords / 4; i += blockDim.x) out[i] = c[i];
    SeenBits::flush(g);
  }
  // Marks value v present and adds d to its counter; returns the counter's word after the add.
  // `table`: table_address().
  __device__ __forceinline__ static std::uint32_t add(std::uint32_t table, std::uint32_t v, std::uint32_t increment) {
    ::repix::gpu::red_or_shared_if(table + 4u * (v >> 5), 1u << (v & 31u), true);
    const std::uint32_t at = table + kCountersAt + 4u * bins16::word_of(v);
    return ::repix::gpu::atom_add_shared(at, increment) + increment;
  }
  // The rare branch: an add that took its half past the limit, taken back and sent to the global
  // bin. The fence makes the take-back count before this thread's next adds (the bound above
  // counts only the adds of a thread's current 4 voxels).
  __device__ __forceinline__ static void take_back(std::uint32_t table, const GlobalAcc& g, std::uint32_t v,
                                                   std::uint32_t increment, int d) {
    ::repix::gpu::red_add_shared_if(table + kCountersAt + 4u * bins16::word_of(v), -static_cast<int>(increment), true);
    atomicAdd(&g.vcec[v], static_cast<unsigned long long>(static_cast<long long>(d)));
  }
};

static_assert(sizeof(BlockAccOf<std::uint16_t, BlockKind::bins16>) == sizeof(SeenBits) + 4 * 32768,
              "the counters right behind the bitmap (kCountersAt)");

// uint16 (gpu-opt-hash-bins16, kModeHashBins16, 2D): gpu-opt's 2048-slot block hash in front of the
// 16-bit bins, for data of few values (in the hash: no counter fills, as in gpu-opt) and of many
// (in the bins, as in gpu-opt-bins16). Until a key finds no slot the block claims as gpu-opt does
// (a CAS a voxel at the key's home slot, its second probe in the rare branch); the first key that
// finds none sets `full`, and from then on the block only looks its keys up at their home slot
// (a plain load: no atomic) and adds the others to the bins. Either way each change goes to one
// place, the hash or the bins, and each is summed into the global bins at the end; a value's
// presence is its slot (marked in the bitmap by flush()) or the bins' bit.
template <class T>
struct BlockAccOf<T, BlockKind::hash_bins16> : BlockAccOf<T, BlockKind::bins16> {
  using Bins = BlockAccOf<T, BlockKind::bins16>;
  using Hash = ::repix::gpu::BlockHash<kLog2DirectSmem, kDirectProbes, kBins16Warps * 32>;
  static constexpr std::uint32_t kHashAt = sizeof(Bins);  // bytes from the bitmap's start
  Hash hash;
  unsigned full;
  __device__ void init() {
    Bins::init();
    hash.init();
    if (threadIdx.x == 0) full = 0;
  }
  __device__ void flush(const GlobalAcc& g) {
    hash.flush([&](std::uint32_t key, int sum) {
      if (sum != 0) atomicAdd(&g.vcec[key], static_cast<unsigned long long>(static_cast<long long>(sum)));
      this->mark(key);
    });
    __syncthreads();  // the bits the hash's keys set, in words other threads flush
    Bins::flush(g);
  }
  // `table`: table_address() (the bitmap's, as Bins').
  __device__ __forceinline__ static bool is_full(std::uint32_t table) {
    return ::repix::gpu::ld_shared(table + kHashAt + static_cast<std::uint32_t>(sizeof(Hash))) != 0u;
  }
  __device__ __forceinline__ static void set_full(std::uint32_t table) {
    ::repix::gpu::red_or_shared_if(table + kHashAt + static_cast<std::uint32_t>(sizeof(Hash)), 1u, true);
  }
};
static_assert(sizeof(BlockAccOf<std::uint16_t, BlockKind::hash_bins16>) ==
                  sizeof(BlockAccOf<std::uint16_t, BlockKind::bins16>) +
                      sizeof(BlockAccOf<std::uint16_t, BlockKind::hash_bins16>::Hash) + sizeof(unsigned),
              "the hash right behind the counters and the flag right behind the hash (kHashAt, is_full)");

template <class T, int kMode = kModeOpt>
using BlockAcc = BlockAccOf<T, block_kind<T, kMode>>;

// Where a kernel's block accumulator lives: a static __shared__ object (declared in the kernel as
// BlockAccStatic), or for the 16-bit shared bins' kinds the dynamic shared memory (136 and 158 KiB:
// static shared memory stops at 48 KiB), whose size the engine passes at launch (bins16_smem in
// gpu_opt_engine.cu).
template <class T, int kMode>
inline constexpr bool kDynamicBlockAcc = kSharedBins16<T, kMode>;
struct NoStaticBlockAcc {};
template <class T, int kMode>
using BlockAccStatic = std::conditional_t<kDynamicBlockAcc<T, kMode>, NoStaticBlockAcc, BlockAcc<T, kMode>>;
template <class T, int kMode>
__device__ __forceinline__ BlockAcc<T, kMode>& block_acc(BlockAccStatic<T, kMode>& static_acc) {
  if constexpr (kDynamicBlockAcc<T, kMode>) {
    extern __shared__ uint4 ecc_dynamic_block_acc_[];
    return *reinterpret_cast<BlockAcc<T, kMode>*>(ecc_dynamic_block_acc_);
  } else {
    return static_acc;
  }
}

// The barrier around the block accumulator's use, after init() and before flush(): a cluster's
// blocks share their bins, so theirs spans the cluster (every block's bins zeroed before any remote
// RED; every RED done before a block flushes, and no block leaves while another can still reach its
// shared memory); the other kinds are the block's alone.
template <class T, int kMode>
__device__ __forceinline__ void block_acc_barrier() {
  if constexpr (block_kind<T, kMode> == BlockKind::cluster_bins) {
    ::repix::gpu::cluster_sync();
  } else {
    __syncthreads();
  }
}

// Per-thread front end: merges runs of equal keys, caches the last key's slot (for the global
// bins: remembers the last key whose presence it set, so a run of one value sets it once).
template <class T, int kMode = kModeOpt>
struct ThreadAcc {
  std::uint32_t pkey = kEmptyKey;  // pending run
  int psum = 0;
  std::uint32_t ckey = kEmptyKey;  // cached lookup
  std::uint32_t cslot = 0;         // hash kinds: its slot's shared address (BlockHash::find)
  std::uint32_t table = 0;         // hash kinds and bins256: the block table's shared address

  __device__ explicit ThreadAcc(BlockAcc<T, kMode>& b) {
    constexpr BlockKind kind = block_kind<T, kMode>;
    if constexpr (kind == BlockKind::hash || kind == BlockKind::hash_then_bins || kind == BlockKind::bins256 ||
                  kind == BlockKind::cluster_bins || kind == BlockKind::bins16 || kind == BlockKind::hash_bins16)
      table = b.table_address();
  }

  // Adds `sum` (the summed changes of a run of voxels of value `key`) to the block's accumulator.
  __device__ __forceinline__ void commit(BlockAcc<T, kMode>& b, const GlobalAcc& g, std::uint32_t key,
                                         int sum) {
    constexpr BlockKind kind = block_kind<T, kMode>;
    if constexpr (kind == BlockKind::bins256) {
      if (key != ckey) {
        atomicOr(&b.present[key], 1u);
        ckey = key;
      }
      if (sum != 0) atomicAdd(&b.vcec[key], sum);
    } else if constexpr (kind == BlockKind::presence_bits) {
      if (key != ckey) {
        b.mark(key);
        ckey = key;
      }
      if (sum != 0) atomicAdd(&g.vcec[key], static_cast<unsigned long long>(static_cast<long long>(sum)));
    } else if constexpr (kind == BlockKind::cluster_bins) {
      BlockAcc<T, kMode>::add(table, key, sum);
    } else if constexpr (kind == BlockKind::bins16) {
      add_bins16(g, key, sum);
    } else if constexpr (kind == BlockKind::hash_bins16) {
      using Acc = BlockAcc<T, kMode>;
      using Hash = typename Acc::Hash;
      const std::uint32_t htable = table + Acc::kHashAt;
      std::uint32_t slot;
      bool hit;
      if (!Acc::is_full(table)) {
        slot = Hash::find(htable, key);
        hit = slot != Hash::kNoSlot;
        if (!hit) Acc::set_full(table);
      } else {
        slot = Hash::home(htable, key);
        hit = ::repix::gpu::ld_shared(slot) == key;
      }
      if (hit) {
        Hash::add(slot, sum);
      } else {
        add_bins16(g, key, sum);
      }
    } else {  // hash, hash_then_bins
      using Hash = typename BlockAcc<T, kMode>::Hash;
      if (key != ckey) {
        cslot = Hash::find(table, key);
        ckey = key;
      }
      if (__builtin_expect(cslot != Hash::kNoSlot, 1)) {
        if (sum != 0) Hash::add(cslot, sum);
      } else {
        to_global(b, g, key, sum);
      }
    }
  }
  // The 16-bit bins' kinds: adds `sum` to value key's counter, taking it back to the global bin when
  // it leaves the counter outside the limit (BlockKind::bins16).
  __device__ __forceinline__ void add_bins16(const GlobalAcc& g, std::uint32_t key, int sum) {
    using Acc = BlockAcc<T, kMode>;
    const std::uint32_t inc = bins16::increment(key, sum);
    if (__builtin_expect(bins16::beyond(Acc::add(table, key, inc), key), 0)) {
      Acc::take_back(table, g, key, inc, sum);
      __threadfence_block();
    }
  }
  // The rare branch after a thread's 4 adds to the 16-bit bins (`in_bins[i]`: voxel i added
  // `inc[i]` there and got back `after[i]`): each add that left its counter outside the limit is
  // taken back to the global bin, then the fence (BlockAccOf<T, BlockKind::bins16>::take_back).
  __device__ __forceinline__ void take_backs(const GlobalAcc& g, const std::uint32_t (&k)[kRun], const int (&v)[kRun],
                                             const std::uint32_t (&inc)[kRun], const std::uint32_t (&after)[kRun],
                                             const bool (&in_bins)[kRun]) {
#pragma unroll
    for (int i = 0; i < kRun; ++i)
      if (in_bins[i] && bins16::beyond(after[i], k[i])) BlockAcc<T, kMode>::take_back(table, g, k[i], inc[i], v[i]);
    __threadfence_block();
  }
  // A run whose key found no slot in the block hash: to the global accumulator (the global hash for
  // float32; the global bins for uint16, its presence in the block's bitmap).
  __device__ __forceinline__ void to_global(BlockAcc<T, kMode>& b, const GlobalAcc& g, std::uint32_t key,
                                            int sum) {
    constexpr BlockKind kind = block_kind<T, kMode>;
    static_assert(kind == BlockKind::hash || kind == BlockKind::hash_then_bins);
    if constexpr (kind == BlockKind::hash) {
      global_add_hash(g, key, sum);
    } else {
      b.mark(key);
      if (sum != 0) atomicAdd(&g.vcec[key], static_cast<unsigned long long>(static_cast<long long>(sum)));
    }
  }
  // Adds the runs of a thread's 4 voxels: run ends end[i], key k[i], summed change v[i]. The block
  // table updates of the 4 voxels are issued back to back with no branch between them: up to
  // Earlier, each run's find and add waited on the one before (one CAS, two compares and a branch in
  // a chain, ~33 instructions a voxel in the SASS with the run merging and the slot cache), and the
  // chain was most of the 2D kernel's instructions. ptxas turns a predicated atomic into a branch
  // around it (BSSY, BRA, BSYNC), so every voxel issues its update, a voxel inside a run an add of
  // 0. uint16 claims each voxel's home slot with a CAS and sends a voxel inside a
  // run to this thread's spare slot (BlockHash::spare): measured on the H100
  // that made the natural 16-bit camera image 1.7x faster (0.217 against 0.359 ms, 8192^2), whose
  // lanes share keys and conflicted on the redundant atomics. float32 (BucketHash)
  // looks its keys up with plain loads instead of claiming them: the CAS claims conflicted on smooth
  // data, and keys off their home slot (1024 levels, GRF) sent most warp steps through the probe
  // loop (H100, same call: GRF 8192^2
  // 0.397 -> 0.273 ms). Keys not found are the rare branch (claiming, probing on, or the global
  // accumulator). Kinds without a block hash or bins run commit() a run.
  __device__ __forceinline__ void commit_runs(BlockAcc<T, kMode>& b, const GlobalAcc& g,
                                              const std::uint32_t (&k)[kRun], const int (&v)[kRun],
                                              const bool (&end)[kRun]) {
    constexpr BlockKind kind = block_kind<T, kMode>;
    if constexpr (kind == BlockKind::hash) {
      // Each voxel's key is looked for at its home slot with a plain shared load, no atomic
      // (smooth data's lanes share keys: their loads of one slot are a broadcast, their claims of
      // it were serialised). Keys not there take the rare branch: their home bucket (one more
      // load), and only keys in neither claim a slot with atomics (BucketHash). consume() passes no
      // runs here (every end[i] is true: each voxel adds its own change to its key's slot). With
      // runs, a voxel inside one added 0 to its key's home slot; sending those adds to a spare slot
      // a thread instead was 3-4 % slower on uniform and GRF 8192^2 (H100,
      // same call: 0.204 against 0.195 ms, 0.283 against 0.273).
      using Hash = typename BlockAcc<T, kMode>::Hash;
      std::uint32_t slot[kRun];
      int amount[kRun];
      bool all = true;  // every key at its home slot (a voxel inside a run has its run's key)
#pragma unroll
      for (int i = 0; i < kRun; ++i) {
        slot[i] = Hash::home(table, k[i]);
        all = Hash::holds(slot[i], k[i]) && all;
        amount[i] = end[i] ? v[i] : 0;
      }
      if (__builtin_expect(!all, 0)) {
#pragma unroll
        for (int i = 0; i < kRun; ++i) {
          if (!end[i] || Hash::holds(slot[i], k[i])) continue;  // adds 0, or is at home (now)
          const std::uint32_t found = Hash::find_past_home(table, k[i]);
          if (found != Hash::kNoSlot) {
            slot[i] = found;
          } else {
            to_global(b, g, k[i], v[i]);
            amount[i] = 0;  // to the home slot, which another key holds: adds nothing
          }
        }
      }
#pragma unroll
      for (int i = 0; i < kRun; ++i) Hash::add(slot[i], amount[i]);
    } else if constexpr (kind == BlockKind::hash_then_bins) {
      // uint16: every voxel claims its home slot (a voxel inside a run claims this thread's spare
      // slot instead); a key off its home slot takes the rare branch, probing on or going to the
      // global bins.
      using Hash = typename BlockAcc<T, kMode>::Hash;
      const std::uint32_t spare = Hash::spare(table, static_cast<int>(threadIdx.x));
      std::uint32_t slot[kRun];
      int amount[kRun];
      bool all = true;
#pragma unroll
      for (int i = 0; i < kRun; ++i) {
        slot[i] = Hash::home(table, k[i]);
        all = Hash::claim_or_spare(slot[i], spare, k[i], end[i]) && all;
        amount[i] = end[i] ? v[i] : 0;
      }
      if (__builtin_expect(!all, 0)) {
#pragma unroll
        for (int i = 0; i < kRun; ++i) {
          if (!end[i] || Hash::claim(slot[i], k[i])) continue;  // it had its slot
          slot[i] = Hash::find_after(table, slot[i], k[i]);
          if (slot[i] != Hash::kNoSlot) continue;
          slot[i] = spare;  // it adds 0 below
          to_global(b, g, k[i], v[i]);  // no slot
          amount[i] = 0;
        }
      }
#pragma unroll
      for (int i = 0; i < kRun; ++i) Hash::add(amount[i] != 0 ? slot[i] : spare, amount[i]);
    } else if constexpr (kind == BlockKind::bins16) {
      // Each voxel's add (no runs merged: consume()), the 4 issued back to back, then one test for
      // the rare take-back.
      using Acc = BlockAcc<T, kMode>;
      std::uint32_t inc[kRun], after[kRun];
#pragma unroll
      for (int i = 0; i < kRun; ++i) {
        inc[i] = bins16::increment(k[i], v[i]);
        after[i] = Acc::add(table, k[i], inc[i]);
      }
      std::uint32_t outside = 0;
#pragma unroll
      for (int i = 0; i < kRun; ++i) outside |= bins16::outside_bits(after[i], k[i]);
      static_assert(kRun == 4);
      constexpr bool kAll[kRun] = {true, true, true, true};
      if (__builtin_expect(outside != 0u, 0)) take_backs(g, k, v, inc, after, kAll);
    } else if constexpr (kind == BlockKind::hash_bins16) {
      // gpu-opt's claims (hash_then_bins above) until the block's hash is full, then plain lookups
      // at the home slots; the voxels whose runs found no slot add to the 16-bit bins, as bins16's
      // (4 back to back, one test for the rare take-back).
      using Acc = BlockAcc<T, kMode>;
      using Hash = typename Acc::Hash;
      const std::uint32_t htable = table + Acc::kHashAt;
      const std::uint32_t spare = Hash::spare(htable, static_cast<int>(threadIdx.x));
      std::uint32_t slot[kRun];
      bool hit[kRun];
      if (!Acc::is_full(table)) {
        bool all = true;
#pragma unroll
        for (int i = 0; i < kRun; ++i) {
          slot[i] = end[i] ? Hash::home(htable, k[i]) : spare;  // a voxel inside a run adds 0 to the spare
          hit[i] = Hash::claim_or_spare(slot[i], spare, k[i], end[i]);
          all = hit[i] && all;
        }
        if (__builtin_expect(!all, 0)) {
#pragma unroll
          for (int i = 0; i < kRun; ++i) {
            if (hit[i]) continue;
            slot[i] = Hash::find_after(htable, slot[i], k[i]);
            hit[i] = slot[i] != Hash::kNoSlot;
            if (!hit[i]) Acc::set_full(table);
          }
        }
      } else {
#pragma unroll
        for (int i = 0; i < kRun; ++i) {
          slot[i] = end[i] ? Hash::home(htable, k[i]) : spare;
          hit[i] = !end[i] || ::repix::gpu::ld_shared(slot[i]) == k[i];
        }
      }
      std::uint32_t inc[kRun], after[kRun], outside = 0;
#pragma unroll
      for (int i = 0; i < kRun; ++i) {
        const int amount = end[i] ? v[i] : 0;
        inc[i] = bins16::increment(k[i], amount);
        after[i] = 0;
        if (hit[i]) {
          Hash::add(slot[i], amount);
        } else {
          after[i] = Acc::add(table, k[i], inc[i]);
          outside |= bins16::outside_bits(after[i], k[i]);
        }
      }
      if (__builtin_expect(outside != 0u, 0)) {
        bool in_bins[kRun];
#pragma unroll
        for (int i = 0; i < kRun; ++i) in_bins[i] = !hit[i];
        take_backs(g, k, v, inc, after, in_bins);
      }
    } else if constexpr (kind == BlockKind::cluster_bins) {
      // A run a remote presence OR and VCEC add (merged runs: a voxel inside one adds nothing).
#pragma unroll
      for (int i = 0; i < kRun; ++i)
        if (end[i]) BlockAcc<T, kMode>::add(table, k[i], v[i]);
    } else if constexpr (kind == BlockKind::bins256) {
#pragma unroll
      for (int i = 0; i < kRun; ++i) {
        ::repix::gpu::red_or_shared_if(table + 4u * (256u + k[i]), 1u, true);
        ::repix::gpu::red_add_shared_if(table + 4u * k[i], end[i] ? v[i] : 0, true);
      }
    } else {
#pragma unroll
      for (int i = 0; i < kRun; ++i)
        if (end[i]) commit(b, g, k[i], v[i]);
    }
  }
  __device__ __forceinline__ void flush(BlockAcc<T, kMode>& b, const GlobalAcc& g) {
    if (pkey == kEmptyKey) return;
    commit(b, g, pkey, psum);
    pkey = kEmptyKey;
    psum = 0;
  }
  __device__ __forceinline__ void add(BlockAcc<T, kMode>& b, const GlobalAcc& g, std::uint32_t key,
                                      int change) {
    if (key != pkey) {
      flush(b, g);
      pkey = key;
    }
    psum += change;
  }
};

// Adds the 4 voxels of a run (change bytes `s`, compute values c[1..4]). kAllOrNone: `valid` is
// 0 or 0xF (the vector-load kernels: nx % 4 == 0), so a run is skipped or taken whole, with no
// test a voxel. Every lane of the warp calls it (the warp-aggregating step needs them all).
template <class T, bool kEmit, int kMode, bool kAllOrNone = false>
__device__ __forceinline__ void consume(std::uint32_t s, int bias, const float (&c)[6],
                                        unsigned valid, std::int64_t out_index, EmitOut& out,
                                        ThreadAcc<T, kMode>& ta, BlockAcc<T, kMode>& ba,
                                        const GlobalAcc& g) {
  if constexpr (!kEmit && (kMode & kModeWarpAgg) && block_kind<T, kMode> == BlockKind::hash) {
    // kModeWarpAgg (the `gpu-opt-warp` step): voxel i of every lane at once; lanes with equal
    // keys (smooth data: neighbours along x) form a group, whose lowest lane adds the group's
    // summed change, so a run of equal values costs one block-hash update instead of one per
    // lane. Callers are warp-uniform (every lane of the warp reaches this point: the full mask);
    // lanes whose voxel i is outside the image group under kEmptyKey, which no finite value's
    // key equals, and add nothing. Each lane is in exactly one group: every change is added once.
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int i = 0; i < kRun; ++i) {
      const bool ok = (valid >> i) & 1u;
      const std::uint32_t key = ok ? key_of_compute<T>(c[i + 1]) : kEmptyKey;
      const unsigned group = __match_any_sync(0xFFFFFFFFu, key);
      const int sum = __reduce_add_sync(group, byte_of(s, i) - bias);
      if (ok && lane == __ffs(group) - 1) ta.add(ba, g, key, sum);
    }
    ta.flush(ba, g);
  } else if constexpr (!kEmit && kAllOrNone) {
    if (valid == 0) return;
    // Runs of equal keys among the 4 voxels are merged into one update (smooth data) without a
    // branch: v[i] sums the changes of the run through voxel i, end[i] marks a run's last voxel.
    // Only where a run's inner voxels then cost less: uint16's hash sends them to a spare slot
    // (no contention on the run's slot), the global kinds skip them. The float block hash and
    // uint8's bins add their 0 to the run's own slot all the same, so merging bought them nothing
    // and cost ~12 ALU instructions a run (SASS common path a 384-voxel warp iteration without it:
    // float32 2D 558 -> 513, 3D 1065 -> 1004; uint8 2D 515 -> 482). Measured on the H100 in
    // one call, the float32 kernels with
    // merging were 4-7 % slower (8192^2 uniform 0.210 against 0.197-0.203 ms, GRF 0.304 against
    // 0.284-0.287, 512^3 GRF 0.749 against 0.702).
    constexpr BlockKind kind = block_kind<T, kMode>;
    constexpr bool kMergeRuns = kind != BlockKind::hash && kind != BlockKind::bins256 && kind != BlockKind::bins16;
    std::uint32_t k[kRun];
    int v[kRun];
    bool end[kRun];
#pragma unroll
    for (int i = 0; i < kRun; ++i) {
      k[i] = key_of_compute<T>(c[i + 1]);
      v[i] = byte_of(s, i) - bias;
      end[i] = true;
    }
    if constexpr (kMergeRuns) {
#pragma unroll
      for (int i = 1; i < kRun; ++i) v[i] += k[i] == k[i - 1] ? v[i - 1] : 0;
#pragma unroll
      for (int i = 0; i < kRun - 1; ++i) end[i] = k[i] != k[i + 1];
    }
    ta.commit_runs(ba, g, k, v, end);
  } else {
#pragma unroll
    for (int i = 0; i < kRun; ++i) {
      if (!((valid >> i) & 1u)) continue;
      const std::uint32_t key = key_of_compute<T>(c[i + 1]);
      const int change = byte_of(s, i) - bias;
      if constexpr (kEmit) {
        out.keys[out_index + i] = sizeof(T) == 4 ? ordered_key(key) : key;
        out.changes[out_index + i] = change;
      } else {
        ta.add(ba, g, key, change);
      }
    }
    if constexpr (!kEmit) ta.flush(ba, g);
  }
}

// ---- loads ------------------------------------------------------------------------------------

// A run of 4 raw elements plus validity bits (invalid = outside the image: +inf once converted).
template <class T>
struct Raw4 {
  T v[4];
  unsigned valid = 0;
};

// Loads the run at `p` (4 elements); `mask` has bit i set when element i is inside the image.
template <class T, bool kVec>
__device__ __forceinline__ Raw4<T> load4(const T* p, unsigned mask) {
  Raw4<T> r;
  r.valid = mask;
  if constexpr (kVec) {
    // nx % 4 == 0 and 16-byte-aligned rows: a run is wholly inside (0xF) or wholly outside.
    if (mask) {
      if constexpr (sizeof(T) == 4) {
        const float4 t = __ldg(reinterpret_cast<const float4*>(p));
        r.v[0] = t.x; r.v[1] = t.y; r.v[2] = t.z; r.v[3] = t.w;
      } else if constexpr (sizeof(T) == 2) {
        const uint2 t = __ldg(reinterpret_cast<const uint2*>(p));
        r.v[0] = static_cast<T>(t.x & 0xFFFFu); r.v[1] = static_cast<T>(t.x >> 16);
        r.v[2] = static_cast<T>(t.y & 0xFFFFu); r.v[3] = static_cast<T>(t.y >> 16);
      } else {
        const unsigned t = __ldg(reinterpret_cast<const unsigned*>(p));
        r.v[0] = static_cast<T>(t & 0xFFu); r.v[1] = static_cast<T>((t >> 8) & 0xFFu);
        r.v[2] = static_cast<T>((t >> 16) & 0xFFu); r.v[3] = static_cast<T>(t >> 24);
      }
    } else {
#pragma unroll
      for (int i = 0; i < 4; ++i) r.v[i] = T(0);
    }
  } else {
#pragma unroll
    for (int i = 0; i < 4; ++i) r.v[i] = ((mask >> i) & 1u) ? __ldg(p + i) : T(0);
  }
  return r;
}

// Validity bits of the run starting at column x0.
__device__ __forceinline__ unsigned run_mask(std::int64_t x0, std::int64_t nx) {
  const std::int64_t left = nx - x0;
  return left >= 4 ? 0xFu : left <= 0 ? 0u : ((1u << left) - 1u);
}

// float32 loads into registers preset to +inf: where `ok` is false the load is not issued and the
// registers keep +inf, the value of a voxel outside the image, with no select after the load (a
// predicated load after a move; plain C++ compiles to a zeroed register and an FSEL a value, on the
// ALU pipe). The data is read-only for the kernel's life (.nc, as __ldg).
__device__ __forceinline__ float4 ldg4_or_inf(std::uintptr_t p, bool ok) {
  float4 r;
  asm("{\n\t.reg .pred q;\n\tsetp.ne.u32 q, %5, 0;\n\t"
      "mov.f32 %0, 0f7F800000;\n\tmov.f32 %1, 0f7F800000;\n\tmov.f32 %2, 0f7F800000;\n\tmov.f32 %3, 0f7F800000;\n\t"
      "@q ld.global.nc.v4.f32 {%0, %1, %2, %3}, [%4];\n\t}"
      : "=&f"(r.x), "=&f"(r.y), "=&f"(r.z), "=&f"(r.w)
      : "l"(p), "r"(static_cast<unsigned>(ok)));
  return r;
}

__device__ __forceinline__ float ldg1_or_inf(std::uintptr_t p, bool ok) {
  float r;
  asm("{\n\t.reg .pred q;\n\tsetp.ne.u32 q, %2, 0;\n\tmov.f32 %0, 0f7F800000;\n\t"
      "@q ld.global.nc.f32 %0, [%1];\n\t}"
      : "=&f"(r)
      : "l"(p), "r"(static_cast<unsigned>(ok)));
  return r;
}

template <class T>
__device__ __forceinline__ float conv(const Raw4<T>& r, int i) {
  return ((r.valid >> i) & 1u) ? to_compute(r.v[i]) : kInf;
}

// Row of 6 compute values (x0-1 .. x0+4) from this lane's 4 values; halos from the neighbour
// lanes, the warp's edge lanes take theirs from `left`/`right` (valid in lane 0 / lane 31).
__device__ __forceinline__ void assemble(float (&row)[6], float a, float b, float c, float d,
                                         float left, float right, int lane) {
  row[1] = a; row[2] = b; row[3] = c; row[4] = d;
  const float l = __shfl_up_sync(0xFFFFFFFFu, d, 1);
  const float r = __shfl_down_sync(0xFFFFFFFFu, a, 1);
  row[0] = lane == 0 ? left : l;
  row[5] = lane == 31 ? right : r;
}

// A kernel of gpu-opt, type-erased for the engine: (buffer, geometry, accumulator, emit output).
using KernelFn = void (*)(const void*, Geom, GlobalAcc, EmitOut);

// Calls pick(std::integral_constant<int, M>) with the kernels' mode M for element type T: the
// bits of `mode` that change T's kernels (modes_for), none for the emitting (fallback) kernels.
// kSkip: Mode bits a kernel family has no instantiation for (the 3D kernel: kModeBins16 and
// kModeHashBins16; their steps run the kernel of the remaining bits there).
template <class T, int kSkip = 0, class Pick>
KernelFn pick_mode(bool emit, int mode, Pick&& pick) {
  constexpr int kHas = modes_for<T> & ~kSkip;
  const int m = emit ? kModeOpt : (mode & kHas);
  if constexpr ((kHas & kModeFreshRows) != 0)
    if (m & kModeFreshRows) return pick(std::integral_constant<int, kModeFreshRows>{});
  if constexpr (sizeof(T) == 2) {
    if (m & kModeCluster16) return pick(std::integral_constant<int, kModeCluster16>{});
    if constexpr ((kHas & kModeHashBins16) != 0)
      if (m & kModeHashBins16) return pick(std::integral_constant<int, kModeHashBins16>{});
    if constexpr ((kHas & kModeBins16) != 0)
      if (m & kModeBins16) return pick(std::integral_constant<int, kModeBins16>{});
    if (m & kModeDirect16) return pick(std::integral_constant<int, kModeDirect16>{});
  } else if constexpr (sizeof(T) == 4) {
    if (m & kModeWarpAgg) return pick(std::integral_constant<int, kModeWarpAgg>{});
  }
  return pick(std::integral_constant<int, kModeOpt>{});
}

// The kernel instantiation for element type T and the run's choices: inst(vec, emit, blocks, mode)
// with each as a std::integral_constant (vector loads or not, emitting or not, the register budget
// kBlocksA or kBlocksB as `blocks` says, and the Mode bits that change T's kernels: pick_mode). Steps
// after gpu-opt have accumulating kernels only.
template <class T, int kBlocksA, int kBlocksB, int kSkip = 0, class Instance>
KernelFn pick_instantiation(bool vec, bool emit, int blocks, int mode, Instance inst) {
  using Yes = std::true_type;
  using No = std::false_type;
  auto with_blocks = [&](auto v, auto e, auto m) {
    return blocks == kBlocksB ? inst(v, e, std::integral_constant<int, kBlocksB>{}, m)
                              : inst(v, e, std::integral_constant<int, kBlocksA>{}, m);
  };
  auto pick = [&](auto m) {
    if constexpr (decltype(m)::value != kModeOpt) {
      return vec ? with_blocks(Yes{}, No{}, m) : with_blocks(No{}, No{}, m);
    } else {
      if (vec) return emit ? with_blocks(Yes{}, Yes{}, m) : with_blocks(Yes{}, No{}, m);
      return emit ? with_blocks(No{}, Yes{}, m) : with_blocks(No{}, No{}, m);
    }
  };
  return pick_mode<T, kSkip>(emit, mode, pick);
}

// Whether an engine of this mode schedules dynamically (set_schedule_for_tests wins); the tests'
// cap on items a taker (0: none). The work items' split itself is the engine's OptTuning
// (Impl::geom). In gpu_opt_engine.cu.
bool dynamic_schedule(int mode);
std::int64_t schedule_cap_for_tests();
// The kernel for an element type and dims: 16-byte vector loads or not; accumulating, or emitting
// (key, change) per voxel for the exact fallback; `mode`: the ablation steps after gpu-opt
// (opt::Mode; emitting kernels and types a step does not change get gpu-opt's kernel).
// `blocks`: the register budget in minimum blocks an SM, 2 or 3 (OptTuning::blocks_2d / _3d).
KernelFn pick_kernel_2d(DType dt, bool vec, bool emit, int mode, int blocks);  // gpu_opt_2d.cu
KernelFn pick_kernel_3d(DType dt, bool vec, bool emit, int mode, int blocks);  // gpu_opt_3d.cu

}  // namespace repix::ecc::opt::detail
