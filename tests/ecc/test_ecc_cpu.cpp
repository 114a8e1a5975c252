// seq against the independent oracle, and omp against seq, on seeded random inputs with many
// ties and on the edge shapes.
#include <gtest/gtest.h>

#include <random>

#include "ecc/ecc.hpp"
#include "ecc/oracle.hpp"

namespace repix {
namespace {

HostImage random_image(DType dt, Shape sh, int levels, std::uint32_t seed) {
  HostImage img(dt, sh);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(0, levels - 1);
  for (std::int64_t i = 0; i < img.size(); ++i) {
    const int v = d(rng);
    switch (dt) {
      case DType::u8: img.data<std::uint8_t>()[i] = static_cast<std::uint8_t>(v); break;
      case DType::u16: img.data<std::uint16_t>()[i] = static_cast<std::uint16_t>(v * 997 % 65536); break;
      case DType::f32: img.data<float>()[i] = static_cast<float>(v) * 0.37f - 3.0f; break;
    }
  }
  return img;
}

TEST(EccSeq, MatchesOracleOnRandom2DAnd3D) {
  std::uint32_t seed = 1;
  for (DType dt : {DType::u8, DType::u16, DType::f32})
    for (Shape sh : {Shape::d2(1, 1), Shape::d2(1, 7), Shape::d2(7, 1), Shape::d2(13, 9),
                     Shape::d2(33, 31), Shape::d3(1, 1, 1), Shape::d3(1, 1, 9), Shape::d3(5, 6, 7),
                     Shape::d3(9, 4, 3), Shape::d1(17)})
      for (int levels : {1, 2, 5, 200}) {
        const HostImage img = random_image(dt, sh, levels, seed++);
        const ecc::Curve got = ecc::run_seq(img, {});
        const ecc::Curve want = test::oracle_ecc(img);
        ASSERT_EQ(got.values, want.values) << dtype_name(dt) << " " << sh.str() << " L" << levels;
        ASSERT_EQ(got.ecc, want.ecc) << dtype_name(dt) << " " << sh.str() << " L" << levels;
        ASSERT_EQ(got.ecc.back(), 1) << "a full box always ends at ECC = 1";
      }
}

TEST(EccOmp, MatchesSeq) {
  std::uint32_t seed = 100;
  for (DType dt : {DType::u8, DType::u16, DType::f32})
    for (Shape sh : {Shape::d2(1, 1), Shape::d2(257, 3), Shape::d2(64, 65), Shape::d3(17, 15, 33),
                     Shape::d3(1, 1, 40)})
      for (int levels : {2, 50, 4000}) {
        const HostImage img = random_image(dt, sh, levels, seed++);
        for (int threads : {1, 3, 8}) {
          ecc::Options opt;
          opt.threads = threads;
          ASSERT_EQ(ecc::run_omp(img, opt), ecc::run_seq(img, {}))
              << dtype_name(dt) << " " << sh.str() << " threads " << threads;
        }
      }
}

}  // namespace
}  // namespace repix
