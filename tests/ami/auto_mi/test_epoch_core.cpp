// The epoch kernels' per-thread arithmetic (epoch_core.hpp) replayed on the CPU: the pitched
// copy, the item walk of a block's threads, the partner words' funnel shifts, the byte-permuted
// bins and their shared words/halves must count every lag's pairs exactly as a direct histogram;
// the chunks cover each lag once; an epoch never lets a 16-bit counter pass 65535.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "ami/auto_mi/epoch_core.hpp"
#include "ami/auto_mi/nmi_core.hpp"

namespace repix {
namespace {

namespace am = ami::auto_mi;
namespace ep = ami::auto_mi::epoch;

std::uint32_t load_word(const std::vector<std::uint8_t>& bytes, std::int64_t at) {
  std::uint32_t v;
  std::memcpy(&v, bytes.data() + at, 4);  // little endian, as the GPU reads it
  return v;
}

// One lag's histogram as the kernel builds it: chunks of items, each walked by `threads`
// simulated threads with ItemCursor, 16 pairs per item through two_bins / partner_word, counted
// into 32768 words of two 16-bit halves (kept here as separate 64-bit totals per half).
std::vector<std::uint64_t> kernel_histogram(const std::vector<std::uint8_t>& img, std::int64_t h, std::int64_t w,
                                            int dir, std::int64_t lag, std::int64_t chunks, std::uint32_t threads) {
  const std::int64_t pitch = ep::pitch_of(w);
  std::vector<std::uint8_t> rows(static_cast<std::size_t>(h * pitch), 0xAB);  // padding: garbage, masked
  for (std::int64_t y = 0; y < h; ++y) std::memcpy(rows.data() + y * pitch, img.data() + y * w, w);
  const am::LagGeometry g = am::lag_geometry(h, w, dir, lag);
  const std::uint32_t segs = static_cast<std::uint32_t>((g.cols + ep::kItemPairs - 1) / ep::kItemPairs);
  const std::int64_t items = g.rows * segs;
  const std::int64_t off = dir == am::kHorizontal ? lag : lag * pitch;
  const unsigned mis = static_cast<unsigned>(off & 3);
  std::vector<std::uint64_t> lo(ep::kWords), hi(ep::kWords);
  for (std::int64_t c = 0; c < chunks; ++c) {
    const std::int64_t begin = ep::chunk_begin(items, chunks, c), end = ep::chunk_begin(items, chunks, c + 1);
    for (std::uint32_t t = 0; t < threads && begin + t < end; ++t) {
      ep::ItemCursor cur(static_cast<std::uint32_t>(begin + t), segs, threads);
      for (std::int64_t q = begin + t; q < end; q += threads, cur.advance()) {
        EXPECT_EQ(cur.y, static_cast<std::uint32_t>(q / segs));
        EXPECT_EQ(cur.x, static_cast<std::uint32_t>(q % segs));
        const std::int64_t first = std::int64_t(cur.y) * pitch + std::int64_t(cur.x) * ep::kItemPairs;
        EXPECT_EQ(first % 16, 0) << "the first labels' 16-byte load must be aligned";
        const std::int64_t pw = first + off - mis;
        EXPECT_EQ(pw % 4, 0);
        EXPECT_LE(pw + 20, static_cast<std::int64_t>(rows.size())) << "partner words past the copy";
        const std::uint32_t n = std::min<std::uint32_t>(ep::kItemPairs, static_cast<std::uint32_t>(g.cols) - cur.x * ep::kItemPairs);
        for (int j = 0; j < 4; ++j) {
          const std::uint32_t f = load_word(rows, first + 4 * j);
          const std::uint32_t pb = ep::partner_word(load_word(rows, pw + 4 * j), load_word(rows, pw + 4 * j + 4), mis);
          for (int tt = 0; tt < 2; ++tt) {
            const std::uint32_t two = ep::two_bins(f, pb, tt);
            for (int half = 0; half < 2; ++half) {
              if (4u * j + 2u * tt + half >= n) continue;
              const std::uint32_t bin16 = half ? two >> 16 : two & 0xFFFFu;
              const std::uint32_t unit = ep::unit_of(bin16);
              EXPECT_TRUE(unit == 1u || unit == 1u << 16);
              (unit == 1u ? lo : hi)[ep::word_of(bin16)] += 1;
            }
          }
        }
      }
    }
  }
  std::vector<std::uint64_t> hist(256 * 256);
  for (std::uint32_t word = 0; word < ep::kWords; ++word) {
    hist[ep::bin_of_half(word, 0)] += lo[word];
    hist[ep::bin_of_half(word, 1)] += hi[word];
  }
  return hist;
}

std::vector<std::uint64_t> direct_histogram(const std::vector<std::uint8_t>& img, std::int64_t h, std::int64_t w,
                                            int dir, std::int64_t lag) {
  std::vector<std::uint64_t> hist(256 * 256);
  const am::LagGeometry g = am::lag_geometry(h, w, dir, lag);
  for (std::int64_t y = 0; y < g.rows; ++y)
    for (std::int64_t x = 0; x < g.cols; ++x) {
      const std::int64_t p = y * w + x;
      ++hist[img[p] * 256u + img[p + g.offset]];
    }
  return hist;
}

TEST(AutoMiEpochCore, ItemWalkCountsEveryLagExactly) {
  std::mt19937 rng(2024);
  struct Shape { std::int64_t h, w; };
  for (const Shape s : {Shape{1, 2}, Shape{2, 1}, Shape{3, 17}, Shape{5, 16}, Shape{7, 33}, Shape{19, 40}, Shape{4, 71}}) {
    std::vector<std::uint8_t> img(static_cast<std::size_t>(s.h * s.w));
    for (auto& v : img) v = static_cast<std::uint8_t>(rng());  // every byte value: both counter halves
    for (int dir : {am::kHorizontal, am::kVertical})
      for (std::int64_t lag = 1; lag <= am::lag_count(s.h, s.w, dir); ++lag)
        for (std::int64_t chunks : {std::int64_t(1), std::int64_t(3)})
          for (std::uint32_t threads : {1u, 5u, 64u}) {
            const std::string what = std::to_string(s.h) + "x" + std::to_string(s.w) + " dir " + std::to_string(dir) +
                                     " lag " + std::to_string(lag) + " chunks " + std::to_string(chunks) +
                                     " threads " + std::to_string(threads);
            ASSERT_EQ(kernel_histogram(img, s.h, s.w, dir, lag, chunks, threads), direct_histogram(img, s.h, s.w, dir, lag))
                << what;
          }
  }
}

TEST(AutoMiEpochCore, BinsWordsAndHalvesCoverEveryLabelPairOnce) {
  std::vector<int> seen(256 * 256, 0);
  for (std::uint32_t a = 0; a < 256; ++a)
    for (std::uint32_t b = 0; b < 256; ++b) {
      const std::uint32_t two = ep::two_bins(a * 0x01010101u, b * 0x01010101u, 1);
      ASSERT_EQ(two & 0xFFFFu, a * 256 + b);
      ASSERT_EQ(two >> 16, a * 256 + b);
      const std::uint32_t bin = two & 0xFFFFu;
      ++seen[ep::bin_of_half(ep::word_of(bin), ep::unit_of(bin) != 1u)];
      ASSERT_EQ(ep::bin_of_half(ep::word_of(bin), ep::unit_of(bin) != 1u), a * 256 + b);
    }
  for (int s : seen) ASSERT_EQ(s, 1);
}

TEST(AutoMiEpochCore, AnEpochNeverOverflowsASixteenBitCounter) {
  for (std::uint32_t level : {1u, 2u, 1000u, 16384u, 32768u, 40000u, 49152u}) {
    const int n = ep::items_per_epoch(level);
    ASSERT_GE(n, 1) << level;
    const std::uint64_t pairs = std::uint64_t(ep::kThreads) * n * ep::kItemPairs;
    EXPECT_LE(level - 1 + pairs, 65535u) << "a counter below the level plus one epoch must fit 16 bits, level " << level;
    EXPECT_GT(level - 1 + pairs + std::uint64_t(ep::kThreads) * ep::kItemPairs, 65535u) << "the largest epoch, level " << level;
  }
  EXPECT_EQ(ep::items_per_epoch(ep::kDefaultLevel), 3);
  EXPECT_LE(std::int64_t(am::kMaxFlushLevel), 65536 - ep::kThreads * ep::kItemPairs);
}

TEST(AutoMiEpochCore, ChunksCoverEachLagOnce) {
  for (std::int64_t items : {1, 2, 7, 1000, 1 << 21})
    for (std::int64_t lags : {1, 5, 4096})
      for (int sms : {1, 132}) {
        const std::int64_t c = ep::chunks_per_lag(items, lags, sms);
        ASSERT_GE(c, 1);
        ASSERT_LE(c, items);
        EXPECT_LE((items + c - 1) / c, ep::kMaxChunkItems);
        if (items >= 4 * sms) EXPECT_GE(c * lags, std::min<std::int64_t>(4 * sms, items * lags));
        std::int64_t covered = 0;
        for (std::int64_t k = 0; k < c; ++k) {
          const std::int64_t b = ep::chunk_begin(items, c, k), e = ep::chunk_begin(items, c, k + 1);
          ASSERT_LE(b, e);
          covered += e - b;
        }
        EXPECT_EQ(covered, items);
        EXPECT_EQ(ep::chunk_begin(items, c, c), items);
      }
}

}  // namespace
}  // namespace repix
