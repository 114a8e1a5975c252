// The row-part merge of the distributed runs (maxtree/parts.hpp) against seq on the whole image:
// every image of the variant tests cut into 1 to 6 parts, even splits and uneven ones (one-row
// parts, a part of all but one row), both connectivities, the parts' trees built by seq and by omp
// with the wide index; the merged parent image must equal seq's bit for bit, and the area opening
// its area_opening for thresholds from 1 to past the image's size. A comb whose teeth cross every
// cut checks components that leave a part and come back through another.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "maxtree/maxtree.hpp"
#include "maxtree/parts.hpp"
#include "maxtree/parent_compare.hpp"
#include "maxtree/test_images.hpp"

namespace repix::maxtree {
namespace {

// Rows [first, last) of `img` as an image of their own.
HostImage rows_of(const HostImage& img, std::int64_t first, std::int64_t last) {
  const Shape s = img.shape();
  HostImage out(img.dtype(), Shape::d2(s.nx, last - first));
  const std::size_t row = static_cast<std::size_t>(s.nx) * dtype_size(img.dtype());
  std::memcpy(out.raw(), static_cast<const char*>(img.raw()) + static_cast<std::size_t>(first) * row,
              static_cast<std::size_t>(last - first) * row);
  return out;
}

// The cuts of `ny` rows: even splits into 1..6 parts (ranks past the rows get none), then uneven
// ones: one-row parts at both ends, and a middle part of one row.
std::vector<std::vector<std::int64_t>> splits(std::int64_t ny) {
  std::vector<std::vector<std::int64_t>> out;
  for (std::int64_t parts = 1; parts <= 6; ++parts) {
    std::vector<std::int64_t> cuts = {0};
    for (std::int64_t k = 1; k <= parts; ++k) cuts.push_back(std::min(ny, (ny * k + parts - 1) / parts));
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    out.push_back(cuts);
  }
  if (ny >= 3) {
    out.push_back({0, 1, ny});
    out.push_back({0, ny - 1, ny});
    out.push_back({0, 1, 2, ny});
    out.push_back({0, ny / 2, ny / 2 + 1, ny});
  }
  return out;
}

struct Merged {
  ParentImage parent;
  HostImage opened;
};

// The image cut at `cuts`, each part's tree built by `tree` alone, merged; the area opening with
// `area` (0: none).
Merged merged(const HostImage& img, const std::vector<std::int64_t>& cuts, const Variant& tree, const Options& opt,
              std::int64_t area) {
  const Shape s = img.shape();
  std::vector<HostImage> rows;
  for (std::size_t i = 0; i + 1 < cuts.size(); ++i) rows.push_back(rows_of(img, cuts[i], cuts[i + 1]));
  std::vector<parts::PartTree> trees(rows.size());
  std::vector<parts::Border> borders;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    trees[i].build(rows[i], tree.run(rows[i], opt).parent, cuts[i], s.ny, area > 0, opt.threads);
    // Built twice: the second build reuses the first's storage and must not see its leftovers.
    trees[i].build(rows[i], tree.run(rows[i], opt).parent, cuts[i], s.ny, area > 0, opt.threads);
    // Through bytes, as the ranks send them.
    borders.push_back(parts::Border::from_bytes(trees[i].border().bytes()));
  }
  const parts::Merged m = parts::merge(borders, opt.connectivity, area);
  Merged out;
  out.parent.shape = s;
  out.parent.wide = false;
  out.parent.narrow.resize(static_cast<std::size_t>(s.size()));
  if (area > 0) out.opened = HostImage(img.dtype(), s);
  ParentImage p;  // reused from part to part, as a rank reuses its own
  HostImage o;
  for (std::size_t i = 0; i < trees.size(); ++i) {
    trees[i].whole_image_parents(m, opt.threads, p);
    EXPECT_FALSE(p.wide);
    for (std::int64_t k = 0; k < p.size(); ++k)
      out.parent.narrow[static_cast<std::size_t>(cuts[i] * s.nx + k)] = static_cast<std::int32_t>(p[k]);
    if (area > 0) {
      trees[i].area_opening(m, area, opt.threads, o);
      std::memcpy(static_cast<char*>(out.opened.raw()) + static_cast<std::size_t>(cuts[i] * s.nx) * dtype_size(img.dtype()),
                  o.raw(), o.bytes());
    }
  }
  return out;
}

using test::where;

std::string cuts_name(const std::vector<std::int64_t>& cuts) {
  std::string s;
  for (const std::int64_t c : cuts) s += (s.empty() ? "" : ",") + std::to_string(c);
  return s;
}

// A comb: teeth of level 9 hanging from a top bar, each tooth's tip joined to its neighbour's at
// the bottom in turn (a serpentine), on a level-1 background with level-5 plateaus between the
// teeth: components that cross every cut of a split down and up again.
HostImage comb(std::int64_t nx, std::int64_t ny) {
  HostImage img(DType::u8, Shape::d2(nx, ny));
  auto* f = img.data<std::uint8_t>();
  for (std::int64_t y = 0; y < ny; ++y)
    for (std::int64_t x = 0; x < nx; ++x) {
      std::uint8_t v = (x % 4 == 2) ? 5 : 1;
      if (x % 4 == 0) v = 9;                                     // a tooth
      if (y == 0 && (x / 4) % 2 == 0) v = 9;                     // the bar joins teeth 0-1, 2-3, ...
      if (y == ny - 1 && (x / 4) % 2 == 1 && x % 4 < 3) v = 9;   // the tips join teeth 1-2, 3-4, ...
      if (y == ny - 1 && (x / 4) % 2 == 0 && x % 4 >= 1 && x > 3) v = 9;
      f[y * nx + x] = v;
    }
  return img;
}

std::vector<test::Input> inputs(std::uint64_t seed) {
  std::vector<test::Input> v = test::small_inputs(seed);
  for (test::Input& in : test::large_inputs(seed)) v.push_back(std::move(in));
  v.push_back({"comb-41x23", comb(41, 23)});
  v.push_back({"comb-64x7", comb(64, 7)});
  return v;
}

TEST(MaxtreeParts, MergedParentImageEqualsSeqForEverySplit) {
  for (const test::Input& in : inputs(31)) {
    for (const int c : {4, 8}) {
      Options o;
      o.connectivity = c;
      o.threads = 2;
      const ParentImage want = find_variant("seq").run(in.image, o).parent;
      for (const auto& cuts : splits(in.image.shape().ny)) {
        const Merged got = merged(in.image, cuts, find_variant("seq"), o, 0);
        ASSERT_TRUE(got.parent == want) << in.name << ", connectivity " << c << ", cuts " << cuts_name(cuts) << ": "
                                        << where(got.parent, want);
      }
    }
  }
}

// The parts' trees from omp with int64 parents: the merge reads either index type.
TEST(MaxtreeParts, PartsFromOmpWithWideIndexMergeTheSame) {
  for (const test::Input& in : test::large_inputs(32)) {
    Options o;
    o.connectivity = 8;
    o.threads = 2;
    o.tile = 16;
    o.wide_index = true;
    const ParentImage want = find_variant("seq").run(in.image, o).parent;
    for (const auto& cuts : splits(in.image.shape().ny)) {
      const Merged got = merged(in.image, cuts, find_variant("omp"), o, 0);
      ASSERT_TRUE(got.parent == want) << in.name << ", cuts " << cuts_name(cuts) << ": " << where(got.parent, want);
    }
  }
}

TEST(MaxtreeParts, MergedAreaOpeningEqualsTheWholeImagesForEverySplit) {
  for (const test::Input& in : inputs(33)) {
    const std::int64_t n = in.image.size();
    for (const int c : {4, 8}) {
      Options o;
      o.connectivity = c;
      o.threads = 2;
      const ParentImage whole = find_variant("seq").run(in.image, o).parent;
      for (const std::int64_t area : {std::int64_t(1), std::int64_t(2), std::int64_t(7), std::int64_t(50), n, n + 1}) {
        const HostImage want = area_opening(in.image, whole, area, 1);
        for (const auto& cuts : splits(in.image.shape().ny)) {
          const Merged got = merged(in.image, cuts, find_variant("seq"), o, area);
          ASSERT_EQ(0, std::memcmp(got.opened.raw(), want.raw(), want.bytes()))
              << in.name << ", connectivity " << c << ", area " << area << ", cuts " << cuts_name(cuts);
        }
      }
    }
  }
}

// A part of an image of 2^31 pixels or more writes int64 parents (the single process's dtype),
// with the same values: the image's other rows are said to lie below (no part there merges).
TEST(MaxtreeParts, PartOfAnImageOf2To31PixelsWritesInt64Parents) {
  const HostImage img = test::random_image(DType::u16, 13, 11, 5, 7);
  Options o;
  const ParentImage whole = find_variant("seq").run(img, o).parent;
  const std::int64_t rows_for_2_31 = ((std::int64_t(1) << 31) + 12) / 13;
  parts::PartTree small, huge;
  small.build(img, find_variant("seq").run(img, o).parent, 0, 11, false, 1);
  huge.build(img, find_variant("seq").run(img, o).parent, 0, rows_for_2_31, false, 1);
  ParentImage a, b;
  small.whole_image_parents(parts::merge({small.border()}, 4, 0), 1, a);
  huge.whole_image_parents(parts::merge({huge.border()}, 4, 0), 1, b);
  EXPECT_FALSE(a.wide);
  EXPECT_TRUE(b.wide);
  EXPECT_TRUE(a == whole) << where(a, whole);
  EXPECT_TRUE(b == whole) << where(b, whole);
}

TEST(MaxtreeParts, DamagedBorderBytesAreRefused) {
  const HostImage img = test::random_image(DType::u8, 9, 8, 3, 5);
  const HostImage top = rows_of(img, 0, 4);
  Options o;
  parts::PartTree t;
  t.build(top, find_variant("seq").run(top, o).parent, 0, 8, false, 1);
  std::vector<char> b = t.border().bytes();
  EXPECT_NO_THROW(parts::Border::from_bytes(b));
  b.pop_back();
  EXPECT_THROW(parts::Border::from_bytes(b), Error);
  EXPECT_THROW(parts::Border::from_bytes({}), Error);
}

// Parts that do not meet (a gap between their rows) are an internal error, not a wrong tree.
TEST(MaxtreeParts, PartsThatDoNotMeetAreRefused) {
  const HostImage img = test::random_image(DType::u8, 9, 9, 3, 6);
  const HostImage a = rows_of(img, 0, 3), c = rows_of(img, 6, 9);
  Options o;
  parts::PartTree ta, tc;
  ta.build(a, find_variant("seq").run(a, o).parent, 0, 9, false, 1);
  tc.build(c, find_variant("seq").run(c, o).parent, 6, 9, false, 1);
  EXPECT_THROW(parts::merge({ta.border(), tc.border()}, 4, 0), Error);
}

}  // namespace
}  // namespace repix::maxtree
