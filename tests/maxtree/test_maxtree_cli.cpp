// `repix run maxtree` and `repix run area-opening` end to end: the files they write (int32 parent
// image, same-dtype output) equal the in-process reference, and bad input (not 2-D, float32,
// connectivity 6, area 0 or missing, an empty image) is one error line, a non-zero exit and no
// output file. And a quick bench of both families verifies every CPU variant.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "core/gpu.hpp"
#include "datasets/datasets.hpp"
#include "datasets/io.hpp"
#include "harness/cli_test_util.hpp"
#include "maxtree/maxtree.hpp"
#include "maxtree/test_images.hpp"

namespace repix::test {
namespace {

class MaxtreeCli : public CliTest {};

// The data of an .npy file written by repix (header checked: its descr and shape).
std::string npy_data(const std::string& path, const std::string& descr, const std::string& shape) {
  std::ifstream in(path, std::ios::binary);
  const std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_GE(s.size(), 10u);
  const std::size_t hlen = static_cast<unsigned char>(s[8]) | (static_cast<unsigned char>(s[9]) << 8);
  const std::string header = s.substr(10, hlen);
  EXPECT_NE(header.find("'descr': '" + descr + "'"), std::string::npos) << header;
  EXPECT_NE(header.find("'shape': " + shape), std::string::npos) << header;
  return s.substr(10 + hlen);
}

TEST_F(MaxtreeCli, ParentImageFileEqualsSeq) {
  const HostImage img = random_image(DType::u16, 67, 45, 300, 3, 200);
  datasets::save(img, path("in.npy"));
  for (const char* v : {"seq", "seq-flood", "omp"}) {
    const CliResult r = run(std::string("run maxtree --variant ") + v + " --input " + path("in.npy") +
                            " --connectivity 8 --tile 16 --threads 2 --output " + path("p.npy") + " --json " + path("p.json"));
    ASSERT_EQ(r.code, 0) << r.err;
    maxtree::Options o;
    o.connectivity = 8;
    const maxtree::Result want = maxtree::find_variant("seq").run(img, o);
    const std::string data = npy_data(path("p.npy"), "<i4", "(45, 67)");
    ASSERT_EQ(data.size(), want.parent.narrow.size() * 4);
    EXPECT_EQ(std::memcmp(data.data(), want.parent.narrow.data(), data.size()), 0) << v;
    const auto j = nlohmann::json::parse(slurp(path("p.json")));
    EXPECT_EQ(j.at("nodes").get<std::int64_t>(), maxtree::count_nodes(img, want.parent));
    EXPECT_EQ(j.at("index_dtype"), "int32");
  }
}

// Without --variant both commands run the fastest exact variant the machine has: gpu-opt with a GPU,
// omp without; --json says which, and the output is still seq's.
TEST_F(MaxtreeCli, DefaultVariantIsGpuOptWithAGpuElseOmp) {
  const std::string expected = gpu_available() ? "gpu-opt" : "omp";
  const HostImage img = datasets::generate(datasets::Spec::parse("texture:150x40:name=grass"));
  maxtree::Options o;
  const CliResult r = run("run maxtree --input texture:150x40:name=grass --output " + path("d.npy") + " --json " + path("d.json"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(slurp(path("d.json"))).at("variant"), expected);
  const maxtree::Result want = maxtree::find_variant("seq").run(img, o);
  const std::string data = npy_data(path("d.npy"), "<i4", "(40, 150)");
  ASSERT_EQ(data.size(), want.parent.narrow.size() * 4);
  EXPECT_EQ(std::memcmp(data.data(), want.parent.narrow.data(), data.size()), 0);
  const CliResult a = run("run area-opening --input texture:150x40:name=grass --area 20 --output " + path("a.npy") +
                          " --json " + path("a.json"));
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(nlohmann::json::parse(slurp(path("a.json"))).at("variant"), expected);
  o.area = 20;
  const maxtree::AreaResult want_area = maxtree::find_area_variant("seq").run(img, o);
  const std::string area = npy_data(path("a.npy"), "|u1", "(40, 150)");
  ASSERT_EQ(area.size(), want_area.image.bytes());
  EXPECT_EQ(std::memcmp(area.data(), want_area.image.raw(), area.size()), 0);
}

TEST_F(MaxtreeCli, AreaOpeningFileHasTheInputDtypeAndEqualsSeq) {
  const CliResult r = run("run area-opening --variant omp --input texture:90x70:name=brick --area 30 --connectivity 4 "
                          "--output " + path("a.npy"));
  ASSERT_EQ(r.code, 0) << r.err;
  const HostImage img = datasets::generate(datasets::Spec::parse("texture:90x70:name=brick"));
  maxtree::Options o;
  o.area = 30;
  const maxtree::AreaResult want = maxtree::find_area_variant("seq").run(img, o);
  const std::string data = npy_data(path("a.npy"), "|u1", "(70, 90)");
  ASSERT_EQ(data.size(), want.image.bytes());
  EXPECT_EQ(std::memcmp(data.data(), want.image.raw(), data.size()), 0);
}

TEST_F(MaxtreeCli, BadInputIsOneLineNonZeroAndWritesNothing) {
  ASSERT_EQ(run("gen uniform:8x8x8:levels=2 -o " + path("v3.npy")).code, 0);
  ASSERT_EQ(run("gen uniform:8x8:dtype=float32 -o " + path("f.npy")).code, 0);
  ASSERT_EQ(run("gen uniform:8x8:levels=9 -o " + path("ok.npy")).code, 0);
  {  // an empty 2-D array (0 rows of 5)
    std::ofstream e(path("empty.npy"), std::ios::binary);
    std::string h = "{'descr': '|u1', 'fortran_order': False, 'shape': (0, 5), }";
    h.resize(118, ' ');
    h += '\n';
    e << "\x93NUMPY" << '\x01' << '\x00' << static_cast<char>(h.size() & 255) << static_cast<char>(h.size() >> 8) << h;
  }
  const std::string out = " --output " + path("o.npy");
  struct Bad {
    std::string args, says;
  };
  const std::vector<Bad> bad = {
      {"run maxtree --variant seq --input " + path("v3.npy") + out, "2-D"},
      {"run maxtree --variant omp --input " + path("f.npy") + out, "uint8 or uint16"},
      {"run maxtree --variant seq --input " + path("empty.npy") + out, "empty"},
      {"run maxtree --variant seq --connectivity 6 --input " + path("ok.npy") + out, "--connectivity"},
      {"run maxtree --variant nope --input " + path("ok.npy") + out, "nope"},
      {"run area-opening --variant seq --area 0 --input " + path("ok.npy") + out, "--area"},
      {"run area-opening --variant seq --input " + path("ok.npy") + out, "--area"},
      {"run area-opening --variant seq-flood --area 3 --input " + path("f.npy") + out, "uint8 or uint16"},
      {"run area-opening --variant omp --area 3 --input " + path("v3.npy") + out, "2-D"},
  };
  for (const Bad& b : bad) {
    const CliResult r = run(b.args);
    EXPECT_NE(r.code, 0) << b.args;
    EXPECT_EQ(lines(r.err), 1) << b.args << ": " << r.err;
    EXPECT_NE(r.err.find(b.says), std::string::npos) << b.args << ": " << r.err;
  }
  expect_only({"v3.npy", "f.npy", "ok.npy", "empty.npy"});
}

TEST_F(MaxtreeCli, QuickBenchVerifiesEveryCpuVariantOfBothFamilies) {
  for (const char* family : {"maxtree", "area-opening"}) {
    const CliResult r = run(std::string("bench --family ") + family +
                            " --suite quick --samples 2 --cpu-samples 2 --out " + path("r.json"));
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(slurp(path("r.json")));
    int cpu_cases = 0;
    for (const auto& res : j.at("results")) {
      if (res.at("family") != family) continue;
      EXPECT_TRUE(res.at("verified").get<bool>()) << res.dump();  // GPU cases too, where a GPU is present
      const std::string id = res.at("variant");
      cpu_cases += id == "seq" || id == "seq-flood" || id == "omp";
    }
    // Every CPU variant on every quick dataset (CPU variants: the end-to-end scope).
    EXPECT_EQ(cpu_cases, 3 * 6) << family;
  }
}

// The peers' rules (harness/families/maxtree/common.hpp, area_opening.cpp), with a stand-in
// peers.py that lists scikit-image's two peers and fails if it is ever run: left out where a side
// is <= 2 or (area opening) the image is smaller than A, always; left out above 2^20 pixels unless
// --variants names the peer, and then run.
TEST_F(MaxtreeCli, ScikitImagePeersAreLeftOutWhereWrongAndWhereSlowUnlessNamed) {
  std::ofstream(path("peers.py")) << R"PY(
import json, sys
if sys.argv[1] == "list":
    print(json.dumps([{"family": f, "id": i, "description": "stand-in", "gpu": False, "exact": True,
                       "scope": "end-to-end"} for f, i in (("maxtree", "skimage-maxtree"),
                                                          ("area-opening", "skimage-area-opening"))]))
    sys.exit(0)
print("peers.py: stand-in peer ran", file=sys.stderr)
sys.exit(1)
)PY";
  const std::string env = "REPIX_BASELINES_DIR='" + path("") + "'";
  const std::string fast = " --exclude seq-flood,omp --cpu-samples 1 --samples 1 --out " + path("r.json");
  CliResult r = run("bench --family maxtree --dataset uniform:2x40:levels=3:dtype=uint8:seed=1" + fast, env);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("peer skimage-maxtree left out on uniform:2x40"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("side <= 2"), std::string::npos) << r.err;
  r = run("bench --family maxtree --dataset uniform:1100x1000:levels=4:dtype=uint8:seed=1" + fast, env);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("1100000 pixels: scikit-image's max_tree takes"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--variants peer:skimage-maxtree times it anyway"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("stand-in peer ran"), std::string::npos) << r.err;
  r = run("bench --family maxtree --dataset uniform:1100x1000:levels=4:dtype=uint8:seed=1 --variants seq,peer:skimage-maxtree"
          " --cpu-samples 1 --out " + path("r.json"), env);
  EXPECT_NE(r.code, 0);  // the stand-in fails: it was run
  EXPECT_NE(r.err.find("stand-in peer ran"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("left out"), std::string::npos) << r.err;
  r = run("bench --family area-opening --area 100 --dataset uniform:9x9:levels=3:dtype=uint8:seed=1" + fast, env);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("returns zeros when the whole image (81 pixels) is smaller than A = 100"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace repix::test
