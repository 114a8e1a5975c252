// Every CPU auto-mi variant against seq (one test per variant id: AutoMiCpuVariant.*/<id>), and
// the per-thread cores the GPU kernels run (nmi_core.hpp), on the CPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "ami/auto_mi/auto_mi.hpp"
#include "ami/auto_mi/nmi_core.hpp"
#include "ami/auto_mi/oracle.hpp"
#include "support/variants.hpp"

namespace repix {
namespace {

namespace am = ami::auto_mi;
using namespace test::auto_mi;

class AutoMiCpuVariant : public test::VariantTest {};
REPIX_INSTANTIATE_VARIANTS(AutoMiCpuVariant, test::variant_ids(am::variants(), test::Device::cpu));

TEST_P(AutoMiCpuVariant, MatchesSeqOnSeededImages) {
  const am::Variant& v = am::find_variant(GetParam());
  std::uint32_t seed = 101;
  for (const Case& c : edge_cases()) {
    const HostImage img = random_labels(c.h, c.w, c.levels, seed++);
    const std::string what = v.id + " " + std::to_string(c.h) + "x" + std::to_string(c.w);
    const am::Features want = am::run_seq(img, {});
    for (int threads : {0, 1, 3}) {
      am::Options opt;
      opt.threads = threads;
      const am::Features got = v.run(img, opt);
      expect_equivalent(got, want, what);
      // omp sums the same per-lag values in the same order: equal to the last bit.
      EXPECT_EQ(got.horizontal, want.horizontal) << what;
      EXPECT_EQ(got.vertical, want.vertical) << what;
      EXPECT_EQ(got.stats.pairs, want.stats.pairs) << what;
    }
  }
}

TEST_P(AutoMiCpuVariant, Uint16AndConstantImages) {
  const am::Variant& v = am::find_variant(GetParam());
  const HostImage u16 = random_labels(33, 21, 4, 7, 253, true);
  expect_equivalent(v.run(u16, {}), am::run_seq(u16, {}), v.id + " u16");
  const am::Features c = v.run(labels_of(6, 9, std::vector<int>(54, 3)), {});
  EXPECT_EQ(c.horizontal, 0.0);
  EXPECT_EQ(c.vertical, 0.0);
}

// ---- the cores ---------------------------------------------------------------------------------

TEST(AutoMiCore, LagGeometryListsExactlyTheLagPairs) {
  for (std::int64_t h : {1, 2, 5}) {
    for (std::int64_t w : {1, 3, 8}) {
      for (int dir : {am::kHorizontal, am::kVertical}) {
        EXPECT_EQ(am::lag_count(h, w, dir), std::max<std::int64_t>(0, (dir == am::kHorizontal ? w : h) - 1));
        for (std::int64_t lag = 1; lag <= am::lag_count(h, w, dir); ++lag) {
          const am::LagGeometry g = am::lag_geometry(h, w, dir, lag);
          std::vector<std::pair<std::int64_t, std::int64_t>> got, want;
          for (std::int64_t e = 0; e < g.pairs(); ++e) got.push_back({g.first(e, w), g.first(e, w) + g.offset});
          for (std::int64_t y = 0; y < h; ++y)
            for (std::int64_t x = 0; x < w; ++x) {
              const std::int64_t y2 = dir == am::kVertical ? y + lag : y, x2 = dir == am::kHorizontal ? x + lag : x;
              if (y2 < h && x2 < w) want.push_back({y * w + x, y2 * w + x2});
            }
          EXPECT_EQ(got, want) << h << "x" << w << " dir " << dir << " lag " << lag;
        }
      }
    }
  }
}

TEST(AutoMiCore, LagPartsAreContiguousBalancedAndCoverEveryLag) {
  for (std::int64_t h : {1, 2, 9, 1000}) {
    for (std::int64_t w : {1, 3, 64, 777}) {
      for (int dir : {am::kHorizontal, am::kVertical}) {
        const std::int64_t lags = am::lag_count(h, w, dir);
        std::int64_t all = 0;
        for (std::int64_t lag = 1; lag <= lags; ++lag) {
          ASSERT_EQ(am::pairs_before_lag(h, w, dir, lag), all) << h << "x" << w << " lag " << lag;
          all += am::lag_geometry(h, w, dir, lag).pairs();
        }
        for (int parts : {1, 2, 3, 8}) {
          std::vector<std::int64_t> share(parts, 0);
          int previous = 0;
          for (std::int64_t lag = 1; lag <= lags; ++lag) {
            const int p = am::lag_part(h, w, dir, lag, parts);
            ASSERT_GE(p, previous) << "parts must be contiguous ranges";
            ASSERT_LT(p, parts);
            previous = p;
            share[p] += am::lag_geometry(h, w, dir, lag).pairs();
          }
          if (lags >= 64 * parts) {  // enough lags: every part within one lag's pairs of 1/parts
            for (int p = 0; p < parts; ++p)
              EXPECT_NEAR(static_cast<double>(share[p]), static_cast<double>(all) / parts,
                          static_cast<double>(am::lag_geometry(h, w, dir, 1).pairs()))
                  << h << "x" << w << " part " << p << " of " << parts;
          }
        }
      }
    }
  }
}

TEST(AutoMiCore, PairCursorWalksLikeDivision) {
  for (std::int64_t cols : {1, 2, 7, 256, 1000, 5000}) {
    for (std::int64_t step : {1, 3, 256, 1024}) {
      for (std::int64_t start : {0, 5, 1023}) {
        am::PairCursor c(start, cols, step);
        for (std::int64_t e = start; e < start + 40 * step; e += step, c.advance()) {
          ASSERT_EQ(c.y, e / cols) << cols << " " << step << " " << e;
          ASSERT_EQ(c.x, e % cols) << cols << " " << step << " " << e;
        }
      }
    }
  }
}

TEST(AutoMiCore, EntropyTermsAndSingleValues) {
  EXPECT_EQ(am::entropy_term(0, 10), 0.0);
  EXPECT_EQ(am::entropy_term(10, 10), 0.0);  // one bin holding everything: log(n/n) = 0
  EXPECT_NEAR(am::entropy_term(3, 12), 3 * std::log(4.0), 1e-15);
  // Near-constant overlaps keep their tiny entropy exactly enough (no cancellation).
  const std::uint64_t n = 1ull << 40;
  EXPECT_NEAR(am::entropy_term(n - 1, n) / std::log1p(1.0 / double(n - 1)), double(n - 1), 1e-3);
  // A single value on either side is NMI 0 whatever the sums say.
  EXPECT_EQ(am::nmi_from_sums(1.0, 1.0, 1.0, 1, 5), 0.0);
  EXPECT_EQ(am::nmi_from_sums(1.0, 1.0, 1.0, 5, 1), 0.0);
  EXPECT_DOUBLE_EQ(am::nmi_from_sums(2.0, 2.0, 2.0, 2, 2), 1.0);
}

TEST(AutoMiCore, NmiFromColumnsMatchesOracle) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 20; ++trial) {
    const int k = 2 + trial % 7;
    std::vector<std::pair<int, int>> pairs;
    std::vector<std::uint64_t> hist(k * k, 0);
    std::uniform_int_distribution<int> d(0, k - 1), z(0, 3);
    for (int i = 0; i < 200; ++i) {
      const int a = d(rng), b = z(rng) ? d(rng) : a;  // correlated
      pairs.push_back({a, b});
      ++hist[a * k + b];
    }
    am::NmiScratch s;
    EXPECT_NEAR(am::nmi_of_histogram(hist.data(), k, s), oracle_nmi(pairs), 1e-12) << trial;
  }
}

