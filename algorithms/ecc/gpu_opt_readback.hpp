// gpu-opt's read-back, as the finishing kernels leave it in pinned host memory (gpu_opt_engine.cu:
// finish_hash_kernel, finish_bins_kernel), and the curves the host makes of it. Host code only, in
// a header of its own so that the CPU tests (tests/ecc/test_ecc_opt_readback.cpp) check exactly
// what every GPU call runs after its one synchronisation.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <vector>

#include "core/float_bits.hpp"
#include "ecc/ecc.hpp"

namespace repix::ecc::opt {

// The integer read-back is cut in segments of kSegmentBins values, one a finishing block.
constexpr int kSegmentBins = 1024;

// The integer path's layout: a count a segment (uint32), then the segments' value areas (kSegmentBins
// uint32 a segment) and VCEC areas (kSegmentBins int64 a segment). A segment is written in one of
// two forms, which bit 31 of its count word (kDenseSegment) tells apart; bits 0-30 are its number of
// occurring values either way.
// - sparse: its occurring values ascending in its value area, their VCECs (int64) in its VCEC area;
// - dense: a bitmap of its occurring values in the first kSegmentBins / 32 words of its value area
//   (bit v % 32 of word v / 32, v counted from the segment's first value) and the int32 VCEC of
//   every one of its values, occurring or not (0), in the first 4 KiB of its VCEC area.
// The finishing kernel writes a segment dense when kDenseFrom or more of its values occur and every
// VCEC fits int32: 4.1 KiB instead of 12 bytes a value. A 2048^2 uint16 image of 65536 levels
// wrote 768 KiB of sparse entries over PCIe and the host read them back from memory the GPU wrote,
// uncached (59-66 us to make the curve). On the H100, same calls:
// finish_bins_kernel 18.8 -> 10.2-10.6 us (Nsight Compute), that image's
// kernel scope 0.078 -> 0.069 ms, end to end 0.361 -> 0.319 by the median of two rounds (+1.8 %
// against the one round of the sparse form that no episode hit).
constexpr std::uint32_t kDenseSegment = 0x80000000u;
constexpr std::uint32_t kDenseFrom = (kSegmentBins / 32 * 4 + kSegmentBins * 4) / 12 + 1;  // 353: dense is smaller
struct BinsLayout {
  std::size_t segments = 0, values_at = 0, vcec_at = 0, bytes = 0;
  explicit BinsLayout(std::size_t nbins) {
    segments = (nbins + kSegmentBins - 1) / kSegmentBins;
    values_at = (segments * sizeof(std::uint32_t) + 7) / 8 * 8;
    vcec_at = values_at + segments * kSegmentBins * sizeof(std::uint32_t);
    bytes = vcec_at + segments * kSegmentBins * sizeof(long long);
  }
};

// A segment's running sums as a forward iterator (curve_from_segments): `before` is the sum of the
// entries ahead of `p` (int64 VCECs of a sparse segment, int32 of a dense one).
template <class V>
struct RunningSumOf {
  using iterator_category = std::forward_iterator_tag;
  using value_type = std::int64_t;
  using difference_type = std::ptrdiff_t;
  using pointer = const std::int64_t*;
  using reference = std::int64_t;
  const V* p = nullptr;
  std::int64_t before = 0;
  std::int64_t operator*() const { return before + *p; }
  RunningSumOf& operator++() {
    before += *p;
    ++p;
    return *this;
  }
  RunningSumOf operator++(int) {
    RunningSumOf old = *this;
    ++*this;
    return old;
  }
  bool operator==(const RunningSumOf& o) const { return p == o.p; }
  bool operator!=(const RunningSumOf& o) const { return p != o.p; }
};
using RunningSum = RunningSumOf<long long>;

// The values first, first + 1, ... as floats, a forward iterator: a dense segment whose every value
// occurs (uniform data) goes into the curve by range inserts, as a sparse one does.
struct ValueCount {
  using iterator_category = std::forward_iterator_tag;
  using value_type = float;
  using difference_type = std::ptrdiff_t;
  using pointer = const float*;
  using reference = float;
  std::uint32_t v = 0;
  float operator*() const { return static_cast<float>(v); }
  ValueCount& operator++() {
    ++v;
    return *this;
  }
  ValueCount operator++(int) {
    ValueCount old = *this;
    ++v;
    return old;
  }
  bool operator==(const ValueCount& o) const { return v == o.v; }
  bool operator!=(const ValueCount& o) const { return v != o.v; }
};

// The curve of the occurring values, in value order (segment by segment, ascending inside one):
// a value that does not occur has VCEC 0 (a voxel's change goes to its own value), so the running
// sum over the entries is the curve. Made straight from the pinned read-back (a uint16 image's
// 65536 bins went through three 65536-entry vectors, ~0.3 ms of page faults a call on the GPU
// host), each vector reserved once and filled by range inserts (sparse segments) or appends
// (dense), so that nothing is zeroed first and every entry is written once: 65536 values 148-195
// us with two push_backs an entry, 85-88 us (least) sized with resize() and written through
// pointers (102 us inside the end-to-end call on the GPU host),
// 37 us so (least of 201 calls, three runs, this
// project's build machine).
inline Curve curve_from_segments(const unsigned char* base, const BinsLayout& lay) {
  const auto* counts = reinterpret_cast<const std::uint32_t*>(base);
  const auto* values = reinterpret_cast<const std::uint32_t*>(base + lay.values_at);
  const auto* vcec = reinterpret_cast<const long long*>(base + lay.vcec_at);
  std::size_t n = 0;
  for (std::size_t s = 0; s < lay.segments; ++s) n += counts[s] & ~kDenseSegment;
  Curve c;
  c.values.reserve(n);
  c.ecc.reserve(n);
  std::int64_t acc = 0;
  for (std::size_t s = 0; s < lay.segments; ++s) {
    const std::uint32_t word = counts[s], m = word & ~kDenseSegment;
    if (m == 0) continue;
    const std::uint32_t* seg_values = values + s * kSegmentBins;
    const long long* seg_vcec = vcec + s * kSegmentBins;
    if (word & kDenseSegment) {
      const auto first = static_cast<std::uint32_t>(s * kSegmentBins);
      const auto* dense_vcec = reinterpret_cast<const std::int32_t*>(seg_vcec);  // written as int32 by the GPU
      if (m == static_cast<std::uint32_t>(kSegmentBins)) {  // every value occurs
        c.values.insert(c.values.end(), ValueCount{first}, ValueCount{first + kSegmentBins});
        c.ecc.insert(c.ecc.end(), RunningSumOf<std::int32_t>{dense_vcec, acc},
                     RunningSumOf<std::int32_t>{dense_vcec + kSegmentBins, 0});
        acc = c.ecc.back();
        continue;
      }
      // Decoded into arrays on the stack, then appended by range inserts: a push_back an entry
      // (its capacity check and end pointer kept in memory) took ~3 ns, 196 us for 65536 values
      // inside the end-to-end call on the GPU host.
      float seg_curve_values[kSegmentBins];
      std::int64_t seg_curve[kSegmentBins];
      int k = 0;
      auto append = [&](int j) {  // value first + j occurs
        acc += dense_vcec[j];
        seg_curve_values[k] = static_cast<float>(first + static_cast<std::uint32_t>(j));
        seg_curve[k++] = acc;
      };
      for (int w = 0; w < kSegmentBins / 32; ++w) {
        const std::uint32_t bits = seg_values[w];
        if (bits == ~0u) {  // every value of the word occurs (uniform data): no bit scan
          for (int j = w * 32; j < w * 32 + 32; ++j) append(j);
        } else {
          for (std::uint32_t b = bits; b != 0; b &= b - 1) append(w * 32 + __builtin_ctz(b));
        }
      }
      c.values.insert(c.values.end(), seg_curve_values, seg_curve_values + k);
      c.ecc.insert(c.ecc.end(), seg_curve, seg_curve + k);
      continue;
    }
    c.values.insert(c.values.end(), seg_values, seg_values + m);  // uint32 -> float
    c.ecc.insert(c.ecc.end(), RunningSum{seg_vcec, acc}, RunningSum{seg_vcec + m, 0});
    acc = c.ecc.back();
  }
  return c;
}

// Sorts `words` by their upper 32 bits, stably, least significant digit first in ceil(32 /
// kDigitBits) passes (every digit's counts from one read of the words); `scratch` has words.size()
// entries.
template <int kDigitBits>
void radix_sort_upper32(std::vector<std::uint64_t>& words, std::vector<std::uint64_t>& scratch) {
  constexpr int kDigits = 1 << kDigitBits, kPasses = (32 + kDigitBits - 1) / kDigitBits;
  std::vector<std::uint32_t> start(static_cast<std::size_t>(kPasses) * kDigits, 0u);  // then a digit's next position
  for (const std::uint64_t w : words)
    for (int pass = 0; pass < kPasses; ++pass)
      ++start[pass * kDigits + ((w >> (32 + kDigitBits * pass)) & (kDigits - 1))];
  for (int pass = 0; pass < kPasses; ++pass) {
    std::uint32_t sum = 0;
    for (int d = 0; d < kDigits; ++d) {
      const std::uint32_t count = start[pass * kDigits + d];
      start[pass * kDigits + d] = sum;
      sum += count;
    }
  }
  for (int pass = 0; pass < kPasses; ++pass) {
    const int shift = 32 + kDigitBits * pass;
    std::uint32_t* next = start.data() + pass * kDigits;
    for (const std::uint64_t w : words) scratch[next[(w >> shift) & (kDigits - 1)]++] = w;
    words.swap(scratch);
  }
}

// The sort curve_from_pairs uses for n pairs: std::sort up to kSortPairsMax, a radix sort of 8-bit
// digits up to kRadix8PairsMax, of 11-bit digits beyond. Why not std::sort throughout: its
// comparisons' branches mispredict unless the same input order comes again. The GPU table's
// compaction order changes from call to call, and on the GPU host's CPU the curve of a GRF
// 2048^2 image (664 pairs) took 41 us in the end-to-end path (its timeline's host_curve_work_us)
// against 8 us in a loop over one fixed order. On
// this project's build machine, a fresh order of the same pairs each call (a probe, not kept):
// std::sort 2.1 / 11.3 / 33 / 57 / 116 / 261 us at 64 / 256 / 664 / 1024 / 2000 / 4096 pairs,
// 8-bit radix 1.6 / 3.6 / 9.3 / 13.7 / 18.9 / 52.5, 11-bit radix 4.1 / 6.7 / 10.4 / 18.0 / 17.3 /
// 52.5; at 8 / 32 pairs std::sort 0.23 / 1.1 against 1.0 / 1.2.
constexpr std::size_t kSortPairsMax = 32, kRadix8PairsMax = 1024;

// The curve of the float path's (key, VCEC) pairs (keys are canonical float bits, distinct, in
// table order). The sort is on the host, in the end-to-end path's tail: each pair's
// order-preserving key and index packed in one 64-bit word sort as plain integers (a comparator
// that reads both keys took 1.5-2x as long). n < 2^32 (the table holds at most 2^21).
inline Curve curve_from_pairs(const std::uint32_t* k, const long long* v, std::size_t n) {
  std::vector<std::uint64_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = (static_cast<std::uint64_t>(ordered_key(k[i])) << 32) | i;
  if (n <= kSortPairsMax) {
    std::sort(order.begin(), order.end());
  } else {
    std::vector<std::uint64_t> scratch(n);
    if (n <= kRadix8PairsMax) {
      radix_sort_upper32<8>(order, scratch);
    } else {
      radix_sort_upper32<11>(order, scratch);
    }
  }
  Curve c;
  std::int64_t acc = 0;
  c.values.resize(n);
  c.ecc.resize(n);
  for (std::size_t j = 0; j < n; ++j) {
    const std::size_t i = static_cast<std::size_t>(order[j] & 0xFFFFFFFFu);
    acc += v[i];
    c.values[j] = float_from_bits(k[i]);
    c.ecc[j] = acc;
  }
  return c;
}

}  // namespace repix::ecc::opt
