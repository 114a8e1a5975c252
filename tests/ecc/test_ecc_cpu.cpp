// seq against the independent oracle, and every other CPU variant (omp) against seq, one test per
// variant (EccCpuVariant.*/<id>), on seeded random inputs with many ties and on the edge shapes.
#include <gtest/gtest.h>

#include "ecc/ecc.hpp"
#include "ecc/oracle.hpp"
#include "ecc/test_images.hpp"
#include "support/variants.hpp"

namespace repix {
namespace {

using test::random_image;

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

// The CPU variants but the reference itself.
class EccCpuVariant : public test::VariantTest {};
REPIX_INSTANTIATE_VARIANTS(EccCpuVariant, test::variant_ids(ecc::variants(), test::Device::cpu,
                                                            [](const ecc::Variant& v) { return v.id != "seq"; }));

TEST(EccCpu, VariantsRegisteredInOrder) {
  EXPECT_EQ(test::variant_ids(ecc::variants(), test::Device::cpu), (std::vector<std::string>{"seq", "omp"}));
}

TEST_P(EccCpuVariant, MatchesSeq) {
  const ecc::Variant& v = ecc::find_variant(GetParam());
  std::uint32_t seed = 100;
  for (DType dt : {DType::u8, DType::u16, DType::f32})
    for (Shape sh : {Shape::d2(1, 1), Shape::d2(257, 3), Shape::d2(64, 65), Shape::d3(17, 15, 33),
                     Shape::d3(1, 1, 40)})
      for (int levels : {2, 50, 4000}) {
        const HostImage img = random_image(dt, sh, levels, seed++);
        for (int threads : {1, 3, 8}) {
          ecc::Options opt;
          opt.threads = threads;
          ASSERT_EQ(v.run(img, opt), ecc::run_seq(img, {}))
              << v.id << " " << dtype_name(dt) << " " << sh.str() << " threads " << threads;
        }
      }
}

}  // namespace
}  // namespace repix