// gpu-opt's walk, replayed as run_hist_kernel does it: items (row, segment) by a cursor striding
// over the block's threads, each item's pairs through add_runs. Every pair counted once, runs merged.
TEST(AutoMiCore, RunItemsCoverEveryPairOnce) {
  std::mt19937 rng(3);
  for (std::int64_t h : {1, 3, 9}) {
    for (std::int64_t w : {1, 2, 8, 9, 17, 40}) {
      std::vector<std::uint8_t> l(h * w);
      for (auto& v : l) v = static_cast<std::uint8_t>(rng() % 3);  // few labels: long runs
      for (int dir : {am::kHorizontal, am::kVertical}) {
        for (std::int64_t lag = 1; lag <= am::lag_count(h, w, dir); ++lag) {
          const am::LagGeometry g = am::lag_geometry(h, w, dir, lag);
          const std::int64_t segs = am::run_segments(g.cols), items = g.rows * segs;
          std::vector<std::uint64_t> want(256 * 256, 0), got(256 * 256, 0);
          for (std::int64_t e = 0; e < g.pairs(); ++e) {
            const std::int64_t p = g.first(e, w);
            ++want[l[p] * 256 + l[p + g.offset]];
          }
          std::int64_t adds = 0;
          const std::int64_t threads = 5;  // a small "block": items stride over it
          for (std::int64_t t = 0; t < threads; ++t) {
            am::PairCursor c(t, segs, threads);
            for (std::int64_t q = t; q < items; q += threads, c.advance()) {
              const std::int64_t x0 = c.x * am::kRunPairs;
              const std::uint8_t* first = l.data() + c.y * w + x0;
              const std::uint8_t* second = first + g.offset;
              const am::Run last = am::add_runs(static_cast<int>(std::min<std::int64_t>(am::kRunPairs, g.cols - x0)),
                                                [&](int j) { return std::uint32_t(first[j]) * 256 + second[j]; },
                                                [&](std::uint32_t bin, std::uint32_t run) {
                                                  got[bin] += run;
                                                  ++adds;
                                                });
              got[last.bin] += last.length;
              ++adds;
            }
          }
          ASSERT_EQ(got, want) << h << "x" << w << " dir " << dir << " lag " << lag;
          EXPECT_LE(adds, g.pairs());
        }
      }
    }
  }
  // A constant row of 8 pairs is one run of 8, returned (not added).
  const std::uint8_t row[16] = {};
  int calls = 0;
  const am::Run r = am::add_runs(8, [&](int j) { return std::uint32_t(row[j]) * 256 + row[8 + j]; },
                                 [&](std::uint32_t, std::uint32_t) { ++calls; });
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(r.bin, 0u);
  EXPECT_EQ(r.length, 8u);
}

