// The batched small-image kernel's per-thread logic (gpu_batch_small.cu), written as
// __host__ __device__ functions so that the CPU tests (tests/ecc/test_ecc_batch_small_core.cpp)
// run exactly the code the kernel runs; only the block-wide sort and scan (CUB) are emulated there.
//
// One thread block computes the curve of one image held in shared memory, in three steps:
//  1. items: every voxel becomes a (sort key, change) pair: the key orders values as seq does
//     (floats: -0 folded into +0, then the order-preserving map of the bits; integers: the value),
//     the change is the voxel's signed count of the cells it introduces (gpu-cached's rule,
//     checked against cell_rules.hpp by the ladder tests). Slots past the image get a sentinel key
//     that sorts after every real one and a change of 0.
//  2. the block sorts the pairs by key (cub::BlockRadixSort, over only the key bits in use).
//  3. reduce: in sorted order, the prefix sum of the changes at the last pair of each run of equal
//     keys is the ECC at that value. Each thread sums its pairs and counts its run ends
//     (thread_totals), an exclusive block scan of those gives every thread its starting ECC and
//     output position, and thread_emit writes one (value, ecc) pair per run end.
#pragma once
#include <cstdint>

#include "core/float_bits.hpp"
#include "core/hd.hpp"
#include "ecc/gpu_common.hpp"

namespace repix::ecc::small_batch {

// Largest image (elements) the kernel takes: 128 x 128 float32, 64 KiB of shared memory, whose
// storage the sort reuses (BlockRadixSort<uint32, 1024 threads, 16 items> needs 66 KiB).
constexpr int kMaxElements = 16384;

// Sort keys per element type. kEndBit: the sort looks at bits [0, kEndBit) only (3 passes of 4
// bits for uint8 instead of 8). kSentinel is the key of empty slots: above every real key and
// still below 2^kEndBit, so it sorts last.
template <class T>
struct SortKey {  // uint8 / uint16: the value itself
  static constexpr int kEndBit = 8 * static_cast<int>(sizeof(T)) + 1;
  static constexpr std::uint32_t kSentinel = std::uint32_t(1) << (8 * sizeof(T));
  REPIX_HD static std::uint32_t of(T v) { return v; }
  // Bits of the float32 the curve reports for a (real) key.
  REPIX_HD static std::uint32_t value_bits(std::uint32_t key) { return float_bits(static_cast<float>(key)); }
};

template <>
struct SortKey<float> {  // -0 -> +0, then ordered bits: unsigned order = float order
  static constexpr int kEndBit = 32;
  // An ordered key of a NaN (the inputs are finite): above every finite value's key.
  static constexpr std::uint32_t kSentinel = 0xFFFFFFFFu;
  REPIX_HD static std::uint32_t of(float v) { return gpu::float_order_key(v); }
  REPIX_HD static std::uint32_t value_bits(std::uint32_t key) { return unordered_key(key); }
};

// Step 1 for one thread. Item j of thread t is element t + j * threads (the striped arrangement:
// the threads of a warp read neighbouring shared-memory words, free of bank conflicts; the sort
// does not care where an item starts). `img` is the image (in shared memory on the device),
// `dims` 2 or 3 (rule_dims).
template <class T, int kItems>
REPIX_HD void thread_items(const T* img, const gpu::Geometry& g, int n, int dims, int t,
                           int threads, std::uint32_t (&keys)[kItems],
                           signed char (&changes)[kItems]) {
  const int nx = static_cast<int>(g.nx), nxy = static_cast<int>(g.sz);
  REPIX_UNROLL
  for (int j = 0; j < kItems; ++j) {
    const int i = t + j * threads;
    keys[j] = SortKey<T>::kSentinel;
    changes[j] = 0;
    if (i < n) {
      const int z = i / nxy, r = i - z * nxy, y = r / nx, x = r - y * nx;
      const T c = img[i];
      const gpu::PredicatedNeighbours<T, false> nb(img + i, g, x, y, z);
      keys[j] = SortKey<T>::of(c);
      changes[j] = static_cast<signed char>(dims == 3 ? gpu::cached_change_3d(c, nb)
                                                      : gpu::cached_change_2d(c, nb));
    }
  }
}

// Per-thread partials of step 3: the sum of the changes and the number of runs that end here.
struct RunTotals {
  int ecc = 0;
  int runs = 0;
};

struct AddRunTotals {  // the block scan's operator
  REPIX_HD RunTotals operator()(const RunTotals& a, const RunTotals& b) const {
    RunTotals s;
    s.ecc = a.ecc + b.ecc;
    s.runs = a.runs + b.runs;
    return s;
  }
};

// Sorted keys of one thread (blocked arrangement: the thread's run of the sorted sequence) and
// `successor`, the first key of the next thread (kSentinel for the last thread). Pair j ends a
// run when the next key differs; sentinel runs are not values.
template <int kItems>
REPIX_HD bool ends_run(const std::uint32_t (&keys)[kItems], int j, std::uint32_t successor,
                       std::uint32_t sentinel) {
  const std::uint32_t next = j + 1 < kItems ? keys[j + 1] : successor;
  return keys[j] != next && keys[j] != sentinel;
}

template <int kItems>
REPIX_HD RunTotals thread_totals(const std::uint32_t (&keys)[kItems],
                                 const signed char (&changes)[kItems], std::uint32_t successor,
                                 std::uint32_t sentinel) {
  RunTotals s;
  REPIX_UNROLL
  for (int j = 0; j < kItems; ++j) {
    s.ecc += changes[j];
    s.runs += ends_run(keys, j, successor, sentinel) ? 1 : 0;
  }
  return s;
}

// Writes this thread's (value bits, ecc) pairs at values[k], ecc[k] from k = before.runs on;
// `before` is the exclusive scan of thread_totals over the threads before this one. The ECC fits
// int32: at most 27 cells per voxel and kMaxElements voxels.
template <class T, int kItems>
REPIX_HD void thread_emit(const std::uint32_t (&keys)[kItems], const signed char (&changes)[kItems],
                          std::uint32_t successor, RunTotals before, std::uint32_t* values,
                          std::int32_t* ecc) {
  int acc = before.ecc, k = before.runs;
  REPIX_UNROLL
  for (int j = 0; j < kItems; ++j) {
    acc += changes[j];
    if (ends_run(keys, j, successor, SortKey<T>::kSentinel)) {
      values[k] = SortKey<T>::value_bits(keys[j]);
      ecc[k] = acc;
      ++k;
    }
  }
}

// Block shapes: the smallest whose threads x items holds the image, so that a small image does not
// sort thousands of empty slots.
struct Tier {
  int threads;
  int items;
  constexpr int capacity() const { return threads * items; }
};
constexpr Tier kTiers[] = {{64, 4}, {256, 8}, {1024, 16}};
constexpr int kTierCount = static_cast<int>(sizeof kTiers / sizeof kTiers[0]);
static_assert(kTiers[kTierCount - 1].capacity() == kMaxElements, "the largest tier holds kMaxElements");

// Index into kTiers for an image of n elements; -1 when it does not fit.
inline int tier_for(std::int64_t n) {
  for (int i = 0; i < kTierCount; ++i)
    if (n <= kTiers[i].capacity()) return i;
  return -1;
}

}  // namespace repix::ecc::small_batch
