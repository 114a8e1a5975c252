// The reference (seq) against the brute-force oracle (oracle.hpp), the area opening against the
// brute-force one, and the properties the semantics promise (maxtree.hpp): checkerboards,
// constants, the root, the int64 path, the area opening's A = 1 and A above the image's area.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/gpu.hpp"
#include "maxtree/maxtree.hpp"
#include "maxtree/oracle.hpp"
#include "maxtree/test_images.hpp"

namespace repix::maxtree {
namespace {

std::vector<std::int64_t> as_vector(const ParentImage& p) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(p.size()));
  for (std::int64_t i = 0; i < p.size(); ++i) v[i] = p[i];
  return v;
}

Options with_connectivity(int c) {
  Options o;
  o.connectivity = c;
  return o;
}

// The oracle's cost is levels x pixels: the inputs where it stays small.
std::vector<test::Input> oracle_inputs(std::uint64_t seed) {
  std::vector<test::Input> in = test::small_inputs(seed);
  for (test::Input& big : test::large_inputs(seed + 100)) {
    const auto values = test::values_of(big.image);
    const std::size_t distinct = std::set<std::uint32_t>(values.begin(), values.end()).size();
    if (distinct * static_cast<std::size_t>(big.image.size()) <= 4'000'000) in.push_back(std::move(big));
  }
  return in;
}

TEST(MaxtreeReference, SeqMatchesBruteForceLabelling) {
  for (const std::uint64_t seed : {1u, 2u}) {
    int checked = 0;
    for (const test::Input& in : oracle_inputs(seed)) {
      for (const int c : {4, 8}) {
        const Result r = find_variant("seq").run(in.image, with_connectivity(c));
        const test::MaxtreeOracle oracle(in.image, c);
        ASSERT_EQ(as_vector(r.parent), oracle.parent()) << in.name << " connectivity " << c << " seed " << seed;
        EXPECT_EQ(count_nodes(in.image, r.parent), oracle.nodes()) << in.name;
        ++checked;
      }
    }
    EXPECT_GT(checked, 80);
  }
}

TEST(MaxtreeReference, CheckerboardHasOneNodePerLevelUnder8ConnectivityOnly) {
  const HostImage img = test::checker_image(DType::u8, 9, 8, 1, 10, 20);
  const Result r8 = find_variant("seq").run(img, with_connectivity(8));
  EXPECT_EQ(count_nodes(img, r8.parent), 2);
  // Under 4-connectivity every high pixel is its own node: 36 of them, and the root.
  const Result r4 = find_variant("seq").run(img, with_connectivity(4));
  EXPECT_EQ(count_nodes(img, r4.parent), 36 + 1);
  // The root is the first low pixel (index 0); the high node's canonical pixel is index 1.
  EXPECT_EQ(r8.parent[0], 0);
  EXPECT_EQ(r8.parent[1], 0);
  EXPECT_EQ(r8.parent[9], 1);   // (0, 1), high: a proper pixel of the high node
  EXPECT_EQ(r8.parent[10], 0);  // (1, 1), low: a proper pixel of the root
}

TEST(MaxtreeReference, ConstantImageIsOneNodeRootedAtZero) {
  for (const DType d : {DType::u8, DType::u16}) {
    const HostImage img = test::const_image(d, 7, 5, 3);
    const Result r = find_variant("seq").run(img, with_connectivity(4));
    for (std::int64_t i = 0; i < img.size(); ++i) EXPECT_EQ(r.parent[i], 0) << i;
    EXPECT_EQ(count_nodes(img, r.parent), 1);
  }
}

TEST(MaxtreeReference, ParentsAreInt32BelowTwoToThe31AndTheWidePathAgrees) {
  const HostImage img = test::random_image(DType::u16, 37, 41, 50, 9, 1000);
  Options o = with_connectivity(8);
  const Result narrow = find_variant("seq").run(img, o);
  EXPECT_FALSE(narrow.parent.wide);
  EXPECT_EQ(narrow.parent.narrow.size(), static_cast<std::size_t>(img.size()));
  o.wide_index = true;
  for (const Variant& v : variants()) {
    if (v.gpu && !gpu_available()) continue;  // Registry/MaxtreeGpuVariant checks them on a GPU
    const Result wide = v.run(img, o);
    EXPECT_TRUE(wide.parent.wide) << v.id;
    EXPECT_EQ(as_vector(wide.parent), as_vector(narrow.parent)) << v.id;
  }
}

TEST(MaxtreeReference, AreaOpeningMatchesBruteForce) {
  for (const test::Input& in : test::small_inputs(5)) {
    for (const int c : {4, 8}) {
      const Result tree = find_variant("seq").run(in.image, with_connectivity(c));
      const test::MaxtreeOracle oracle(in.image, c);
      for (const std::int64_t a : {std::int64_t(1), std::int64_t(2), std::int64_t(3), std::int64_t(7), std::int64_t(40),
                                   in.image.size(), in.image.size() + 1}) {
        for (const int threads : {1, 3}) {
          const HostImage out = area_opening(in.image, tree.parent, a, threads);
          ASSERT_EQ(out.dtype(), in.image.dtype());
          ASSERT_EQ(test::values_of(out), oracle.area_opening(a))
              << in.name << " connectivity " << c << " area " << a << " threads " << threads;
        }
      }
    }
  }
}

