// Generators: golden checksums (cross-machine determinism), chunk-addressability, independence
// of the thread count, and the statistics each kind promises.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>
#include <vector>

#include "core/philox.hpp"
#include "datasets/datasets.hpp"

namespace repix::datasets {
namespace {

std::string hex(std::uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// The bytes of every kind, 2D and 3D, every dtype. If one of these changes, datasets generated
// on different machines or by different versions no longer agree: that is a bug unless the
// generator was changed on purpose (then bump the golden values and say so in the changelog).
TEST(Generators, GoldenChecksums) {
  const std::pair<const char*, const char*> golden[] = {
      {"uniform:37x23:levels=256", "f87263e13e7342c9"},
      {"uniform:17x9x5:levels=1000:seed=3", "542ec22a41a549a1"},
      {"uniform:31x7:seed=5", "c549d182004cb0b3"},
      {"uniform:9x8x7:levels=5:dtype=float32:seed=3", "d7b30bdb2e530055"},
      {"uniform:101", "9b1d2c1fdeca2ffb"},
      {"grf:64x64", "3642a3b6efc96cdc"},
      {"grf:32x32x32:seed=2", "6729ea783705a4e6"},
      {"grf:30x20:alpha=2.5:seed=7", "8b0efc298bec53e1"},
      {"const:5x6x7:value=1234:dtype=uint16", "5b9156c19904f59c"},
      {"checker:13x11x9:period=3", "f6f4dc5de82ad190"},
      {"checker:20x20:period=4:dtype=float32:low=-1.5:high=2", "e90ae9d83d61c4c2"},
      {"ramp:300x3:dtype=uint16", "8face05fe47b826c"},
      {"ramp:10x10x10:dtype=float32", "ad3f895c09f9fed6"},
      {"blobs:64x48:radius=5:fill=0.3", "7464190135a98d5e"},
      {"blobs:24x24x24:radius=4:fill=0.2:seed=9", "4d014c471d77d04c"},
      {"noise-mask:64x48", "cf443e0920c12277"},
      {"noise-mask:40x30:sigma=1.5:seed=3", "bf70d314ec0368e3"},
      {"tissue:64x64:coverage=25", "1eebd73b187dd3fc"},
      {"tissue:50x40:coverage=100:seed=2", "ff881c909c5cede5"},
      {"noise-mask:64x48:marker=opening", "3f44b2aa6bbbd145"},
      {"noise-mask:64x48:marker=opening:radius=3", "5503ebc16aed2aa6"},
      {"tissue:64x64:coverage=75:marker=h-minus:h=30", "347c09205f6c6d11"},
      {"noise-mask:64x48:marker=frame", "d6e12dae8632abdb"},
      {"tissue:64x64:coverage=50:marker=single-seed", "6382d93331148bbc"},
      {"sparse:64x48:density=0.05:seed=3", "fb0a123c8454f7ad"},
      {"sparse:300x200", "009f1a122707f1f8"},
  };
  for (const auto& [spec, want] : golden)
    EXPECT_EQ(hex(generate(spec).content_hash()), want) << spec;
}

// Exact values where the definition is simple enough to state.
TEST(Generators, ValuesFollowTheirDefinitions) {
  {
    const HostImage img = generate("uniform:1000:levels=7:seed=11");
    for (std::int64_t i = 0; i < img.size(); ++i)
      ASSERT_EQ(img.data<std::uint8_t>()[i],
                philox::uniform_below(philox::bits_at(11, static_cast<std::uint64_t>(i), kStreamUniform), 7));
  }
  {
    const HostImage img = generate("uniform:1000");
    for (std::int64_t i = 0; i < img.size(); ++i)
      ASSERT_EQ(img.data<float>()[i], philox::uniform_float(philox::bits_at(1, static_cast<std::uint64_t>(i), kStreamUniform)));
  }
  {
    const HostImage img = generate("checker:6x6x6:period=2:low=3:high=9");
    const auto v = img.view<std::uint8_t>();
    EXPECT_EQ(v(0, 0, 0), 3);
    EXPECT_EQ(v(1, 1, 1), 3);
    EXPECT_EQ(v(2, 0, 0), 9);
    EXPECT_EQ(v(0, 2, 0), 9);
    EXPECT_EQ(v(0, 0, 2), 9);
    EXPECT_EQ(v(2, 2, 0), 3);
    EXPECT_EQ(v(5, 5, 5), 3);
    EXPECT_EQ(v(3, 3, 3), 9);
  }
  {
    const HostImage img = generate("ramp:300x2");
    EXPECT_EQ(img.data<std::uint8_t>()[255], 255);
    EXPECT_EQ(img.data<std::uint8_t>()[256], 0);
    EXPECT_EQ(img.data<std::uint8_t>()[599], 599 % 256);
    const HostImage f = generate("ramp:70000:dtype=float32");
    EXPECT_EQ(f.data<float>()[69999], 69999.0f);
  }
  {
    const HostImage img = generate("const:3x3:value=-2.5:dtype=float32");
    for (std::int64_t i = 0; i < img.size(); ++i) ASSERT_EQ(img.data<float>()[i], -2.5f);
  }
}

TEST(Generators, UniformLevelsAndRange) {
  const HostImage u16 = generate("uniform:300x300:levels=1000");
  ASSERT_EQ(u16.dtype(), DType::u16);
  std::set<int> seen;
  for (std::int64_t i = 0; i < u16.size(); ++i) seen.insert(u16.data<std::uint16_t>()[i]);
  EXPECT_EQ(seen.size(), 1000u);
  EXPECT_EQ(*seen.begin(), 0);
  EXPECT_EQ(*seen.rbegin(), 999);
  const HostImage f = generate("uniform:300x300");
  double sum = 0;
  for (std::int64_t i = 0; i < f.size(); ++i) {
    const float v = f.data<float>()[i];
    ASSERT_GE(v, 0.0f);
    ASSERT_LT(v, 1.0f);
    sum += v;
  }
  EXPECT_NEAR(sum / f.size(), 0.5, 0.01);
  EXPECT_NE(generate("uniform:64x64:seed=1").content_hash(), generate("uniform:64x64:seed=2").content_hash());
}

// Reads the whole source in uneven slab ranges.
std::vector<char> read_all(SlabSource& src) {
  const Shape sh = src.shape();
  const std::size_t slab_bytes = static_cast<std::size_t>(slab_elems(sh)) * dtype_size(src.dtype());
  std::vector<char> out(slab_bytes * static_cast<std::size_t>(slab_count(sh)));
  std::int64_t s = 0, step = 1;
  while (s < slab_count(sh)) {
    const std::int64_t e = std::min(slab_count(sh), s + step);
    src.read(s, e, out.data() + s * slab_bytes);
    s = e;
    step = step * 2 + 1;
  }
  return out;
}

TEST(Generators, SourcesMatchGenerate) {
  for (const char* spec : {"uniform:37x23:levels=256", "uniform:13x11x9:levels=1000", "uniform:101:seed=4",
                           "uniform:7x5x3", "const:13x11x9:value=7", "checker:37x23:period=4:dtype=uint16",
                           "checker:13x11x9:period=2:dtype=float32", "ramp:13x11x9:dtype=uint16", "grf:20x12",
                           "blobs:30x20x10:radius=3:fill=0.4"}) {
    const Spec s = Spec::parse(spec);
    const HostImage img = generate(s);
    auto src = open_source(s);
    EXPECT_EQ(src->dtype(), img.dtype()) << spec;
    EXPECT_EQ(src->shape(), img.shape()) << spec;
    EXPECT_EQ(spec_dtype(s), img.dtype()) << spec;
    EXPECT_EQ(spec_shape(s), img.shape()) << spec;
    const std::vector<char> bytes = read_all(*src);
    ASSERT_EQ(bytes.size(), img.bytes()) << spec;
    EXPECT_EQ(std::memcmp(bytes.data(), img.raw(), img.bytes()), 0) << spec;
  }
  EXPECT_TRUE(is_chunk_addressable(Spec::parse("uniform:8x8")));
  EXPECT_TRUE(is_chunk_addressable(Spec::parse("checker:8x8")));
  EXPECT_TRUE(is_chunk_addressable(Spec::parse("sparse:8x8")));
  EXPECT_FALSE(is_chunk_addressable(Spec::parse("grf:8x8")));
  EXPECT_FALSE(is_chunk_addressable(Spec::parse("blobs:8x8")));
}

// A slab in the middle of a 64 GiB (uint8) / 256 GiB (float32) volume, produced on its own.
TEST(Generators, MiddleSlabOfHugeVolumeAlone) {
  for (const char* spec : {"uniform:4096x4096x4096:levels=256", "uniform:4096x4096x4096"}) {
    auto src = open_source(Spec::parse(spec));
    const std::int64_t slab = 2011, per = 4096LL * 4096;
    std::vector<char> buf(static_cast<std::size_t>(per) * dtype_size(src->dtype()));
    src->read(slab, slab + 1, buf.data());
    for (std::int64_t j : {std::int64_t(0), std::int64_t(1), std::int64_t(4095), std::int64_t(123457), per - 1}) {
      const auto i = static_cast<std::uint64_t>(slab * per + j);
      const std::uint32_t w = philox::bits_at(1, i, kStreamUniform);
      if (src->dtype() == DType::u8)
        ASSERT_EQ(reinterpret_cast<const std::uint8_t*>(buf.data())[j], philox::uniform_below(w, 256)) << j;
      else
        ASSERT_EQ(reinterpret_cast<const float*>(buf.data())[j], philox::uniform_float(w)) << j;
    }
  }
  auto src = open_source(Spec::parse("uniform:4096x4096x4096"));
  EXPECT_THROW(src->read(4095, 4097, nullptr), Error);
}

TEST(Generators, SameBytesForAnyThreadCount) {
  const int saved = omp_get_max_threads();
  std::vector<std::uint64_t> hashes;
  for (int threads : {1, 3}) {
    omp_set_num_threads(threads);
    std::uint64_t h = 0;
    for (const char* spec : {"grf:48x40x20:seed=3", "grf:33x17", "uniform:700x700:levels=9", "checker:700x700"})
      h = h * 31 + generate(spec).content_hash();
    hashes.push_back(h);
  }
  omp_set_num_threads(saved);
  EXPECT_EQ(hashes[0], hashes[1]);
}

struct FieldStats {
  double mean = 0, sd = 0;
  std::size_t distinct = 0;
  bool on_grid = true;  // every value a multiple of 0.01
};

FieldStats stats_of(const HostImage& img) {
  FieldStats st;
  const float* v = img.data<float>();
  std::set<float> values;
  double s = 0, s2 = 0;
  for (std::int64_t i = 0; i < img.size(); ++i) {
    s += v[i];
    values.insert(v[i]);
    const double c = static_cast<double>(v[i]) * 100;
    st.on_grid = st.on_grid && std::fabs(c - std::round(c)) < 1e-3;
  }
  st.mean = s / img.size();
  for (std::int64_t i = 0; i < img.size(); ++i) s2 += (v[i] - st.mean) * (v[i] - st.mean);
  st.sd = std::sqrt(s2 / img.size());
  st.distinct = values.size();
  return st;
}

TEST(Generators, GrfStatistics) {
  for (const char* spec : {"grf:128x128", "grf:64x64x64:seed=5", "grf:100x90:seed=2", "grf:128x128:alpha=2:seed=3"}) {
    const HostImage img = generate(spec);
    ASSERT_EQ(img.dtype(), DType::f32);
    const FieldStats st = stats_of(img);
    EXPECT_LT(std::fabs(st.mean), 0.01) << spec;
    EXPECT_LT(std::fabs(st.sd - 1), 0.01) << spec;
    EXPECT_TRUE(st.on_grid) << spec;
    EXPECT_GE(st.distinct, 300u) << spec;
    EXPECT_LE(st.distinct, 1200u) << spec;
  }
  EXPECT_NE(generate("grf:64x64:seed=1").content_hash(), generate("grf:64x64:seed=2").content_hash());
}

// The spectral slope shows in the correlation of neighbours: alpha = 3 gives a smooth field,
// alpha = 0 white noise.
TEST(Generators, GrfAlphaShapesTheSpectrum) {
  const auto lag1 = [](const HostImage& img) {
    const auto v = img.view<float>();
    double c = 0, n = 0;
    for (std::int64_t y = 0; y < img.shape().ny; ++y)
      for (std::int64_t x = 0; x + 1 < img.shape().nx; ++x, ++n) c += v(x, y) * v(x + 1, y);
    return c / n;
  };
  EXPECT_GT(lag1(generate("grf:128x128:alpha=3")), 0.8);
  EXPECT_LT(std::fabs(lag1(generate("grf:128x128:alpha=0"))), 0.05);
}

TEST(Generators, GrfDegenerateShapes) {
  const HostImage one = generate("grf:1x1");  // only the zeroed DC term
  EXPECT_EQ(one.data<float>()[0], 0.0f);
  const HostImage line = generate("grf:1x64");
  EXPECT_LT(std::fabs(stats_of(line).sd - 1), 0.02);
}

TEST(Generators, BlobsCoverTheirFill) {
  for (const char* spec : {"blobs:200x150:radius=6:fill=0.45", "blobs:40x40x40:radius=4:fill=0.3:seed=2",
                           "blobs:500:radius=3:fill=0.5", "blobs:50x50:radius=0.5:fill=0.9"}) {
    const Spec s = Spec::parse(spec);
    const HostImage img = generate(s);
    std::int64_t on = 0;
    for (std::int64_t i = 0; i < img.size(); ++i) {
      const std::uint8_t v = img.data<std::uint8_t>()[i];
      ASSERT_TRUE(v == 0 || v == 255) << spec;
      on += v == 255;
    }
    const double fill = s.get_double("fill", 0), frac = static_cast<double>(on) / img.size();
    EXPECT_GE(frac, fill) << spec;
    EXPECT_LT(frac, fill + 0.02) << spec;  // at most one ball past the target
  }
}

TEST(Generators, PinnedRequestWorksWithoutGpu) {
  const HostImage a = generate("uniform:64x64:levels=256", true);
  EXPECT_EQ(a.content_hash(), generate("uniform:64x64:levels=256").content_hash());
}

}  // namespace
}  // namespace repix::datasets

namespace repix::datasets {
namespace {
// sparse: the background fraction is the density, and a slab read alone equals the whole image's.
TEST(Generators, SparseDensityAndSlabs) {
  const HostImage img = generate("sparse:1000x500:density=0.01:seed=4");
  std::int64_t zeros = 0;
  for (std::int64_t i = 0; i < img.size(); ++i) zeros += img.data<std::uint8_t>()[i] == 0;
  EXPECT_NEAR(static_cast<double>(zeros) / img.size(), 0.01, 0.001);
  std::vector<std::uint8_t> slab(1000 * 7);
  open_source(Spec::parse("sparse:1000x500:density=0.01:seed=4"))->read(123, 130, slab.data());
  EXPECT_TRUE(std::equal(slab.begin(), slab.end(), img.data<std::uint8_t>() + 123 * 1000));
  EXPECT_THROW(Spec::parse("sparse:8x8:density=1.5"), Error);
  EXPECT_EQ(Spec::parse("sparse:8x8").str(), "sparse:8x8:density=0.001:seed=1");
}
}  // namespace
}  // namespace repix::datasets