TEST(AutoMiCore, PackedLabelWords) {
  // gpu-opt's aligned path: 8 labels from one aligned word, or straddling two, as byte loads read them.
  std::uint8_t bytes[24];
  for (int i = 0; i < 24; ++i) bytes[i] = static_cast<std::uint8_t>(37 * i + 11);
  std::uint64_t words[3];
  std::memcpy(words, bytes, sizeof words);
  for (unsigned mis = 0; mis < 8; ++mis) {
    const std::uint64_t w = am::unaligned_word(words[1], words[2], mis);
    for (int j = 0; j < 8; ++j) EXPECT_EQ(am::byte_of(w, j), bytes[8 + mis + j]) << mis << " " << j;
  }
}

// A host replay of shared_hist_kernel's 16-bit counter protocol (the same core functions): rounds
// of kSharedRoundPairs adds of 1..32 (warp aggregation), counters that reach the flush level
// listed (capacity kHotCapacity, else the scan of every counter at or above it), moved to the
// global histogram after each round. Returns false if a counter ever passed 65535.
bool replay(const std::vector<std::uint32_t>& bins, const std::vector<std::uint32_t>& adds, std::uint32_t level, int k,
            std::vector<std::uint64_t>& global, std::int64_t& flush_rounds) {
  std::vector<std::uint32_t> words(am::shared_hist_words(k), 0);
  global.assign(static_cast<std::size_t>(k) * k, 0);
  flush_rounds = 0;
  std::size_t i = 0;
  while (i < bins.size()) {
    std::uint32_t in_round = 0;
    std::vector<std::uint32_t> hot;
    while (i < bins.size() && in_round + adds[i] <= am::kSharedRoundPairs) {
      const am::PackedSlot s = am::packed_slot(bins[i]);
      const std::uint32_t old = words[s.word];
      if (am::packed_count(old, s.shift) + adds[i] > 0xFFFFu) return false;
      words[s.word] = old + (adds[i] << s.shift);
      if (am::reaches_flush_level(old, s.shift, adds[i], level)) hot.push_back(bins[i]);
      in_round += adds[i];
      ++i;
    }
    if (static_cast<int>(hot.size()) > am::kHotCapacity) {
      for (std::size_t w = 0; w < words.size(); ++w)
        for (std::uint32_t shift = 0; shift <= 16; shift += 16) {
          const std::uint32_t c = am::packed_count(words[w], shift);
          if (c >= level) {
            global[2 * w + shift / 16] += c;
            words[w] -= c << shift;
          }
        }
    } else {
      for (std::uint32_t bin : hot) {
        const am::PackedSlot s = am::packed_slot(bin);
        const std::uint32_t c = am::packed_count(words[s.word], s.shift);
        global[bin] += c;
        words[s.word] -= c << s.shift;
      }
    }
    if (!hot.empty()) ++flush_rounds;
  }
  for (std::size_t w = 0; w < words.size(); ++w) {
    global[2 * w] += words[w] & 0xFFFFu;
    if (2 * w + 1 < global.size()) global[2 * w + 1] += words[w] >> 16;
    else if (words[w] >> 16) return false;  // the pad half of an odd k*k is never touched
  }
  return true;
}

