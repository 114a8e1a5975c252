// The per-lag pieces every auto-mi variant shares, host and device (REPIX_HD), so that the CPU
// tests exercise the exact code the GPU threads run:
//   - which pairs a lag's overlap holds (LagGeometry),
//   - the entropy terms and the NMI in one canonical summation order, so that every variant's
//     per-lag NMI comes out of the same arithmetic from the same exact integer counts,
//   - the bookkeeping of the 16-bit shared-memory counters of gpu-shared-hist / gpu-opt.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "core/hd.hpp"

namespace repix::ami::auto_mi {

// Directions, in output order.
constexpr int kHorizontal = 0;
constexpr int kVertical = 1;

// The overlap of one lag on an h x w image (row-major, x fastest): pairs (p, p + offset) for
// p = y * w + x, y < rows, x < cols. Horizontal lag i: rows h, cols w - i, offset i; vertical:
// rows h - i, cols w, offset i * w.
struct LagGeometry {
  std::int64_t rows = 0, cols = 0, offset = 0;
  REPIX_HD std::int64_t pairs() const { return rows * cols; }
  // The first element of pair e (0 <= e < pairs()), pairs counted row by row.
  REPIX_HD std::int64_t first(std::int64_t e, std::int64_t w) const { return (e / cols) * w + e % cols; }
};

REPIX_HD LagGeometry lag_geometry(std::int64_t h, std::int64_t w, int direction, std::int64_t lag) {
  LagGeometry g;
  if (direction == kHorizontal) {
    g.rows = h;
    g.cols = w - lag;
    g.offset = lag;
  } else {
    g.rows = h - lag;
    g.cols = w;
    g.offset = lag * w;
  }
  return g;
}

// Walks items e, e + step, e + 2 step, ... of a grid `cols` wide as (y, x) without a division
// per step (a GPU thread's grid-stride loop over its lag's pairs, or over the epoch kernels'
// 16-pair items in 32-bit: epoch_core.hpp).
template <class I>
struct GridCursor {
  I y, x, cols, step_y, step_x;
  REPIX_HD GridCursor(I e, I cols_, I step)
      : y(e / cols_), x(e % cols_), cols(cols_), step_y(step / cols_), step_x(step % cols_) {}
  REPIX_HD void advance() {
    x += step_x;
    y += step_y;
    if (x >= cols) {
      x -= cols;
      ++y;
    }
  }
  REPIX_HD I first(I w) const { return y * w + x; }
};
using PairCursor = GridCursor<std::int64_t>;

// Lags of a direction: 1 .. w-1 (horizontal) or 1 .. h-1 (vertical); none on a 1-wide side.
REPIX_HD std::int64_t lag_count(std::int64_t h, std::int64_t w, int direction) {
  const std::int64_t side = direction == kHorizontal ? w : h;
  return side > 1 ? side - 1 : 0;
}

// Pairs of the lags before `lag` (1-based) of a direction, and of all of them: pairs(lag j) =
// other * (side - j), summed in closed form.
REPIX_HD std::int64_t pairs_before_lag(std::int64_t h, std::int64_t w, int direction, std::int64_t lag) {
  const std::int64_t side = direction == kHorizontal ? w : h, other = direction == kHorizontal ? h : w;
  return other * ((lag - 1) * side - (lag - 1) * lag / 2);
}
// multi-device: the part (0 .. parts-1) that counts `lag`: floor(pairs before it * parts / all
// pairs). Monotone in the lag, so each part is a contiguous range of lags with about 1/parts of
// the pairs (lag pair counts fall linearly, so equal lag counts would not balance).
REPIX_HD int lag_part(std::int64_t h, std::int64_t w, int direction, std::int64_t lag, int parts) {
  const std::int64_t all = pairs_before_lag(h, w, direction, lag_count(h, w, direction) + 1);
  return all == 0 ? 0 : static_cast<int>(pairs_before_lag(h, w, direction, lag) * parts / all);
}
// The lags of part `part` of a direction: [*first, *last] (1-based; none where *first > *last).
inline void lag_range(std::int64_t h, std::int64_t w, int direction, int part, int parts, std::int64_t* first,
                      std::int64_t* last) {
  const std::int64_t lags = lag_count(h, w, direction);
  *first = 1;
  *last = lags;
  while (*first <= lags && lag_part(h, w, direction, *first, parts) < part) ++*first;
  while (*last >= *first && lag_part(h, w, direction, *last, parts) > part) --*last;
}

// Rounded double + and x, never fused into an FMA on the device (nvcc contracts a * b + c by
// default, the host compiler for x86-64 does not): the same expression gives the same bits on
// both sides, up to log1p's own last-ulp differences.
REPIX_HD double add_rn(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
REPIX_HD double mul_rn(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

// One bin's share of n times an entropy: c log(n / c) (0 for c = 0), written as
// c * log1p((n - c) / c) with n - c exact in integers: no cancellation when c is close to n
// (a near-constant overlap, whose entropy is tiny), and every term is >= 0, so a sum of terms
// has a small relative error whatever its length. Natural log (the base cancels in the NMI).
REPIX_HD double entropy_term(std::uint64_t c, std::uint64_t n) {
  if (c == 0) return 0.0;
  return mul_rn(static_cast<double>(c), log1p(static_cast<double>(n - c) / static_cast<double>(c)));
}

// NMI = I / sqrt(H(X) H(Y)) with I = H(X) + H(Y) - H(X,Y); with S = n H for each entropy the n
// cancels: (Sx + Sy - Sxy) / sqrt(Sx Sy). 0 when X or Y takes a single value in the overlap
// (decided from the counts: distinct_x, distinct_y), which also covers an empty overlap.
REPIX_HD double nmi_from_sums(double sx, double sy, double sxy, int distinct_x, int distinct_y) {
  if (distinct_x <= 1 || distinct_y <= 1) return 0.0;
  return (add_rn(sx, sy) - sxy) / sqrt(mul_rn(sx, sy));
}

// The canonical order, shared by every variant: for a k x k joint histogram c[a][b] of n pairs,
//   col_terms[b] = sum over a = 0, 1, .. of entropy_term(c[a][b], n)   (a ascending; zero bins add
//                   nothing, so skipping them keeps the order)
//   Sxy = sum over b ascending of col_terms[b], Sx and Sy over the row and column counts
//   ascending. The caller fills col_terms, col_counts (the marginal of Y) and row_counts (of X).
REPIX_HD double nmi_from_columns(const double* col_terms, const std::uint64_t* col_counts,
                                 const std::uint64_t* row_counts, int k, std::uint64_t n) {
  double sxy = 0, sx = 0, sy = 0;
  int dx = 0, dy = 0;
  for (int b = 0; b < k; ++b) sxy = add_rn(sxy, col_terms[b]);
  for (int a = 0; a < k; ++a)
    if (row_counts[a] != 0) {
      sx = add_rn(sx, entropy_term(row_counts[a], n));
      ++dx;
    }
  for (int b = 0; b < k; ++b)
    if (col_counts[b] != 0) {
      sy = add_rn(sy, entropy_term(col_counts[b], n));
      ++dy;
    }
  return nmi_from_sums(sx, sy, sxy, dx, dy);
}

// ---- 16-bit shared-memory counters (gpu-shared-hist, gpu-opt) ------------------------------------
// A 256 x 256 (257 x 257 with label 256) histogram of 32-bit counters needs 256 KiB, more than a
// block's shared memory (227 KiB on Hopper); 16-bit counters need 128 KiB (129 KiB). Two counters
// share one 32-bit word and are incremented with a 32-bit atomicAdd of k << shift, so a counter
// must never pass 65535 (its carry would corrupt its neighbour). The block counts in rounds of at
// most `round_pairs` pairs between __syncthreads; a counter whose add takes it to or past the
// flush level L (first reaching it: old < L <= old + k, seen by exactly one thread) is put on the
// round's hot list, and after the round's barrier the hot counters are moved to the global
// histogram and zeroed. So at every round start every counter is below L, and within a round it
// grows by at most round_pairs: L + round_pairs <= 65536 keeps it exact. A tiny L (the tests'
// forced flush) moves nearly every counter every round, still exactly.
struct PackedSlot {
  std::uint32_t word;   // index of the 32-bit word
  std::uint32_t shift;  // 0 (low half) or 16
};
REPIX_HD PackedSlot packed_slot(std::uint32_t bin) { return {bin >> 1, (bin & 1u) * 16u}; }
REPIX_HD std::uint32_t packed_count(std::uint32_t word, std::uint32_t shift) { return (word >> shift) & 0xFFFFu; }
// Whether the add of k to the counter whose word read `old_word` before the add makes it reach
// the flush level for the first time since it was last moved out.
REPIX_HD bool reaches_flush_level(std::uint32_t old_word, std::uint32_t shift, std::uint32_t k,
                                  std::uint32_t level) {
  const std::uint32_t old = packed_count(old_word, shift);
  return old < level && old + k >= level;
}

// Pairs one block counts between two barriers (threads x pairs per thread), and the largest flush
// level that keeps 16-bit counters exact with it.
constexpr int kSharedHistThreads = 1024;
constexpr int kSharedHistPairsPerThread = 16;
constexpr std::uint32_t kSharedRoundPairs = kSharedHistThreads * kSharedHistPairsPerThread;  // 16384
constexpr std::uint32_t kMaxFlushLevel = 65536u - kSharedRoundPairs;                          // 49152
// Hot counters one round can list; more send the block through a scan of every word instead.
constexpr int kHotCapacity = 1024;
// 32-bit words of a k x k histogram of 16-bit counters.
REPIX_HD std::size_t shared_hist_words(int k) { return (static_cast<std::size_t>(k) * k + 1) / 2; }


// ---- gpu-opt's walk: runs of consecutive pairs -------------------------------------------------
// A thread takes kRunPairs consecutive pairs of one overlap row (an "item": row y, segment s,
// x = s * kRunPairs ..) and adds each run of equal bins once with its length: smooth images,
// whose neighbours repeat, need few shared atomics; i.i.d. ones cost one compare more per pair.
constexpr int kRunPairs = 8;
REPIX_HD std::int64_t run_segments(std::int64_t cols) { return (cols + kRunPairs - 1) / kRunPairs; }
// A run of equal bins.
struct Run {
  std::uint32_t bin;
  std::uint32_t length;
};
// The bins bin_of(0) .. bin_of(n-1) of n consecutive pairs, 1 <= n <= kRunPairs, as runs of
// equal bins: add(bin, run length) for every run but the last, which is returned (gpu-opt adds it
// aggregated over the warp when the whole warp ends on the same bin: a smooth region).
template <class BinOf, class Add>
REPIX_HD Run add_runs(int n, BinOf bin_of, Add add) {
  Run r{bin_of(0), 1};
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
  for (int j = 1; j < kRunPairs; ++j) {
    if (j < n) {
      const std::uint32_t bin = bin_of(j);
      if (bin == r.bin) {
        ++r.length;
      } else {
        add(r.bin, r.length);
        r = {bin, 1};
      }
    }
  }
  return r;
}

// gpu-opt's aligned uint8 path: 8 labels as one little-endian 64-bit word. The 8 bytes starting
// `mis` (0..7) bytes into the aligned word `lo`, continuing into the next aligned word `hi`.
REPIX_HD std::uint64_t unaligned_word(std::uint64_t lo, std::uint64_t hi, unsigned mis) {
  return mis == 0 ? lo : (lo >> (8 * mis)) | (hi << (64 - 8 * mis));
}
// Byte j of a word of 8 labels.
REPIX_HD std::uint32_t byte_of(std::uint64_t word, int j) { return static_cast<std::uint32_t>(word >> (8 * j)) & 0xFFu; }

}  // namespace repix::ami::auto_mi
