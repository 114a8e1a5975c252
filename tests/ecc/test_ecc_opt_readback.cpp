// CPU tests of the curves the host makes of gpu-opt's read-back (gpu_opt_readback.hpp): the
// integer layout written as the finishing kernel writes it (a count word a 1024-value segment; a
// sparse segment's entries ascending from its first slot, garbage beyond the count; a dense one's
// bitmap and int32 VCECs), and the float
// path's (key, VCEC) pairs in table order, each against a curve built independently here (an
// ordered map of value -> VCEC, summed in order).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <vector>

#include "core/float_bits.hpp"
#include "ecc/gpu_opt_readback.hpp"

namespace repix {
namespace {

using ecc::opt::BinsLayout;
using ecc::opt::kSegmentBins;

ecc::Curve curve_of(const std::map<float, long long>& vcec) {
  ecc::Curve c;
  long long acc = 0;
  for (const auto& [value, v] : vcec) {
    acc += v;
    c.values.push_back(value);
    c.ecc.push_back(acc);
  }
  return c;
}

// The read-back of `occurring` (value -> VCEC) for nbins values, as finish_bins_kernel leaves it,
// each segment in the sparse form or (where `dense` says so, for the segment's index, and its
// VCECs fit int32) the dense one; what lies past a sparse segment's count, and in the unused
// parts of a dense one's areas, is garbage that must never be read.
template <class Dense>
std::vector<unsigned char> bins_readback(const std::map<float, long long>& occurring, std::size_t nbins,
                                         std::mt19937& rng, Dense dense) {
  const BinsLayout lay(nbins);
  std::vector<unsigned char> buf(lay.bytes);
  for (auto& b : buf) b = static_cast<unsigned char>(rng());
  auto* counts = reinterpret_cast<std::uint32_t*>(buf.data());
  auto* values = reinterpret_cast<std::uint32_t*>(buf.data() + lay.values_at);
  auto* vcec = reinterpret_cast<long long*>(buf.data() + lay.vcec_at);
  std::vector<bool> fits(lay.segments, true);
  for (const auto& [value, v] : occurring)
    if (v != static_cast<std::int32_t>(v)) fits[static_cast<std::size_t>(value) / kSegmentBins] = false;
  std::vector<bool> as_dense(lay.segments);
  for (std::size_t s = 0; s < lay.segments; ++s) {
    counts[s] = 0;
    as_dense[s] = fits[s] && dense(s);
    if (!as_dense[s]) continue;
    std::memset(values + s * kSegmentBins, 0, kSegmentBins / 32 * sizeof(std::uint32_t));
    std::memset(vcec + s * kSegmentBins, 0, kSegmentBins * sizeof(std::int32_t));  // values that do not occur: 0
  }
  for (const auto& [value, v] : occurring) {
    const auto u = static_cast<std::uint32_t>(value);
    const std::size_t s = u / kSegmentBins, j = u % kSegmentBins;
    if (as_dense[s]) {
      values[s * kSegmentBins + j / 32] |= 1u << (j % 32);
      const auto v32 = static_cast<std::int32_t>(v);
      std::memcpy(reinterpret_cast<unsigned char*>(vcec + s * kSegmentBins) + j * sizeof(v32), &v32, sizeof(v32));
      ++counts[s];
    } else {
      const std::size_t at = s * kSegmentBins + counts[s]++;
      values[at] = u;
      vcec[at] = v;
    }
  }
  for (std::size_t s = 0; s < lay.segments; ++s)
    if (as_dense[s]) counts[s] |= ecc::opt::kDenseSegment;
  return buf;
}

TEST(EccOptReadback, IntegerSegmentsGiveTheCurveOfTheOccurringValues) {
  std::mt19937 rng(99);
  int cases = 0;
  for (const std::size_t nbins : {std::size_t{256}, std::size_t{65536}}) {
    const BinsLayout lay(nbins);
    ASSERT_EQ(lay.segments, (nbins + kSegmentBins - 1) / kSegmentBins);
    ASSERT_EQ(lay.values_at % 8, 0u);
    ASSERT_EQ(lay.vcec_at % 8, 0u);
    // None, one, a few, about half and every value; VCECs of either sign, some 0 (a value that
    // occurs with no net change is still a point of the curve).
    for (const double share : {0.0, -1.0, 0.004, 0.5, 1.0}) {
      for (int rep = 0; rep < 3; ++rep) {
        std::map<float, long long> occurring;
        if (share < 0) {
          occurring[static_cast<float>(rng() % nbins)] = 5;
        } else {
          std::bernoulli_distribution in(share);
          for (std::size_t i = 0; i < nbins; ++i)
            if (in(rng)) occurring[static_cast<float>(i)] = static_cast<long long>(rng() % 61) - 30;
          // A VCEC beyond int32 in one segment (a billion-voxel image's): that segment stays sparse.
          if (!occurring.empty() && rep == 2) occurring.begin()->second = -(1LL << 33) - 7;
        }
        // Sparse throughout, dense throughout, and every other segment dense.
        for (int form = 0; form < 3; ++form) {
          const std::vector<unsigned char> buf =
              bins_readback(occurring, nbins, rng, [form](std::size_t s) { return form == 1 || (form == 2 && s % 2 == 1); });
          const ecc::Curve got = ecc::opt::curve_from_segments(buf.data(), lay);
          const ecc::Curve want = curve_of(occurring);
          ASSERT_EQ(got.values, want.values) << nbins << " bins, share " << share << ", form " << form;
          ASSERT_EQ(got.ecc, want.ecc) << nbins << " bins, share " << share << ", form " << form;
          ++cases;
        }
      }
    }
  }
  EXPECT_EQ(cases, 90);
}

TEST(EccOptReadback, FloatPairsSortedByValueWhateverTheTableOrder) {
  std::mt19937 rng(7);
  // Up to 32 pairs std::sort, up to 1024 a radix sort of four 8-bit digits, beyond of three 11-bit
  // digits (all three used at 100000): each on both sides of its bounds.
  static_assert(ecc::opt::kSortPairsMax == 32 && ecc::opt::kRadix8PairsMax == 1024);
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{32}, std::size_t{33},
                              std::size_t{256}, std::size_t{664}, std::size_t{1024}, std::size_t{1025},
                              std::size_t{5000}, std::size_t{100000}}) {
    // Distinct canonical values: negative, positive, +0 (never -0), subnormal, huge, in random
    // table order.
    std::map<float, long long> vcec;
    const float special[] = {0.0f, 1e-45f, -1e-45f, 3.4e38f, -3.4e38f, 1.0f, -1.0f};
    for (std::size_t i = 0; vcec.size() < n; ++i) {
      const float f = i < std::size(special) ? special[i]
                                             : std::ldexp(static_cast<float>(static_cast<int>(rng() % 2000001) - 1000000),
                                                          static_cast<int>(rng() % 60) - 30);
      vcec[f] = static_cast<long long>(rng() % 2001) - 1000;
    }
    std::vector<std::uint32_t> keys;
    std::vector<long long> v;
    for (const auto& [value, x] : vcec) {
      keys.push_back(float_bits(value + 0.0f));  // canonical: -0 folded into +0
      v.push_back(x);
    }
    std::vector<std::size_t> perm(keys.size());
    for (std::size_t i = 0; i < perm.size(); ++i) perm[i] = i;
    std::shuffle(perm.begin(), perm.end(), rng);
    std::vector<std::uint32_t> k2(keys.size());
    std::vector<long long> v2(keys.size());
    for (std::size_t i = 0; i < perm.size(); ++i) {
      k2[i] = keys[perm[i]];
      v2[i] = v[perm[i]];
    }
    const ecc::Curve got = ecc::opt::curve_from_pairs(k2.data(), v2.data(), k2.size());
    const ecc::Curve want = curve_of(vcec);
    ASSERT_EQ(got.values.size(), n);
    ASSERT_EQ(got.values, want.values) << n << " pairs";
    ASSERT_EQ(got.ecc, want.ecc) << n << " pairs";
  }
}

}  // namespace
}  // namespace repix