TEST(MaxtreeReference, AreaOpeningOfOneIsTheIdentityAndAboveTheImageIsItsMinimum) {
  for (const test::Input& in : test::large_inputs(6)) {
    const Result tree = find_variant("seq").run(in.image, with_connectivity(8));
    const auto values = test::values_of(in.image);
    EXPECT_EQ(test::values_of(area_opening(in.image, tree.parent, 1, 2)), values) << in.name;
    const std::uint32_t lowest = *std::min_element(values.begin(), values.end());
    const auto flat = test::values_of(area_opening(in.image, tree.parent, in.image.size() + 5, 2));
    EXPECT_EQ(flat, std::vector<std::uint32_t>(values.size(), lowest)) << in.name;
  }
}

// Another library's tree (scikit-image's representatives are not the smallest pixel of a node):
// seq's tree re-rooted so that every node's representative is its LARGEST pixel, every other
// pixel of the node pointing to it and the representative to the parent node's, maps back to
// seq's normal form exactly; what is no tree is one clear error.
TEST(MaxtreeReference, NormalFormOfAnotherRepresentationIsSeqs) {
  for (const test::Input& in : test::small_inputs(5))
    for (const int c : {4, 8}) {
      const Result seq = find_variant("seq").run(in.image, with_connectivity(c));
      const std::int64_t n = in.image.size();
      const std::vector<std::int64_t> canon_parent = as_vector(seq.parent);
      const std::vector<std::uint32_t> f = test::values_of(in.image);
      // The node of p: its canonical pixel (itself when canonical); the largest pixel per node.
      auto node = [&](std::int64_t p) {
        const std::int64_t q = canon_parent[p];
        return (q != p && f[q] == f[p]) ? q : p;
      };
      std::vector<std::int64_t> largest(static_cast<std::size_t>(n), -1);
      for (std::int64_t p = 0; p < n; ++p) largest[node(p)] = std::max(largest[node(p)], p);
      std::vector<std::int64_t> other(static_cast<std::size_t>(n));
      for (std::int64_t p = 0; p < n; ++p) {
        const std::int64_t rep = largest[node(p)];
        if (p != rep) {
          other[p] = rep;
        } else {
          const std::int64_t up = canon_parent[node(p)];  // the canonical pixel's parent: the parent node's
          other[p] = up == node(p) ? p : largest[node(up)];
        }
      }
      EXPECT_EQ(as_vector(normal_form_of(in.image, other)), canon_parent) << in.name << ", connectivity " << c;
    }
  const HostImage img = test::random_image(DType::u8, 5, 4, 3, 1);
  std::vector<std::int64_t> par(20);
  for (std::int64_t p = 0; p < 20; ++p) par[p] = p;
  EXPECT_THROW(normal_form_of(img, std::vector<std::int64_t>(19, 0)), Error);  // wrong size
  par[3] = 20;
  EXPECT_THROW(normal_form_of(img, par), Error);  // out of range
  const HostImage flat = test::const_image(DType::u8, 5, 4, 7);
  par[3] = 4;
  par[4] = 3;  // a same-level cycle
  EXPECT_THROW(normal_form_of(flat, par), Error);
  const HostImage ramp = test::checker_image(DType::u8, 5, 4, 1, 0, 9);
  std::vector<std::int64_t> up(20, 1);  // pixel 1 is 9, pixel 0 is 0: 0's parent above it
  EXPECT_THROW(normal_form_of(ramp, up), Error);
}

TEST(MaxtreeReference, BadInputIsRefusedWithOneLine) {
  auto message = [](const HostImage& img, const Options& o) {
    try {
      find_variant("seq").run(img, o);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(HostImage(DType::f32, Shape::d2(3, 3)), {}).find("uint8 or uint16"), std::string::npos);
  EXPECT_NE(message(HostImage(DType::u8, Shape::d3(3, 3, 2)), {}).find("2-D"), std::string::npos);
  EXPECT_NE(message(HostImage(DType::u8, Shape::d1(5)), {}).find("2-D"), std::string::npos);
  // An empty image cannot be built (HostImage refuses it); the CLI test reads an empty .npy.
  EXPECT_NE(message(HostImage(DType::u8, Shape::d2(3, 3)), with_connectivity(6)).find("4 or 8"), std::string::npos);
  Options zero;
  zero.area = 0;
  EXPECT_THROW(find_area_variant("seq").run(test::const_image(DType::u8, 2, 2, 1), zero), Error);
}

}  // namespace
}  // namespace repix::maxtree
