// `repix run ranklet`: the (windows, 3, H, W) float32 .npy it writes equals seq's planes, windows
// in the order given; bad input (not 2-D, not uint8, bad windows, empty) is one error line, a
// non-zero exit and no output file.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "ami/ranklet/ranklet.hpp"
#include "ami/ranklet/ranklet_test_support.hpp"
#include "datasets/io.hpp"
#include "harness/cli_test_util.hpp"

namespace repix {
namespace {

namespace rk = ami::ranklet;

class RankletCli : public test::CliTest {};

// The header's shape text and the float data of an .npy file written by repix.
void read_npy_f32(const std::string& path, std::string& header, std::vector<float>& data) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GE(bytes.size(), 10u);
  const std::size_t hlen = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  header = bytes.substr(10, hlen);
  const std::size_t n = (bytes.size() - 10 - hlen) / sizeof(float);
  data.resize(n);
  std::memcpy(data.data(), bytes.data() + 10 + hlen, n * sizeof(float));
}

TEST_F(RankletCli, WritesWindowsOrientationsRowsColumns) {
  const HostImage img = test::ranklet::noise(9, 6, 256, 3);
  datasets::write_npy(img, path("in.npy"));
  for (const char* variant : {"seq", "seq-hist", "omp", "omp-hist"}) {
    const test::CliResult r = run(std::string("run ranklet --variant ") + variant + " --input '" + path("in.npy") +
                                  "' --windows 8,2 --output '" + path("r.npy") + "' --json '" + path("r.json") + "'");
    ASSERT_EQ(r.code, 0) << r.err;
    std::string header;
    std::vector<float> data;
    read_npy_f32(path("r.npy"), header, data);
    EXPECT_NE(header.find("'descr': '<f4'"), std::string::npos) << header;
    EXPECT_NE(header.find("'shape': (2, 3, 6, 9)"), std::string::npos) << header;
    rk::Options opt;
    opt.windows = {8, 2};
    const rk::Result want = rk::find_variant("seq").run(img, opt);
    ASSERT_EQ(data.size(), static_cast<std::size_t>(want.ranklet.size()));
    EXPECT_EQ(std::memcmp(data.data(), want.ranklet.raw(), want.ranklet.bytes()), 0) << variant;
    EXPECT_NE(slurp(path("r.json")).find("\"windows\": \"8,2\""), std::string::npos);
  }
}

TEST_F(RankletCli, DefaultWindowsAreFour) {
  datasets::write_npy(test::ranklet::noise(5, 4, 3, 1), path("in.npy"));
  const test::CliResult r = run("run ranklet --variant seq --input '" + path("in.npy") + "' --output '" + path("r.npy") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  std::string header;
  std::vector<float> data;
  read_npy_f32(path("r.npy"), header, data);
  EXPECT_NE(header.find("'shape': (4, 3, 4, 5)"), std::string::npos) << header;
}

TEST_F(RankletCli, BadInputIsOneErrorAndNoOutput) {
  datasets::write_npy(test::ranklet::noise(5, 4, 3, 1), path("ok.npy"));
  datasets::write_npy(HostImage(DType::f32, Shape::d2(5, 4)), path("float.npy"));
  datasets::write_npy(HostImage(DType::u16, Shape::d2(5, 4)), path("u16.npy"));
  datasets::write_npy(HostImage(DType::u8, Shape::d3(5, 4, 2)), path("3d.npy"));
  datasets::write_npy(HostImage(DType::u8, Shape::d1(5)), path("1d.npy"));
  test::ranklet::write_empty_u8_npy(path("empty.npy"));
  const std::pair<std::string, std::string> cases[] = {
      {"--input '" + path("float.npy") + "'", "uint8"},
      {"--input '" + path("u16.npy") + "'", "uint8"},
      {"--input '" + path("3d.npy") + "'", "2-D"},
      {"--input '" + path("1d.npy") + "'", "2-D"},
      {"--input '" + path("empty.npy") + "'", "empty"},
      {"--input '" + path("ok.npy") + "' --windows 6", "power of two"},
      {"--input '" + path("ok.npy") + "' --windows 64", "power of two"},
      {"--input '" + path("ok.npy") + "' --windows 1", "power of two"},
      {"--input '" + path("ok.npy") + "' --windows 4,4", "twice"},
      {"--input '" + path("ok.npy") + "' --windows 4,,8", "comma-separated"},
      {"--input '" + path("ok.npy") + "' --windows ''", "comma-separated"},
      {"--input '" + path("ok.npy") + "' --threads 1 --block 0", "--block"},
  };
  for (const auto& [args, says] : cases) {
    const test::CliResult r = run("run ranklet --variant seq " + args + " --output '" + path("out.npy") + "'");
    EXPECT_NE(r.code, 0) << args;
    EXPECT_NE(r.err.find(says), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(std::filesystem::exists(path("out.npy"))) << args;
  }
}

}  // namespace
}  // namespace repix
