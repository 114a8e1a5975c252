// gpu-opt-bins16's 16-bit counters on the CPU (gpu_opt_core.cuh's bins16, the arithmetic the 2D
// uint16 kernel and its reducing kernel run): the halves of a word read back exactly for every pair
// of int16 values; an add of d to a value's half is that half plus d, the other half unchanged,
// negative d and both halves included; and the take-back protocol, played by 768 simulated threads
// (the kernel's block) whose atomics interleave in random and in worst-case orders, keeps every
// half within kLimit + 2 x 768 x 12 (inside int16) and the counters plus the global bins equal to
// the sums of the adds.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "ecc/gpu_opt_core.cuh"

namespace repix {
namespace {

using namespace ecc::opt;

std::uint32_t word_of_halves(int lo, int hi) {
  return static_cast<std::uint32_t>(hi) * 65536u + static_cast<std::uint32_t>(lo);  // 65536 H + L mod 2^32
}

TEST(EccBins16, HalvesReadBackExactly) {
  for (int hi = -32768; hi <= 32767; hi += 97)
    for (int lo : {-32768, -32767, -8193, -1, 0, 1, 8192, 32766, 32767}) {
      const std::uint32_t w = word_of_halves(lo, hi);
      ASSERT_EQ(bins16::low_half(w), lo) << hi;
      ASSERT_EQ(bins16::high_half(w), hi) << lo;
    }
  EXPECT_EQ(bins16::high_half(word_of_halves(-32768, 32767)), 32767);
  EXPECT_EQ(bins16::high_half(word_of_halves(32767, -32768)), -32768);
}

TEST(EccBins16, AnAddChangesOnlyItsHalf) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> half(-20000, 20000), d(-13, 13);
  for (int h = -32768; h <= 32767; ++h) {  // every half value against the limit, in both halves
    ASSERT_EQ(bins16::beyond(word_of_halves(h, 5), 1u), h < -bins16::kLimit || h >= bins16::kLimit) << h;
    ASSERT_EQ(bins16::beyond(word_of_halves(-7, h), 0x8001u), h < -bins16::kLimit || h >= bins16::kLimit) << h;
  }
  for (int i = 0; i < 200000; ++i) {
    const int lo = half(rng), hi = half(rng), dd = d(rng);
    const std::uint32_t v = rng() & 0xFFFFu;
    const std::uint32_t w = word_of_halves(lo, hi) + bins16::increment(v, dd);
    EXPECT_EQ(bins16::word_of(v), v & 0x7FFFu);
    if (bins16::high(v)) {
      ASSERT_EQ(bins16::low_half(w), lo);
      ASSERT_EQ(bins16::high_half(w), hi + dd);
    } else {
      ASSERT_EQ(bins16::low_half(w), lo + dd);
      ASSERT_EQ(bins16::high_half(w), hi);
    }
    ASSERT_EQ(bins16::half_of(w, v), bins16::high(v) ? hi + dd : lo + dd);
    const int h = bins16::half_of(w, v);
    ASSERT_EQ(bins16::beyond(w, v), h < -bins16::kLimit || h >= bins16::kLimit) << h;
  }
}

// One block: kThreads threads, each adding batches of 4 changes (|d| <= 3) to a few values' counters,
// then checking its 4 words and taking back those beyond the limit, its take-backs applied before
// its next batch (the kernel's fence) but in any order with the other threads' atomics.
struct Block16 {
  static constexpr int kThreads = 768, kBatch = 4;
  std::vector<std::uint32_t> words = std::vector<std::uint32_t>(32768, 0u);
  std::map<std::uint32_t, long long> global, want;
  int worst = 0;  // the largest |half| seen after any atomic

  struct Thread {
    int issued = 0;                     // adds of the current batch made
    std::uint32_t value[kBatch], inc[kBatch], after[kBatch];
    int d[kBatch];
    std::vector<int> take_backs;        // indices of the current batch still to take back
    bool checked = false;
  };
  std::vector<Thread> threads = std::vector<Thread>(kThreads);

