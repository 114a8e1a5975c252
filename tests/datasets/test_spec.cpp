// Spec grammar: parsing, defaults, canonical form, round trips, and one-line errors that name
// the offending part.
#include <gtest/gtest.h>

#include "datasets/datasets.hpp"
#include "datasets/spec.hpp"

namespace repix::datasets {
namespace {

// Expects parse(text) to throw a repix::Error whose message contains every part of `needles`.
void expect_bad(const std::string& text, std::initializer_list<const char*> needles) {
  try {
    Spec::parse(text);
    ADD_FAILURE() << "no error for '" << text << "'";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    EXPECT_NE(msg.find("'" + text + "'"), std::string::npos) << msg;
    for (const char* n : needles) EXPECT_NE(msg.find(n), std::string::npos) << "'" << n << "' not in: " << msg;
  }
}

TEST(Spec, CanonicalFormsWithDefaults) {
  const std::pair<const char*, const char*> cases[] = {
      {"uniform:8192x8192:levels=256:seed=1", "uniform:8192x8192:levels=256:dtype=uint8:seed=1"},
      {"uniform:64x64", "uniform:64x64:dtype=float32:seed=1"},
      {"uniform:64x64:levels=1000", "uniform:64x64:levels=1000:dtype=uint16:seed=1"},
      {"uniform:64x64:levels=100000", "uniform:64x64:levels=100000:dtype=float32:seed=1"},
      {"uniform:64x64:dtype=uint16", "uniform:64x64:levels=65536:dtype=uint16:seed=1"},
      {"uniform:64:seed=7:levels=2:dtype=float32", "uniform:64:levels=2:dtype=float32:seed=7"},
      {"grf:512x512x512:alpha=3:seed=4", "grf:512x512x512:alpha=3:seed=4"},
      {"grf:64x64", "grf:64x64:alpha=3:seed=1"},
      {"grf:64x64:alpha=2.50", "grf:64x64:alpha=2.5:seed=1"},
      {"const:4x4", "const:4x4:value=0:dtype=uint8"},
      {"const:4x4:dtype=f32:value=0.25", "const:4x4:value=0.25:dtype=float32"},
      {"checker:9x9x9:period=3", "checker:9x9x9:period=3:dtype=uint8:low=0:high=255"},
      {"checker:9x9:dtype=uint16", "checker:9x9:period=8:dtype=uint16:low=0:high=65535"},
      {"checker:9x9:dtype=float32:low=-1", "checker:9x9:period=8:dtype=float32:low=-1:high=1"},
      {"ramp:10x3", "ramp:10x3:dtype=uint8"},
      {"blobs:8192x8192:radius=24:fill=0.45", "blobs:8192x8192:radius=24:fill=0.45:seed=1"},
      {"blobs:100x100", "blobs:100x100:radius=16:fill=0.5:seed=1"},
      {"file:a.npy", "file:a.npy"},
      {"file:/x/2D_128_0.dat:dtype=f32:shape=128x128", "file:/x/2D_128_0.dat:shape=128x128:dtype=float32"},
      {"file:c:/odd:name.raw:shape=4x4:dtype=u8", "file:c:/odd:name.raw:shape=4x4:dtype=uint8"},
  };
  for (const auto& [in, want] : cases) {
    const Spec s = Spec::parse(in);
    EXPECT_EQ(s.str(), want) << in;
    EXPECT_EQ(Spec::parse(s.str()).str(), s.str()) << "round trip of " << in;
  }
}

TEST(Spec, FieldsAndGetters) {
  const Spec s = Spec::parse("grf:512x256x128:alpha=2.5:seed=18446744073709551615");
  EXPECT_EQ(s.kind, "grf");
  EXPECT_EQ(s.shape, Shape::d3(512, 256, 128));
  EXPECT_DOUBLE_EQ(s.get_double("alpha", 0), 2.5);
  EXPECT_EQ(s.get_u64("seed", 0), 18446744073709551615ull);
  EXPECT_EQ(s.get("missing", "dflt"), "dflt");
  const Spec f = Spec::parse("file:/data/x.dat:shape=128x128:dtype=float32");
  EXPECT_TRUE(f.is_file());
  EXPECT_EQ(f.path, "/data/x.dat");
  EXPECT_EQ(f.shape, Shape::d2(128, 128));
  EXPECT_EQ(f.get_dtype(DType::u8), DType::f32);
}

TEST(Spec, HandBuiltSpecGetsDefaults) {
  Spec s;
  s.kind = "uniform";
  s.shape = Shape::d2(3, 4);
  s.params["levels"] = "4";
  EXPECT_EQ(s.str(), "uniform:3x4:levels=4:dtype=uint8:seed=1");
  s.params["bogus"] = "1";
  EXPECT_THROW(s.str(), Error);
}

TEST(Spec, BadSpecsNameTheProblem) {
  expect_bad("", {"empty"});
  expect_bad("unifrom:64x64", {"unknown kind 'unifrom'", "uniform, grf"});
  expect_bad("img.npy", {"file:img.npy"});
  expect_bad("uniform", {"missing shape"});
  expect_bad("uniform:", {"missing shape"});
  expect_bad("uniform:64xq", {"bad shape '64xq'"});
  expect_bad("uniform:0x4", {"positive"});
  expect_bad("uniform:2x2x2x2", {"1 to 3"});
  expect_bad("uniform:64x64:alpha=3", {"unknown key 'alpha'", "levels, dtype, seed"});
  expect_bad("grf:64x64:levels=3", {"unknown key 'levels'", "alpha, seed"});
  expect_bad("uniform:64x64:levels=abc", {"levels='abc'", "not an integer"});
  expect_bad("uniform:64x64:levels=0", {"levels=0", "out of range"});
  expect_bad("uniform:64x64:levels=300:dtype=uint8", {"levels=300", "uint8"});
  expect_bad("uniform:64x64:dtype=int32", {"int32"});
  expect_bad("uniform:64x64:seed=-1", {"seed='-1'"});
  expect_bad("uniform:64x64:seed=99999999999999999999", {"seed=", "out of range"});
  expect_bad("uniform:64x64:levels", {"key=value", "'levels'"});
  expect_bad("uniform:64x64:=3", {"key=value"});
  expect_bad("uniform:64x64:seed=1:seed=2", {"'seed' given twice"});
  expect_bad("grf:64x64:alpha=x3", {"alpha='x3'", "not a number"});
  expect_bad("grf:64x64:alpha=nan", {"alpha='nan'"});
  expect_bad("grf:64x64:alpha=1e999", {"alpha='1e999'", "out of range"});
  expect_bad("const:4x4:value=256", {"value=256", "uint8", "0..255"});
  expect_bad("const:4x4:value=1.5", {"value='1.5'", "not an integer"});
  expect_bad("checker:4x4:period=0", {"period=0"});
  expect_bad("checker:4x4:high=70000:dtype=uint16", {"high=70000", "uint16"});
  expect_bad("blobs:64x64:fill=1", {"fill=1", "(0, 0.99]"});
  expect_bad("blobs:64x64:radius=0", {"radius=0"});
  expect_bad("noise-mask:64x64:sigma=0", {"sigma=0"});
  expect_bad("noise-mask:64", {"2D only"});
  expect_bad("tissue:64x64:coverage=0", {"coverage=0", "1..100"});
  expect_bad("tissue:64x64:marker=closing", {"marker=closing", "opening, h-minus, frame, single-seed"});
  expect_bad("tissue:64x64:radius=3", {"radius= belongs to marker=opening"});
  expect_bad("noise-mask:64x64:marker=frame:h=3", {"h= belongs to marker=h-minus"});
  expect_bad("noise-mask:64x64:marker=h-minus:h=300", {"h=300", "0..255"});
  expect_bad("file:", {"needs a path"});
  expect_bad("file:a.raw:shape=4y4", {"bad shape '4y4'"});
  expect_bad("file:a.raw:bogus=1", {"unknown key 'bogus'", "shape, dtype"});
  expect_bad("uniform:1000000x1000000x1000000", {"too large"});
  // Sides whose product overflows 64 bits are too large, not "missing or empty".
  expect_bad("uniform:4294967296x4294967296", {"too large", "2^48"});
  expect_bad("uniform:4294967296x4294967296x4294967296", {"too large"});
  expect_bad("file:x.raw:shape=4294967296x4294967296:dtype=uint8", {"too large"});
}

TEST(Spec, KindsListed) {
  const auto k = kinds();
  std::vector<std::string> names;
  for (const auto& [n, d] : k) {
    names.push_back(n);
    EXPECT_FALSE(d.empty());
    EXPECT_EQ(d.find('\n'), std::string::npos);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"uniform", "grf", "const", "checker", "ramp", "blobs", "noise-mask", "tissue", "sparse", "texture", "file"}));
}

TEST(Spec, FormatDouble) {
  EXPECT_EQ(format_double(3.0), "3");
  EXPECT_EQ(format_double(0.45), "0.45");
  EXPECT_EQ(format_double(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(format_double(-1e-7), "-1e-07");
}

}  // namespace
}  // namespace repix::datasets
