// The per-thread arithmetic of the epoch kernels (gpu-opt and its variations; epoch_hist.cuh), host and
// device alike so the tests replay it on the CPU.
//
// Why these kernels look the way they do (Nsight Compute, H100, 2048^2 uniform):
// gpu-run-merge issued 1.32 warp instructions per pair (42 per pair per thread) at an IPC of 2.66
// of 4: issue-bound, not memory-bound (DRAM 10 %, L2 16 %). Everything here removes instructions
// per pair:
// - the labels are copied once into rows of a 16-byte pitch, so a thread's item of 16 consecutive
//   pairs reads its first labels with one aligned 16-byte load and its partners with five 4-byte
//   loads and four funnel shifts, whatever the lag and the image width;
// - one byte permute makes the bins of two pairs (bin = a * 256 + b in each 16-bit half), and the
//   16-bit counter of a bin is the low half of word (bin & 0x7FFF) for a < 128, the high half for
//   a >= 128: the word and its increment come from bit operations on the bin, no multiply;
// - the 16-bit counters are kept exact by epochs instead of a check after every atomic: a block
//   counts at most kEpochThreads * items_per_epoch * 16 pairs between two barriers, then every
//   counter at or above the flush level L is moved to the global histogram (one vectorised scan of
//   the shared words); so every counter is below L at each epoch's start and below
//   L + epoch pairs <= 65536 at its end. The atomics need no return value and no branch.
#pragma once
#include <cstdint>

#include "ami/auto_mi/nmi_core.hpp"
#include "core/hd.hpp"

namespace repix::ami::auto_mi::epoch {

constexpr int kThreads = 1024;       // one block per SM: the 128 KiB histogram
constexpr int kItemPairs = 16;       // pairs per item: 16 first labels = one aligned 16-byte load
constexpr int kWords = 32768;        // 256 x 256 16-bit counters, two per 32-bit word
constexpr std::uint32_t kDefaultLevel = 16384;
constexpr std::int64_t kMaxChunkItems = std::int64_t(1) << 20;  // 16 Mi pairs per block at most

// Items a thread counts per epoch at flush level `level` (1 .. 49152): the largest n with
// level + kThreads * n * kItemPairs <= 65536 (3 at the default level, 1 at 49152).
REPIX_HD int items_per_epoch(std::uint32_t level) {
  return static_cast<int>((65536u - level) / (kThreads * kItemPairs));
}

// Row pitch of the labels copy: a multiple of 16 bytes with room for a partner read that starts
// at most 15 + 3 bytes past the row's last pair (the five 4-byte words of a misaligned item).
REPIX_HD std::int64_t pitch_of(std::int64_t w) { return (w + 32 + 15) / 16 * 16; }

// The bins of two pairs from the first labels `f` and partner labels `b` (4 each, little
// endian): pairs 2t and 2t + 1 of the word for t = 0 (selector 0x5140) or t = 1 (0x7362); pair
// 2t in the low 16 bits (a * 256 + b), pair 2t + 1 in the high 16 bits.
REPIX_HD std::uint32_t two_bins(std::uint32_t f, std::uint32_t b, int t) {
#ifdef __CUDA_ARCH__
  return __byte_perm(b, f, t == 0 ? 0x5140 : 0x7362);
#else
  const int lo = 2 * t, hi = 2 * t + 1;
  auto byte = [](std::uint32_t v, int i) { return (v >> (8 * i)) & 0xFFu; };
  return byte(b, lo) | byte(f, lo) << 8 | byte(b, hi) << 16 | byte(f, hi) << 24;
#endif
}

// The shared word of a 16-bit bin (only its low 16 bits are read) and the increment of its
// counter there: 1 in the low half for a < 128, 1 << 16 in the high half for a >= 128.
REPIX_HD std::uint32_t word_of(std::uint32_t bin16) { return bin16 & 0x7FFFu; }
REPIX_HD std::uint32_t unit_of(std::uint32_t bin16) { return 1u << ((bin16 >> 11) & 16u); }
// The global histogram index (a * 256 + b) of the low / high counter of shared word `word`.
REPIX_HD std::uint32_t bin_of_half(std::uint32_t word, int high) { return word | (high ? 0x8000u : 0u); }

// The partner word j (0..3) of an item whose partner labels start `mis` (0..3) bytes into the
// 4-byte word w[0]: bytes mis .. mis + 3 of (w[j], w[j + 1]).
REPIX_HD std::uint32_t partner_word(std::uint32_t lo, std::uint32_t hi, unsigned mis) {
#ifdef __CUDA_ARCH__
  return __funnelshift_r(lo, hi, 8 * mis);
#else
  return mis == 0 ? lo : (lo >> (8 * mis)) | (hi << (32 - 8 * mis));
#endif
}

// A thread's walk over the items of one lag's overlap (rows x segs items, item q = row q / segs,
// segment x = q % segs): GridCursor in 32-bit (an image below 2^32 pixels has fewer than 2^32
// items per lag).
using ItemCursor = GridCursor<std::uint32_t>;

// The chunks each lag of a batch is cut into: enough for one item range of at most kMaxChunkItems
// per block, and for at least 4 blocks per SM over the batch (few lags: split each more).
REPIX_HD std::int64_t chunks_per_lag(std::int64_t most_items, std::int64_t lags, int sms) {
  std::int64_t c = (most_items + kMaxChunkItems - 1) / kMaxChunkItems;
  const std::int64_t want = (4 * std::int64_t(sms) + lags - 1) / lags;
  if (c < want) c = want;
  if (c > most_items) c = most_items;
  return c < 1 ? 1 : c;
}
// Items [begin, end) of chunk c of `chunks` of a lag with `items` items (even split).
REPIX_HD std::int64_t chunk_begin(std::int64_t items, std::int64_t chunks, std::int64_t c) { return items * c / chunks; }

}  // namespace repix::ami::auto_mi::epoch
