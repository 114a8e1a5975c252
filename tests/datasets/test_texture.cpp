// The texture kind: scikit-image's CC0 tiles (datasets/textures/*.npy) mirrored to any 2-D size.
// The oracle is the definition written out independently: the tile read with read_npy and the
// reflection computed as a walk that turns back at each edge.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "datasets/datasets.hpp"
#include "datasets/io.hpp"

namespace repix::datasets {
namespace {

// Position after walking v steps from 0 over 0..n-1, turning back at each end (staying on the
// end pixel for one step: 0 1 .. n-1 n-1 .. 1 0 0 1 ..): the mirror mapping by another route.
std::int64_t walk(std::int64_t v, std::int64_t n) {
  std::int64_t p = 0, dir = 1;
  for (std::int64_t i = 0; i < v; ++i) {
    if ((dir > 0 && p == n - 1) || (dir < 0 && p == 0)) dir = -dir;
    else p += dir;
  }
  return p;
}

TEST(Texture, TilesAre512SquareUint8) {
  for (const char* name : {"camera", "brick", "grass", "gravel"}) {
    const HostImage t = read_npy(std::string(REPIX_SOURCE_DIR) + "/datasets/textures/" + name + ".npy");
    EXPECT_EQ(t.dtype(), DType::u8) << name;
    EXPECT_EQ(t.shape().str(), "512x512") << name;
  }
}

TEST(Texture, MirrorsTheTileOnEveryAxis) {
  const HostImage t = read_npy(std::string(REPIX_SOURCE_DIR) + "/datasets/textures/grass.npy");
  const auto tile = t.view<std::uint8_t>();
  const HostImage img = generate("texture:1300x1100:name=grass");
  ASSERT_EQ(img.dtype(), DType::u8);
  ASSERT_EQ(img.shape().str(), "1300x1100");
  const auto v = img.view<std::uint8_t>();
  for (std::int64_t y = 0; y < 1100; ++y)
    for (std::int64_t x = 0; x < 1300; ++x)
      ASSERT_EQ(v(x, y, 0), tile(walk(x, 512), walk(y, 512), 0)) << x << "," << y;
  // The default tile is camera, and chunks equal the whole image.
  EXPECT_EQ(generate("texture:600x40").content_hash(), generate("texture:600x40:name=camera").content_hash());
  auto src = open_source(Spec::parse("texture:1300x1100:name=grass"));
  std::vector<std::uint8_t> rows(1300 * 7);
  src->read(1000, 1007, rows.data());
  for (std::int64_t i = 0; i < 1300 * 7; ++i) ASSERT_EQ(rows[i], img.data<std::uint8_t>()[1000 * 1300 + i]);
}

// dtype=uint16: Blin et al.'s 16-bit natural images, the 8-bit one times 257 element by element;
// dtype=uint8 is the default spelled out (the same canonical spec, so the same reports and hashes).
TEST(Texture, Uint16IsTheUint8ImageTimes257) {
  const HostImage narrow = generate("texture:700x300:name=brick");
  const HostImage wide = generate("texture:700x300:dtype=uint16:name=brick");
  ASSERT_EQ(wide.dtype(), DType::u16);
  ASSERT_EQ(wide.shape().str(), "700x300");
  for (std::int64_t i = 0; i < narrow.size(); ++i)
    ASSERT_EQ(wide.data<std::uint16_t>()[i], narrow.data<std::uint8_t>()[i] * 257) << i;
  EXPECT_EQ(Spec::parse("texture:64x64:dtype=uint8:name=camera").str(), Spec::parse("texture:64x64:name=camera").str());
  EXPECT_NE(Spec::parse("texture:64x64:dtype=uint16").str().find("dtype=uint16"), std::string::npos);
  auto src = open_source(Spec::parse("texture:700x300:dtype=uint16:name=brick"));
  std::vector<std::uint16_t> rows(700 * 3);
  src->read(100, 103, rows.data());
  for (std::int64_t i = 0; i < 700 * 3; ++i) ASSERT_EQ(rows[i], wide.data<std::uint16_t>()[100 * 700 + i]);
}

TEST(Texture, BadSpecsAreClearErrors) {
  EXPECT_THROW(generate("texture:64x64:dtype=float32"), Error);
  EXPECT_THROW(generate("texture:64x64:name=wood"), Error);
  EXPECT_THROW(generate("texture:8x8x8"), Error);
  try {
    generate("texture:64x64:name=wood");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("camera, brick, grass, gravel"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace repix::datasets
