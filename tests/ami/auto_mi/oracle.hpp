// Test support for auto-mi: seeded label images, and an independent oracle that computes the
// AMI a different way from the variants: the pairs of each lag collected in a std::map, the
// entropies by the direct formula -sum p log2 p over the map's entries (base 2, not the variants'
// natural log; probabilities, not the c log(n/c) form), NMI = I / sqrt(H(X) H(Y)) with the
// single-value case decided by the number of distinct labels seen.
#pragma once
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "ami/auto_mi/auto_mi.hpp"
#include "core/image.hpp"

namespace repix::test::auto_mi {

// h x w labels drawn uniformly from `levels` values starting at `base` (u16 when u16 or base +
// levels > 256).
inline HostImage random_labels(std::int64_t h, std::int64_t w, int levels, std::uint32_t seed, int base = 0,
                               bool u16 = false) {
  Shape s;
  s.ndim = 2;
  s.nx = w;
  s.ny = h;
  s.nz = 1;
  const bool wide = u16 || base + levels > 256;
  HostImage img(wide ? DType::u16 : DType::u8, s);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(base, base + levels - 1);
  for (std::int64_t i = 0; i < img.size(); ++i) {
    if (wide) img.data<std::uint16_t>()[i] = static_cast<std::uint16_t>(d(rng));
    else img.data<std::uint8_t>()[i] = static_cast<std::uint8_t>(d(rng));
  }
  return img;
}

// Labels from a list (row-major), uint8 unless a value needs uint16.
inline HostImage labels_of(std::int64_t h, std::int64_t w, const std::vector<int>& v, bool u16 = false) {
  Shape s;
  s.ndim = 2;
  s.nx = w;
  s.ny = h;
  s.nz = 1;
  for (int x : v) u16 = u16 || x > 255;
  HostImage img(u16 ? DType::u16 : DType::u8, s);
  for (std::int64_t i = 0; i < img.size(); ++i) {
    if (u16) img.data<std::uint16_t>()[i] = static_cast<std::uint16_t>(v[i]);
    else img.data<std::uint8_t>()[i] = static_cast<std::uint8_t>(v[i]);
  }
  return img;
}

inline int label(const HostImage& img, std::int64_t i) {
  return img.dtype() == DType::u8 ? img.data<std::uint8_t>()[i] : img.data<std::uint16_t>()[i];
}

inline double entropy_bits(const std::map<int, std::int64_t>& counts, double n) {
  double h = 0;
  for (const auto& kv : counts) {
    const double p = static_cast<double>(kv.second) / n;
    h -= p * std::log2(p);
  }
  return h;
}

// NMI of the pairs (L[p], L[p + step]) for the positions p the caller lists.
inline double oracle_nmi(const std::vector<std::pair<int, int>>& pairs) {
  std::map<std::pair<int, int>, std::int64_t> joint;
  std::map<int, std::int64_t> xs, ys;
  for (const auto& p : pairs) {
    ++joint[p];
    ++xs[p.first];
    ++ys[p.second];
  }
  if (xs.size() <= 1 || ys.size() <= 1) return 0.0;
  const double n = static_cast<double>(pairs.size());
  double hxy = 0;
  for (const auto& kv : joint) {
    const double p = static_cast<double>(kv.second) / n;
    hxy -= p * std::log2(p);
  }
  const double hx = entropy_bits(xs, n), hy = entropy_bits(ys, n);
  return (hx + hy - hxy) / std::sqrt(hx * hy);
}

struct OracleAmi {
  std::vector<double> nmi_x, nmi_y;
  double horizontal = 0, vertical = 0;
};

inline OracleAmi oracle_ami(const HostImage& img) {
  const std::int64_t h = img.shape().ny, w = img.shape().nx;
  OracleAmi o;
  for (std::int64_t i = 1; i < w; ++i) {
    std::vector<std::pair<int, int>> pairs;
    for (std::int64_t y = 0; y < h; ++y)
      for (std::int64_t x = 0; x + i < w; ++x) pairs.push_back({label(img, y * w + x), label(img, y * w + x + i)});
    o.nmi_x.push_back(oracle_nmi(pairs));
    o.horizontal += o.nmi_x.back();
  }
  for (std::int64_t i = 1; i < h; ++i) {
    std::vector<std::pair<int, int>> pairs;
    for (std::int64_t y = 0; y + i < h; ++y)
      for (std::int64_t x = 0; x < w; ++x) pairs.push_back({label(img, y * w + x), label(img, (y + i) * w + x)});
    o.nmi_y.push_back(oracle_nmi(pairs));
    o.vertical += o.nmi_y.back();
  }
  return o;
}

// The equivalence.
inline bool close_enough(double got, double want) {
  return std::fabs(got - want) <= std::max(1e-9 * std::fabs(want), 1e-12);
}

// Every value of `got` within the equivalence of `want`; gtest failures name the first differences.
inline void expect_equivalent(const ami::auto_mi::Features& got, const ami::auto_mi::Features& want,
                              const std::string& what) {
  ASSERT_EQ(got.nmi_x.size(), want.nmi_x.size()) << what;
  ASSERT_EQ(got.nmi_y.size(), want.nmi_y.size()) << what;
  EXPECT_TRUE(close_enough(got.horizontal, want.horizontal)) << what << ": A_x " << got.horizontal << " vs " << want.horizontal;
  EXPECT_TRUE(close_enough(got.vertical, want.vertical)) << what << ": A_y " << got.vertical << " vs " << want.vertical;
  int reported = 0;
  for (std::size_t i = 0; i < want.nmi_x.size() && reported < 5; ++i)
    if (!close_enough(got.nmi_x[i], want.nmi_x[i]))
      ADD_FAILURE() << what << ": horizontal lag " << i + 1 << ": " << got.nmi_x[i] << " vs " << want.nmi_x[i], ++reported;
  for (std::size_t i = 0; i < want.nmi_y.size() && reported < 5; ++i)
    if (!close_enough(got.nmi_y[i], want.nmi_y[i]))
      ADD_FAILURE() << what << ": vertical lag " << i + 1 << ": " << got.nmi_y[i] << " vs " << want.nmi_y[i], ++reported;
}

// Shapes where parallel code breaks: single pixels, single rows and columns, tiny, non-square,
// odd, a horizontal lag count above one GPU batch (4096 lags at k = 256).
struct Case {
  std::int64_t h, w;
  int levels;
};
inline std::vector<Case> edge_cases() {
  return {{1, 1, 4},   {1, 2, 2},    {2, 1, 2},   {1, 17, 3},  {23, 1, 3},  {2, 2, 2},   {2, 3, 256},
          {3, 2, 3},   {5, 7, 2},    {13, 9, 256}, {31, 33, 3}, {64, 17, 256}, {40, 129, 16}, {2, 4200, 3}};
}

}  // namespace repix::test::auto_mi
