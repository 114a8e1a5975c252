// `repix run auto-mi` end to end: the CSV (header, row order, 17 significant digits read back to
// the same doubles as seq's), the JSON, and bad input refused with one line, a non-zero exit and
// no output file.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "ami/auto_mi/auto_mi.hpp"
#include "ami/auto_mi/oracle.hpp"
#include "datasets/io.hpp"
#include "harness/cli_test_util.hpp"

namespace repix {
namespace {

namespace am = ami::auto_mi;
using namespace test::auto_mi;

class AutoMiCli : public test::CliTest {
 protected:
  // Refused: a non-zero exit (not a crash) and one error line naming `needle`.
  void expect_refused(const test::CliResult& r, const std::string& needle) const {
    EXPECT_NE(r.code, 0) << r.err;
    EXPECT_EQ(r.signal, 0);
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
    EXPECT_LE(lines(r.err), 2) << r.err;
  }
};

TEST_F(AutoMiCli, WritesCsvAndJson) {
  const HostImage img = random_labels(21, 34, 5, 3);
  datasets::write_npy(img, path("l.npy"));
  const test::CliResult r =
      run("run auto-mi --variant seq --input '" + path("l.npy") + "' --output '" + path("f.csv") + "' --json '" + path("f.json") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const am::Features want = am::run_seq(img, {});
  std::ifstream in(path("f.csv"));
  std::string header, h, v;
  std::getline(in, header);
  std::getline(in, h);
  std::getline(in, v);
  EXPECT_EQ(header, "direction,ami");
  ASSERT_EQ(h.rfind("horizontal,", 0), 0u) << h;
  ASSERT_EQ(v.rfind("vertical,", 0), 0u) << v;
  EXPECT_EQ(std::strtod(h.c_str() + 11, nullptr), want.horizontal);  // 17 digits round-trip exactly
  EXPECT_EQ(std::strtod(v.c_str() + 9, nullptr), want.vertical);
  const std::string json = slurp(path("f.json"));
  EXPECT_NE(json.find("\"nmi_horizontal\""), std::string::npos);
  EXPECT_NE(json.find("\"variant\": \"seq\""), std::string::npos) << json;
  expect_only({"l.npy", "f.csv", "f.json"});
}

TEST_F(AutoMiCli, OmpFromASpec) {
  const test::CliResult r = run("run auto-mi --variant omp --input uniform:16x9:levels=3 --output '" + path("f.csv") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(lines(slurp(path("f.csv"))), 3);
}

TEST_F(AutoMiCli, RefusesBadInput) {
  Shape s3;
  s3.ndim = 3;
  s3.nx = s3.ny = s3.nz = 3;
  HostImage cube(DType::u8, s3);
  std::fill(cube.data<std::uint8_t>(), cube.data<std::uint8_t>() + cube.size(), 1);
  datasets::write_npy(cube, path("cube.npy"));
  Shape s2;
  s2.nx = 4;
  s2.ny = 4;
  s2.nz = 1;
  HostImage f32(DType::f32, s2);
  std::fill(f32.data<float>(), f32.data<float>() + f32.size(), 1.0f);
  datasets::write_npy(f32, path("float.npy"));
  HostImage big = random_labels(4, 4, 3, 1, 0, true);
  big.data<std::uint16_t>()[5] = 257;
  datasets::write_npy(big, path("big.npy"));
  const std::string out = " --output '" + path("f.csv") + "'";
  expect_refused(run("run auto-mi --variant seq --input '" + path("cube.npy") + "'" + out), "2-D");
  expect_refused(run("run auto-mi --variant seq --input '" + path("float.npy") + "'" + out), "float32");
  expect_refused(run("run auto-mi --variant omp --input '" + path("big.npy") + "'" + out), "257");
  expect_refused(run("run auto-mi --variant seq --input '" + path("missing.npy") + "'" + out), "missing.npy");
  expect_refused(run("run auto-mi --variant nope --input '" + path("big.npy") + "'" + out), "nope");
  {  // no output named: the JSON record goes to stdout (the run's result is never lost silently)
    const test::CliResult r = run("run auto-mi --variant seq --input uniform:8x8:levels=4");
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("\"horizontal\""), std::string::npos) << r.out;
  }
  expect_refused(run("run auto-mi --variant seq --input uniform:8x8:levels=4 --flush-level 999999" + out),
                 "flush-level");
  {  // an empty uint8 array of shape (0, 4), written as numpy writes it
    std::string header = "{'descr': '|u1', 'fortran_order': False, 'shape': (0, 4), }";
    while ((10 + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    std::ofstream e(path("empty.npy"), std::ios::binary);
    e << "\x93NUMPY" << '\x01' << '\x00' << static_cast<char>(header.size() & 0xff)
      << static_cast<char>(header.size() >> 8) << header;
  }
  expect_refused(run("run auto-mi --variant seq --input '" + path("empty.npy") + "'" + out), "empty");
  expect_only({"cube.npy", "float.npy", "big.npy", "empty.npy"});
}

}  // namespace
}  // namespace repix
