// edt CPU variants: seq-exact against a brute-force oracle; seq and omp-tiled against the
// property checks on seeded inputs and edge shapes; the checker itself is not vacuous (it sees
// the propagation's real errors and rejects corrupted results); bad inputs. Tests of every CPU
// variant run once per variant (EdtCpuVariant.*/<id>, EdtCpuPropagation.*/<id>).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>

#include "datasets/datasets.hpp"
#include "edt/edt.hpp"
#include "edt/detail.hpp"
#include "edt/test_images.hpp"
#include "edt/verify.hpp"
#include "support/variants.hpp"

namespace repix {
namespace {

using test::describe;

std::vector<std::string> cpu_variants() { return test::variant_ids(edt::variants(), test::Device::cpu); }

// The CPU variants checked by properties (the propagations; not the exact one).
std::vector<std::string> propagation_variants() {
  return test::variant_ids(edt::variants(), test::Device::cpu, [](const edt::Variant& v) { return !v.exact; });
}

class EdtCpuVariant : public test::VariantTest {};
REPIX_INSTANTIATE_VARIANTS(EdtCpuVariant, cpu_variants());

class EdtCpuPropagation : public test::VariantTest {};
REPIX_INSTANTIATE_VARIANTS(EdtCpuPropagation, propagation_variants());

TEST(EdtCpu, VariantsRegisteredInOrder) {
  EXPECT_EQ(cpu_variants(), (std::vector<std::string>{"seq-exact", "seq", "omp-tiled"}));
  EXPECT_EQ(propagation_variants(), (std::vector<std::string>{"seq", "omp-tiled"}));
}

std::vector<HostImage> inputs() {
  std::vector<HostImage> v;
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    v.push_back(test::sparse_image(97, 61, 0.01, seed));
    v.push_back(test::sparse_image(64, 64, 0.2, seed));
  }
  v.push_back(datasets::generate("blobs:120x90:radius=9:fill=0.45:seed=4"));
  v.push_back(datasets::generate("blobs:257x129:radius=20:fill=0.8:seed=5"));
  v.push_back(test::sparse_image(300, 280, 0.0004, 6));
  return v;
}

std::vector<HostImage> edge_inputs() {
  std::vector<HostImage> v;
  const std::pair<int, int> shapes[] = {{1, 1}, {1, 57}, {57, 1}, {255, 3}, {256, 2}, {257, 5}, {3, 513}, {33, 17}};
  for (auto [nx, ny] : shapes) {
    v.push_back(test::sparse_image(nx, ny, 0.05, nx * 1000 + ny));
    v.push_back(test::const_image(nx, ny, 0));    // all background
    v.push_back(test::const_image(nx, ny, 255));  // no background
    HostImage one = test::const_image(nx, ny, 255);
    one.data<std::uint8_t>()[one.size() / 2] = 0;  // one site
    v.push_back(std::move(one));
  }
  HostImage corner = test::const_image(600, 300, 7);  // one site in a corner: long waves, many rounds
  corner.data<std::uint8_t>()[0] = 0;
  v.push_back(std::move(corner));
  return v;
}

TEST(EdtCpu, SeqExactMatchesBruteForce) {
  auto all = inputs();
  for (auto& e : edge_inputs()) all.push_back(std::move(e));
  for (const HostImage& img : all) {
    if (img.size() > 40000) continue;
    const edt::Result r = edt::find_variant("seq-exact").run(img, {});
    const std::vector<float> want = test::brute_force_edt(img);
    const float* d = r.distance.data<float>();
    std::int64_t bad = 0;
    for (std::int64_t i = 0; i < img.size(); ++i) bad += !(d[i] == want[i]);
    EXPECT_EQ(bad, 0) << describe(img);
    // Its sites are nearest background pixels (ties may go either way).
    const edt::Check c = edt::compare_exact(img, r, r);
    EXPECT_TRUE(c.ok) << c.first_violation;
  }
}

TEST(EdtCpu, SeqExactIsIndependentOfThreads) {
  const HostImage img = test::sparse_image(301, 203, 0.003, 9);
  edt::Options one;
  one.threads = 1;
  edt::Options many;
  many.threads = 4;
  const edt::Result a = edt::run_seq_exact(img, one), b = edt::run_seq_exact(img, many);
  EXPECT_EQ(a.sites, b.sites);
  EXPECT_EQ(a.distance.content_hash(), b.distance.content_hash());
}

void expect_propagation_ok(const std::string& id, const edt::Options& opt) {
  auto all = inputs();
  for (auto& e : edge_inputs()) all.push_back(std::move(e));
  for (const HostImage& img : all) {
    const edt::Result exact = edt::run_seq_exact(img, {});
    const edt::Result got = edt::find_variant(id).run(img, opt);
    const edt::Check c = edt::check_propagation(img, exact, got);
    EXPECT_TRUE(c.ok) << id << " on " << describe(img) << ": " << c.first_violation;
    EXPECT_LE(c.max_abs, edt::kMaxPropagationError) << describe(img);
  }
}

// The parallel variant on several tile sizes (3 threads), the sequential one with the defaults.
TEST_P(EdtCpuPropagation, PassesPropertyChecks) {
  const std::string& id = GetParam();
  if (id.rfind("omp-", 0) != 0) {
    expect_propagation_ok(id, {});
    return;
  }
  for (int tile : {0, 7, 16, 64}) {
    edt::Options o;
    o.tile = tile;
    o.threads = 3;
    expect_propagation_ok(id, o);
  }
}

TEST_P(EdtCpuVariant, NoBackgroundGivesInfinityAndNoSite) {
  const std::string& id = GetParam();
  const HostImage img = test::const_image(13, 7, 1);
  const edt::Result r = edt::find_variant(id).run(img, {});
  for (std::int64_t i = 0; i < img.size(); ++i) {
    EXPECT_TRUE(std::isinf(r.distance.data<float>()[i])) << id;
    EXPECT_EQ(r.sites[i], -1) << id;
  }
}

TEST_P(EdtCpuVariant, SitesOnlyWhenAsked) {
  const std::string& id = GetParam();
  const HostImage img = test::sparse_image(40, 30, 0.05, 2);
  edt::Options o;
  o.want_sites = false;
  EXPECT_TRUE(edt::find_variant(id).run(img, o).sites.empty()) << id;
}

// Propagation over 8 neighbours is not exact (the paper's Figure 3): three sites on a 28x28 image
// (found by a search over random placements) where a pixel's nearest site cannot reach it
// through neighbours that keep that site. seq must show that small error, within the bounds, so
// the checker's exactness conditions are not vacuous.
TEST_P(EdtCpuPropagation, PropagationErrorExistsAndIsBounded) {
  const std::string& id = GetParam();
  HostImage img = test::const_image(28, 28, 255);
  for (auto [x, y] : {std::pair<int, int>{7, 7}, {9, 8}, {13, 11}}) img.data<std::uint8_t>()[y * 28 + x] = 0;
  const edt::Result exact = edt::run_seq_exact(img, {});
  const edt::Check c = edt::check_propagation(img, exact, edt::find_variant(id).run(img, {}));
  EXPECT_TRUE(c.ok) << id << ": " << c.first_violation;
  if (id == "seq") {
    EXPECT_GE(c.pixels_off, 1);
    EXPECT_GT(c.max_abs, 0.01);
  }
  EXPECT_LE(c.max_abs, edt::kMaxPropagationError);
}

TEST(EdtCpu, CheckerRejectsCorruptedResults) {
  const HostImage img = test::sparse_image(80, 60, 0.01, 3);
  const edt::Result exact = edt::run_seq_exact(img, {});
  const std::int64_t nx = 80;
  // A pixel given a far background site (distance consistent with it): a neighbour is closer.
  {
    edt::Result r = edt::run_seq(img, {});
    std::int64_t far = -1, p = 40 * nx + 40;
    for (std::int64_t i = img.size() - 1; i >= 0; --i)
      if (img.data<std::uint8_t>()[i] == 0 && edt::sq_dist(40, 40, i % nx, i / nx) > 400) { far = i; break; }
    ASSERT_GE(far, 0);
    if (img.data<std::uint8_t>()[p] == 0) ++p;
    r.sites[p] = far;
    r.distance.data<float>()[p] = edt::distance_from_sq(edt::sq_dist(p % nx, p / nx, far % nx, far / nx));
    const edt::Check c = edt::check_propagation(img, exact, r);
    EXPECT_FALSE(c.ok);
    EXPECT_NE(c.first_violation.find("strictly closer"), std::string::npos) << c.first_violation;
  }
  // A distance one ulp off.
  {
    edt::Result r = edt::run_seq(img, {});
    float& d = r.distance.data<float>()[25 * nx + 31];
    d = std::nextafter(d, 1e9f);
    EXPECT_FALSE(edt::check_propagation(img, exact, r).ok);
    edt::Result e = edt::run_seq_exact(img, {});
    e.distance.data<float>()[100] += 0.5f;
    EXPECT_FALSE(edt::compare_exact(img, exact, e).ok);
  }
  // A foreground pixel as a site.
  {
    edt::Result r = edt::run_seq(img, {});
    std::int64_t fg = 0;
    while (img.data<std::uint8_t>()[fg] == 0) ++fg;
    r.sites[fg + 1] = fg;
    const edt::Check c = edt::check_propagation(img, exact, r);
    EXPECT_FALSE(c.ok);
  }
  // Distance-only results are checked on the distances.
  {
    edt::Result r = edt::run_seq(img, {});
    r.sites.clear();
    EXPECT_TRUE(edt::check_propagation(img, exact, r).ok);
    r.distance.data<float>()[10 * nx + 10] = 0.0f;
    if (img.data<std::uint8_t>()[10 * nx + 10] != 0) EXPECT_FALSE(edt::check_propagation(img, exact, r).ok);
  }
}

TEST(EdtCpu, BadInputsAreOneLineErrors) {
  const auto& v = edt::find_variant("seq");
  HostImage d3(DType::u8, Shape::d3(4, 4, 2));
  std::fill(d3.data<std::uint8_t>(), d3.data<std::uint8_t>() + d3.size(), 1);
  EXPECT_THROW(v.run(d3, {}), Error);
  HostImage d1(DType::u8, Shape::d1(5));
  EXPECT_THROW(v.run(d1, {}), Error);
  HostImage f(DType::f32, Shape::d2(4, 3));
  std::fill(f.data<float>(), f.data<float>() + f.size(), 1.0f);
  f.data<float>()[6] = std::numeric_limits<float>::quiet_NaN();
  try {
    edt::check_input(f);
    FAIL() << "NaN accepted";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("NaN at x=2, y=1"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos);
  }
  f.data<float>()[6] = std::numeric_limits<float>::infinity();
  EXPECT_THROW(edt::check_input(f), Error);
  EXPECT_THROW(edt::find_variant("warp-drive"), Error);
}

TEST(EdtCpu, FloatAndUint16InputsUseZeroAsBackground) {
  HostImage f(DType::f32, Shape::d2(20, 10));
  HostImage u(DType::u16, Shape::d2(20, 10));
  for (std::int64_t i = 0; i < f.size(); ++i) {
    const bool b = (i * 7) % 23 == 0;
    f.data<float>()[i] = b ? (i % 2 ? -0.0f : 0.0f) : 0.5f;
    u.data<std::uint16_t>()[i] = b ? 0 : 1000;
  }
  const edt::Result a = edt::run_seq_exact(f, {}), b = edt::run_seq_exact(u, {});
  EXPECT_EQ(a.distance.content_hash(), b.distance.content_hash());
}

}  // namespace
}  // namespace repix
