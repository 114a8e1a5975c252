// The auto-mi reference (seq) against the independent oracle (oracle.hpp: std::map pairs, direct
// -sum p log2 p entropies), hand-computed cases, the edge shapes and the input checks.
#include <gtest/gtest.h>

#include "ami/auto_mi/auto_mi.hpp"
#include "ami/auto_mi/oracle.hpp"
#include "core/error.hpp"

namespace repix {
namespace {

namespace am = ami::auto_mi;
using namespace test::auto_mi;

void expect_matches_oracle(const HostImage& img, const std::string& what) {
  const am::Features f = am::run_seq(img, {});
  const OracleAmi o = oracle_ami(img);
  ASSERT_EQ(f.nmi_x.size(), o.nmi_x.size()) << what;
  ASSERT_EQ(f.nmi_y.size(), o.nmi_y.size()) << what;
  // Different formulas and log bases: agreement to ~1e-12 relative; 1e-9 is the tolerance.
  for (std::size_t i = 0; i < o.nmi_x.size(); ++i)
    EXPECT_TRUE(close_enough(f.nmi_x[i], o.nmi_x[i])) << what << " horizontal lag " << i + 1 << ": " << f.nmi_x[i]
                                                      << " vs oracle " << o.nmi_x[i];
  for (std::size_t i = 0; i < o.nmi_y.size(); ++i)
    EXPECT_TRUE(close_enough(f.nmi_y[i], o.nmi_y[i])) << what << " vertical lag " << i + 1 << ": " << f.nmi_y[i]
                                                      << " vs oracle " << o.nmi_y[i];
  EXPECT_TRUE(close_enough(f.horizontal, o.horizontal)) << what << ": A_x " << f.horizontal << " vs " << o.horizontal;
  EXPECT_TRUE(close_enough(f.vertical, o.vertical)) << what << ": A_y " << f.vertical << " vs " << o.vertical;
}

TEST(AutoMiReference, MatchesOracleOnSeededImages) {
  std::uint32_t seed = 11;
  for (const Case& c : edge_cases()) {
    if (c.h * c.w > 4000) continue;  // the oracle is slow; the long strip is for the GPU batches
    expect_matches_oracle(random_labels(c.h, c.w, c.levels, seed++), std::to_string(c.h) + "x" + std::to_string(c.w));
  }
  expect_matches_oracle(random_labels(19, 27, 256, 99), "19x27 levels 256");
}

TEST(AutoMiReference, MatchesOracleOnUint16WithLabel256) {
  expect_matches_oracle(random_labels(12, 15, 5, 3, 252, true), "u16 labels 252..256");
  expect_matches_oracle(random_labels(9, 8, 257, 4, 0, true), "u16 labels 0..256");
}

TEST(AutoMiReference, HandComputed) {
  // [[0,1],[1,0]]: both lags see (0,1),(1,0): X determines Y, NMI 1.
  am::Features f = am::run_seq(labels_of(2, 2, {0, 1, 1, 0}), {});
  EXPECT_DOUBLE_EQ(f.horizontal, 1.0);
  EXPECT_DOUBLE_EQ(f.vertical, 1.0);
  // [[0,0],[1,1]]: horizontal pairs (0,0),(1,1): NMI 1; vertical pairs (0,1),(0,1): X single -> 0.
  f = am::run_seq(labels_of(2, 2, {0, 0, 1, 1}), {});
  EXPECT_DOUBLE_EQ(f.horizontal, 1.0);
  EXPECT_EQ(f.vertical, 0.0);
  // 1x4 row 0 1 0 1: lag 1 pairs (0,1)(1,0)(0,1) -> NMI 1; lag 2 (0,0)(1,1) -> 1; lag 3 (0,1): single -> 0.
  f = am::run_seq(labels_of(1, 4, {0, 1, 0, 1}), {});
  ASSERT_EQ(f.nmi_x.size(), 3u);
  EXPECT_DOUBLE_EQ(f.nmi_x[0], 1.0);
  EXPECT_DOUBLE_EQ(f.nmi_x[1], 1.0);
  EXPECT_EQ(f.nmi_x[2], 0.0);
  EXPECT_TRUE(f.nmi_y.empty());
  // Independent halves: pairs (0,0),(0,1),(1,0),(1,1) once each: I = 0.
  f = am::run_seq(labels_of(1, 6, {0, 0, 1, 1, 0, 0}), {});  // lag 1: (0,0)(0,1)(1,1)(1,0)(0,0)
  EXPECT_GT(f.nmi_x[0], 0.0);
  EXPECT_LT(f.nmi_x[0], 1.0);
}

TEST(AutoMiReference, NoLagsOnSingleRowsOrColumns) {
  am::Features f = am::run_seq(random_labels(1, 50, 7, 5), {});
  EXPECT_TRUE(f.nmi_y.empty());
  EXPECT_EQ(f.vertical, 0.0);
  EXPECT_EQ(f.nmi_x.size(), 49u);
  EXPECT_GT(f.horizontal, 0.0);
  f = am::run_seq(random_labels(50, 1, 7, 6), {});
  EXPECT_TRUE(f.nmi_x.empty());
  EXPECT_EQ(f.horizontal, 0.0);
  EXPECT_GT(f.vertical, 0.0);
  f = am::run_seq(random_labels(1, 1, 7, 7), {});
  EXPECT_EQ(f.horizontal, 0.0);
  EXPECT_EQ(f.vertical, 0.0);
  EXPECT_EQ(f.stats.pairs, 0);
}

TEST(AutoMiReference, ConstantImagesGiveZero) {
  for (int v : {0, 7, 255}) {
    const am::Features f = am::run_seq(labels_of(9, 13, std::vector<int>(9 * 13, v)), {});
    EXPECT_EQ(f.horizontal, 0.0) << v;
    EXPECT_EQ(f.vertical, 0.0) << v;
  }
  const am::Features f = am::run_seq(labels_of(4, 5, std::vector<int>(20, 256)), {});
  EXPECT_EQ(f.horizontal, 0.0);
  EXPECT_EQ(f.vertical, 0.0);
}

TEST(AutoMiReference, CountsPairsAndLags) {
  const am::Features f = am::run_seq(random_labels(7, 11, 3, 1), {});
  EXPECT_EQ(f.stats.pairs, 7 * 11 * 10 / 2 + 11 * 7 * 6 / 2);
  EXPECT_EQ(f.stats.lags, 10 + 6);
}

HostImage image_of(DType dt, Shape s) { return HostImage(dt, s); }

TEST(AutoMiReference, RefusesBadInput) {
  Shape s3;
  s3.ndim = 3;
  s3.nx = s3.ny = s3.nz = 2;
  EXPECT_THROW(am::run_seq(image_of(DType::u8, s3), {}), Error);
  Shape s2;
  s2.nx = 3;
  s2.ny = 3;
  s2.nz = 1;
  EXPECT_THROW(am::run_seq(image_of(DType::f32, s2), {}), Error);
  Shape empty = s2;
  empty.nx = 0;
  EXPECT_THROW(am::run_seq(image_of(DType::u8, empty), {}), Error);
  HostImage big = random_labels(3, 3, 5, 1, 0, true);
  big.data<std::uint16_t>()[4] = 257;
  try {
    am::run_seq(big, {});
    ADD_FAILURE() << "label 257 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("257"), std::string::npos) << e.what();
  }
  for (const am::Variant& v : am::variants()) {
    if (v.gpu) continue;
    EXPECT_THROW(v.run(big, {}), Error) << v.id;
  }
}

}  // namespace
}  // namespace repix
