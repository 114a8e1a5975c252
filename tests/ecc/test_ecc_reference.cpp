// External fixture: the ECC paper authors' own 2D GRF samples (../shared/ecc_reference, read at
// test time, never copied into the repository), with GUDHI's curves for all five and the
// authors' GPU program output for one. Overridable with REPIX_ECC_REFERENCE_DIR; skipped with a
// message where the folder is absent.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/gpu.hpp"
#include "datasets/io.hpp"
#include "ecc/ecc.hpp"
#include "support/variants.hpp"

namespace fs = std::filesystem;

namespace repix {
namespace {

fs::path reference_dir() {
  if (const char* env = std::getenv("REPIX_ECC_REFERENCE_DIR")) return env;
  return fs::path(REPIX_TEST_SHARED_DIR) / "ecc_reference";
}

// "value ecc" lines, listed only where the curve changes.
std::vector<std::pair<float, std::int64_t>> read_pairs(const fs::path& p) {
  std::ifstream in(p);
  std::vector<std::pair<float, std::int64_t>> v;
  float value;
  long long e;
  while (in >> value >> e) v.emplace_back(value, e);
  return v;
}

// Our curve lists every distinct value; keep the entries where the ECC changes.
std::vector<std::pair<float, std::int64_t>> changes(const ecc::Curve& c) {
  std::vector<std::pair<float, std::int64_t>> v;
  for (std::size_t i = 0; i < c.values.size(); ++i)
    if (i == 0 || c.ecc[i] != c.ecc[i - 1]) v.emplace_back(c.values[i], c.ecc[i]);
  return v;
}

class EccAuthorsData : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = reference_dir();
    if (!fs::exists(dir_ / "2D_128_0.dat"))
      GTEST_SKIP() << "ECC reference data not found at " << dir_ << " (set REPIX_ECC_REFERENCE_DIR)";
  }
  HostImage image(int i) const {
    return datasets::read_raw((dir_ / ("2D_128_" + std::to_string(i) + ".dat")).string(),
                              Shape::d2(128, 128), DType::f32);
  }
  fs::path dir_;
};

TEST_F(EccAuthorsData, SeqMatchesGudhiOnAllFiveSamples) {
  for (int i = 0; i < 5; ++i) {
    const auto want = read_pairs(dir_ / ("2D_128_" + std::to_string(i) + ".ecc_T_gudhi.txt"));
    ASSERT_GT(want.size(), 300u);
    const ecc::Curve got = ecc::run_seq(image(i), {});
    ASSERT_EQ(changes(got), want) << "sample " << i;  // 9 significant digits: exact float32
  }
}

TEST_F(EccAuthorsData, SeqMatchesTheAuthorsProgramOutput) {
  const auto want = read_pairs(dir_ / "2D_128_4.upstream_output_81e4e74.txt");
  const auto got = changes(ecc::run_seq(image(4), {}));
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    // The authors printed 6 significant digits.
    EXPECT_NEAR(got[i].first, want[i].first, 5e-6f * std::max(1.0f, std::fabs(want[i].first))) << i;
    EXPECT_EQ(got[i].second, want[i].second) << "at value " << want[i].first;
  }
}

// One test per variant, CPU and GPU (EccAuthorsDataVariant.*/<id>).
class EccAuthorsDataVariant : public EccAuthorsData, public ::testing::WithParamInterface<std::string> {};
REPIX_INSTANTIATE_VARIANTS(EccAuthorsDataVariant, test::variant_ids(ecc::variants(), test::Device::any));

TEST_P(EccAuthorsDataVariant, MatchesSeqOnTheSamples) {
  const ecc::Variant& v = ecc::find_variant(GetParam());
  if (v.gpu && !gpu_available()) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason();
  for (int i = 0; i < 5; ++i) {
    const HostImage img = image(i);
    const ecc::Curve want = ecc::run_seq(img, {});
    EXPECT_EQ(v.run(img, {}), want) << v.id << " on sample " << i;
  }
}

}  // namespace
}  // namespace repix
