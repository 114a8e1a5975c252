// `repix run ami`: the CSV's header, row order and values (those of the oracle), --json, and bad
// input (not 2-D, not uint8, bad windows, empty): one error line, a non-zero exit, no output.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "ami/ami.hpp"
#include "ami/pipeline/ami_test_support.hpp"
#include "ami/ranklet/ranklet_test_support.hpp"
#include "datasets/io.hpp"
#include "harness/cli_test_util.hpp"

namespace repix {
namespace {

class AmiCli : public test::CliTest {};

TEST_F(AmiCli, CsvRowsAreWindowsOrientationsDirections) {
  const HostImage img = test::ranklet::noise(21, 13, 256, 3);
  datasets::write_npy(img, path("in.npy"));
  for (const char* variant : {"seq", "omp", "omp-hist"}) {
    const test::CliResult r = run(std::string("run ami --variant ") + variant + " --input '" + path("in.npy") +
                                  "' --windows 8,2 --output '" + path("f.csv") + "' --json '" + path("f.json") + "'");
    ASSERT_EQ(r.code, 0) << r.err;
    const std::vector<double> want = test::ami_pipeline::oracle(img, {8, 2});
    std::string expected = "window,orientation,direction,ami\n";
    char buf[160];
    const char* o_names[] = {"H", "V", "D"};
    std::size_t i = 0;
    for (int window : {8, 2})
      for (const char* o : o_names)
        for (const char* d : {"horizontal", "vertical"}) {
          std::snprintf(buf, sizeof buf, "%d,%s,%s,%.17g\n", window, o, d, want[i++]);
          expected += buf;
        }
    if (std::string(variant) == "seq") EXPECT_EQ(slurp(path("f.csv")), expected);
    const std::string csv = slurp(path("f.csv"));
    EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 13) << csv;
    EXPECT_EQ(csv.rfind("window,orientation,direction,ami\n8,H,horizontal,", 0), 0u) << csv;
    EXPECT_NE(csv.find("\n2,D,vertical,"), std::string::npos) << csv;
    const std::string json = slurp(path("f.json"));
    EXPECT_NE(json.find("\"windows\": \"8,2\""), std::string::npos) << json;
    EXPECT_NE(json.find("\"variant\": \"" + std::string(variant) + "\""), std::string::npos) << json;
    EXPECT_NE(json.find("\"features\""), std::string::npos) << json;
    EXPECT_NE(json.find("\"shape\""), std::string::npos) << json;
    EXPECT_NE(json.find("\"ranklet_ms\""), std::string::npos) << json;
  }
}

TEST_F(AmiCli, BadInputIsOneErrorAndNoOutput) {
  datasets::write_npy(test::ranklet::noise(5, 4, 3, 1), path("ok.npy"));
  datasets::write_npy(HostImage(DType::f32, Shape::d2(5, 4)), path("float.npy"));
  datasets::write_npy(HostImage(DType::u16, Shape::d2(5, 4)), path("u16.npy"));
  datasets::write_npy(HostImage(DType::u8, Shape::d3(5, 4, 2)), path("3d.npy"));
  test::ranklet::write_empty_u8_npy(path("empty.npy"));
  const std::pair<std::string, std::string> cases[] = {
      {"--input '" + path("float.npy") + "'", "uint8"},
      {"--input '" + path("u16.npy") + "'", "uint8"},
      {"--input '" + path("3d.npy") + "'", "2-D"},
      {"--input '" + path("empty.npy") + "'", "empty"},
      {"--input '" + path("ok.npy") + "' --windows 6", "power of two"},
      {"--input '" + path("ok.npy") + "' --windows 64", "power of two"},
      {"--input '" + path("ok.npy") + "' --windows 4,4", "twice"},
  };
  for (const auto& [args, says] : cases) {
    const test::CliResult r = run("run ami --variant seq " + args + " --output '" + path("out.csv") + "' --json '" +
                                  path("out.json") + "'");
    EXPECT_NE(r.code, 0) << args;
    EXPECT_NE(r.err.find(says), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(std::filesystem::exists(path("out.csv"))) << args;
    EXPECT_FALSE(std::filesystem::exists(path("out.json"))) << args;
  }
}

}  // namespace
}  // namespace repix