  void note(std::uint32_t v) {
    const int h = std::abs(bins16::half_of(words[bins16::word_of(v)], v));
    if (h > worst) worst = h;
  }
  // One step of thread t: its next add, its check, or one take-back; `pick` draws the batch's values
  // and changes.
  template <class Pick>
  void step(int t, Pick&& pick) {
    Thread& th = threads[t];
    if (th.issued < kBatch) {
      const int i = th.issued++;
      pick(th.value[i], th.d[i]);
      want[th.value[i]] += th.d[i];
      th.inc[i] = bins16::increment(th.value[i], th.d[i]);
      std::uint32_t& w = words[bins16::word_of(th.value[i])];
      w += th.inc[i];
      th.after[i] = w;
      note(th.value[i]);
      return;
    }
    if (!th.checked) {
      th.checked = true;
      for (int i = 0; i < kBatch; ++i)
        if (bins16::beyond(th.after[i], th.value[i])) th.take_backs.push_back(i);
    }
    if (!th.take_backs.empty()) {
      const int i = th.take_backs.back();
      th.take_backs.pop_back();
      words[bins16::word_of(th.value[i])] -= th.inc[i];
      global[th.value[i]] += th.d[i];
      note(th.value[i]);
      return;
    }
    th = Thread{};  // the batch is done: the next one starts
  }
  // Every thread's batch in progress to its end (its adds, check and take-backs).
  template <class Pick>
  void finish(Pick&& pick) {
    for (int t = 0; t < kThreads; ++t)
      while (threads[t].issued != 0) step(t, pick);
  }
  void expect_exact() const {
    for (const auto& [v, sum] : want) {
      const auto g = global.find(v);
      EXPECT_EQ(bins16::half_of(words[bins16::word_of(v)], v) + (g == global.end() ? 0 : g->second), sum) << v;
    }
    EXPECT_LE(worst, bins16::kLimit + 2 * kThreads * kBatch * 3);
    EXPECT_LE(worst, 32767);
  }
};

TEST(EccBins16, TakeBacksKeepHalvesInRangeUnderRandomInterleavings) {
  std::mt19937 rng(11);
  for (int round = 0; round < 6; ++round) {
    Block16 b;
    // Few values (every thread on the same counters: the adversarial case), both halves, changes
    // of one sign or of both with a drift (so that the counters pass the limit).
    const std::uint32_t values[3] = {7u, 7u | 0x8000u, 12345u};
    const int nvalues = 1 + round % 3;
    const bool one_sign = round % 2 == 0;
    auto pick = [&](std::uint32_t& v, int& d) {
      v = values[rng() % nvalues];
      d = one_sign ? -static_cast<int>(rng() % 4) : static_cast<int>(rng() % 6) - 2;
    };
    for (int s = 0; s < 1000000; ++s) b.step(static_cast<int>(rng() % Block16::kThreads), pick);
    b.finish(pick);
    b.expect_exact();
    EXPECT_GT(b.global.size(), 0u) << "the round never passed the limit: it tests nothing";
  }
}

// The worst order for the bound: every thread makes its 4 adds of +3 to one counter before any
// thread checks, at each batch, so all 768 x 12 of the block's adds in flight land together.
TEST(EccBins16, TakeBacksKeepHalvesInRangeWhenEveryAddLandsFirst) {
  for (const std::uint32_t value : {3u, 3u | 0x8000u})
    for (int sign : {1, -1}) {
      Block16 b;
      auto pick = [&](std::uint32_t& v, int& d) {
        v = value;
        d = 3 * sign;
      };
      for (int batch = 0; batch < 12; ++batch) {
        for (int i = 0; i < Block16::kBatch; ++i)
          for (int t = 0; t < Block16::kThreads; ++t) b.step(t, pick);
        b.finish(pick);
      }
      b.expect_exact();
      EXPECT_GT(b.worst, bins16::kLimit + Block16::kThreads * Block16::kBatch * 3 - 12) << "the bound's case was reached";
    }
}

}  // namespace
}  // namespace repix