TEST(AutoMiCore, SixteenBitCountersStayExact) {
  std::mt19937 rng(9);
  for (int k : {256, 257}) {
    for (std::uint32_t level : {1u, 2u, 3u, 1000u, am::kMaxFlushLevel}) {
      for (int pattern = 0; pattern < 3; ++pattern) {
        // 0: one bin only (the worst case: a constant image); 1: uniform bins; 2: a few hot bins.
        std::vector<std::uint32_t> bins, adds;
        std::vector<std::uint64_t> want(static_cast<std::size_t>(k) * k, 0);
        std::uniform_int_distribution<std::uint32_t> any(0, k * k - 1), few(0, 3), agg(1, 32);
        for (int n = 0; n < 20000; ++n) {
          const std::uint32_t bin = pattern == 0 ? 5u : pattern == 1 ? any(rng) : few(rng) * (k + 1);
          const std::uint32_t add = pattern == 1 ? 1u : agg(rng);
          bins.push_back(bin);
          adds.push_back(add);
          want[bin] += add;
        }
        std::vector<std::uint64_t> got;
        std::int64_t rounds = 0;
        ASSERT_TRUE(replay(bins, adds, level, k, got, rounds)) << "overflow: k " << k << " level " << level << " pattern " << pattern;
        EXPECT_EQ(got, want) << "k " << k << " level " << level << " pattern " << pattern;
        if (level <= 3) EXPECT_GT(rounds, 0) << "a tiny level must flush";
      }
    }
  }
}

TEST(AutoMiCore, FlushLevelBoundIsTight) {
  // Every pair into one bin. Shifted by one pair, a counter starts a round at kMaxFlushLevel - 1
  // and ends it at exactly 65535: still exact. Unshifted, one level higher, it starts a round at
  // kMaxFlushLevel (= 3 rounds, below the level) and would pass 65535. So the level is the bound.
  std::vector<std::uint32_t> bins(200000, 7), adds(200000, 1);
  std::vector<std::uint64_t> got;
  std::int64_t rounds = 0;
  EXPECT_FALSE(replay(bins, adds, am::kMaxFlushLevel + 1, 256, got, rounds));
  ASSERT_TRUE(replay(bins, adds, am::kMaxFlushLevel, 256, got, rounds));
  EXPECT_EQ(got[7], 200000u);
  bins[0] = 8;
  ASSERT_TRUE(replay(bins, adds, am::kMaxFlushLevel, 256, got, rounds));
  EXPECT_EQ(got[7], 199999u);
  EXPECT_EQ(got[8], 1u);
}

}  // namespace
}  // namespace repix
