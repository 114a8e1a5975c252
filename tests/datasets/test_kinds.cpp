// The registry of dataset kinds (datasets/kind.hpp, kinds.cpp): every kind described and
// listed in registration order, a default spec of each round-trips through its canonical form,
// and what the registry says a kind produces is what it produces.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "datasets/datasets.hpp"
#include "datasets/kind.hpp"

namespace repix::datasets {
namespace {

// The smallest spec of a kind: its defaults on a small 2D shape, or a path for file-like kinds
// (parsing does not open the file).
std::string default_spec(const Kind& k, const std::string& shape = "16x8") {
  return k.name + ":" + (k.takes_path ? std::string("some/dir/img.npy") : shape);
}

TEST(Kinds, EveryKindIsDescribed) {
  const auto& all = registered_kinds();
  ASSERT_FALSE(all.empty());
  std::set<std::string> names;
  for (const Kind& k : all) {
    EXPECT_FALSE(k.name.empty());
    EXPECT_TRUE(names.insert(k.name).second) << "kind '" << k.name << "' registered twice";
    EXPECT_FALSE(k.description.empty()) << k.name;
    EXPECT_EQ(k.description.find('\n'), std::string::npos) << k.name;
    std::set<std::string> keys(k.keys.begin(), k.keys.end());
    EXPECT_EQ(keys.size(), k.keys.size()) << k.name << ": a key listed twice";
    for (const auto& mk : k.marker_keys) EXPECT_EQ(keys.count(mk), 1u) << k.name << ": marker key " << mk;
    EXPECT_TRUE(k.canonicalise && k.generate && k.open_source && k.chunk_addressable && k.dtype && k.shape)
        << k.name << ": a Kind function is missing";
  }
}

TEST(Kinds, ListedExactlyAsRegistered) {
  std::vector<std::pair<std::string, std::string>> want;
  for (const Kind& k : registered_kinds()) want.emplace_back(k.name, k.description);
  EXPECT_EQ(kinds(), want);  // what `repix list datasets` shows
  EXPECT_EQ(spec_kinds(), want);
  for (const Kind& k : registered_kinds()) EXPECT_EQ(&find_kind(k.name), &k) << k.name;
}

TEST(Kinds, DefaultSpecsRoundTrip) {
  for (const Kind& k : registered_kinds()) {
    std::vector<std::string> shapes = {"16x8"};
    if (!k.takes_path && !k.two_d_only) shapes = {"16x8", "33", "4x3x2"};
    for (const auto& shape : shapes) {
      const std::string text = default_spec(k, shape);
      const Spec s = Spec::parse(text);
      EXPECT_EQ(s.kind, k.name) << text;
      const std::string canon = s.str();
      EXPECT_EQ(canon.rfind(k.name + ":", 0), 0u) << canon;
      EXPECT_EQ(Spec::parse(canon).str(), canon) << "round trip of " << text;
      EXPECT_EQ(canonical(s).str(), canon) << text;
      for (const auto& [key, value] : s.params)
        EXPECT_NE(std::find(k.keys.begin(), k.keys.end(), key), k.keys.end()) << canon << ": " << key;
    }
  }
}

TEST(Kinds, TwoDimensionalOnlyKindsRefuseOtherShapes) {
  for (const Kind& k : registered_kinds()) {
    if (!k.two_d_only) continue;
    for (const char* shape : {"64", "8x8x8"}) {
      const std::string text = default_spec(k, shape);
      try {
        Spec::parse(text);
        ADD_FAILURE() << "no error for " << text;
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(k.name + " is 2D only"), std::string::npos) << e.what();
      }
    }
  }
}

// The registry's dtype, shape and chunk-addressability agree with what generate and
// open_source produce, for every generated kind.
TEST(Kinds, RegistryDescribesWhatIsGenerated) {
  for (const Kind& k : registered_kinds()) {
    if (k.takes_path) continue;  // file: needs a file (tests/datasets/test_io.cpp)
    const Spec s = Spec::parse(default_spec(k));
    const HostImage img = generate(s);
    EXPECT_EQ(spec_dtype(s), img.dtype()) << k.name;
    EXPECT_EQ(spec_shape(s), img.shape()) << k.name;
    auto src = open_source(s);
    EXPECT_EQ(src->dtype(), img.dtype()) << k.name;
    EXPECT_EQ(src->shape(), img.shape()) << k.name;
    HostImage slabs(img.dtype(), img.shape());
    src->read(0, slab_count(img.shape()), slabs.raw());
    EXPECT_EQ(slabs.content_hash(), img.content_hash()) << k.name;
    EXPECT_FALSE(is_marker_spec(s)) << k.name;
  }
}

// Only a kind's own marker keys make a marker: blobs' radius is its own parameter.
// The peak host memory each kind's generator takes, per output byte (measured; kind.hpp), and
// the image bytes it is a multiple of.
TEST(Kinds, PeakHostBytesFollowEachGeneratorsWorkingMemory) {
  struct Case {
    std::string spec;
    std::uint64_t bytes, peak;
  };
  const Case cases[] = {{"uniform:100x50:dtype=uint8", 5000, 5000},
                        {"uniform:100x50:dtype=float32", 20000, 20000},
                        {"grf:100x50", 20000, 100000},
                        {"noise-mask:100x50", 5000, 20000},
                        {"noise-mask:100x50:marker=opening", 5000, 20000},
                        {"tissue:100x50:marker=h-minus", 5000, 30000},
                        {"blobs:10x10x10", 1000, 1000},
                        {"sparse:4096x4096", 1u << 24, 1u << 24}};
  for (const Case& c : cases) {
    EXPECT_EQ(image_bytes(Spec::parse(c.spec)), c.bytes) << c.spec;
    EXPECT_EQ(peak_host_bytes(Spec::parse(c.spec)), c.peak) << c.spec;
  }
  // Sizes that cannot be held are refused before anything is generated or allocated.
  EXPECT_EQ(peak_host_bytes(Spec::parse("tissue:1048576x1048576")), 6ull << 40);
  try {
    generate("tissue:1048576x1048576");
    ADD_FAILURE() << "6 TiB generated";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("generating tissue:1048576x1048576"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("GB of host memory"), std::string::npos) << e.what();
  }
  EXPECT_THROW(open_source(Spec::parse("grf:1048576x1048576")), Error);         // held whole: refused
  EXPECT_NO_THROW(open_source(Spec::parse("uniform:1048576x1048576x256")));      // streamed: fine
}

TEST(Kinds, MaskSpecRemovesOnlyMarkerKeys) {
  const Spec blobs = Spec::parse("blobs:64x64:radius=24:fill=0.45");
  EXPECT_FALSE(is_marker_spec(blobs));
  EXPECT_EQ(mask_spec(blobs).str(), blobs.str());
  const Spec marker = Spec::parse("noise-mask:64x64:sigma=2:marker=opening:radius=3");
  EXPECT_TRUE(is_marker_spec(marker));
  EXPECT_EQ(mask_spec(marker).str(), "noise-mask:64x64:sigma=2:seed=1");
}

// Adding a kind includes its row in the table of datasets/README.md.
TEST(Kinds, ReadmeTableHasEveryKind) {
  std::ifstream in(std::string(REPIX_SOURCE_DIR) + "/datasets/README.md");
  ASSERT_TRUE(in) << "datasets/README.md not found";
  std::stringstream text;
  text << in.rdbuf();
  for (const Kind& k : registered_kinds())
    EXPECT_NE(text.str().find("| `" + k.name + "` |"), std::string::npos) << k.name << " has no row in datasets/README.md";
}

}  // namespace
}  // namespace repix::datasets
