// `repix profile FAMILY --sass REGEX [--items-per-iteration N]`: the functions of a cuobjdump
// listing split and chosen by name, scripts/sass-loop-bound's bracket on a synthetic loop whose
// three paths are known by construction, the whole command against a stand-in cuobjdump, and,
// where the CUDA toolkit's cuobjdump is installed, the real bracket of gpu-opt's float32 2D kernel.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_test_util.hpp"
#include "core/error.hpp"
#include "harness/args.hpp"
#include "harness/ncu.hpp"
#include "harness/sass.hpp"
#include "harness/json_text.hpp"

namespace repix {
namespace {

namespace fs = std::filesystem;

std::string hex(int k) {
  char b[16];
  std::snprintf(b, sizeof b, "%04x", k * 16);
  return b;
}

// A function in cuobjdump's form: instruction k at address 16 k. Its loop runs from instruction 1
// to 130 (the backward @P0 BRA); at 10 a branch skips 11-19, which hold a CALL (a slow path: the
// common path takes the branch); at 30 a branch skips 31-39, plain arithmetic. So one iteration is
// 130 instructions on the longest path, 130 - 9 = 121 on the common, 130 - 18 = 112 on the shortest.
std::string loop_function(const std::string& name) {
  std::ostringstream s;
  s << "\n\t\tFunction : " << name << "\n\t.headerflags\t@\"EF_CUDA_SM90\"\n";
  auto ins = [&](int k, const std::string& text) {
    s << "        /*" << hex(k) << "*/                   " << text << " ;   /* 0x000000000000 */\n";
  };
  ins(0, "MOV R0, RZ");
  for (int k = 1; k <= 130; ++k) {
    if (k == 10) ins(k, "@P1 BRA 0x" + hex(20));
    else if (k >= 11 && k <= 19) ins(k, k == 15 ? "CALL.REL.NOINC 0x" + hex(200) : "IADD3 R2, R2, 0x1, RZ");
    else if (k == 30) ins(k, "@!P2 BRA 0x" + hex(40));
    else if (k == 130) ins(k, "@P0 BRA 0x" + hex(1));
    else ins(k, k % 3 ? "IADD3 R1, R1, 0x1, RZ" : "FADD R3, R3, R4");
  }
  ins(131, "EXIT");
  return s.str();
}

std::string listing() {
  return "\nFatbin elf code:\n================\narch = sm_90\n" + loop_function("_Z9loopy_oneILi3EEvPf") +
         loop_function("_Z5otherPf") + "\nFatbin elf code:\n================\narch = sm_80\n" +
         loop_function("_Z9loopy_oneILi3EEvPf");
}

TEST(Sass, FunctionsAreSplitChosenByNameAndKeptOnce) {
  const auto all = sass::functions(listing(), ".");
  ASSERT_EQ(all.size(), 2u);  // the sm_80 copy of loopy_one is not kept twice
  EXPECT_EQ(all[0].first, "_Z9loopy_oneILi3EEvPf");
  EXPECT_EQ(all[1].first, "_Z5otherPf");
  EXPECT_NE(all[0].second.find("/*0820*/"), std::string::npos);  // instruction 130
  EXPECT_EQ(all[0].second.find("_Z5otherPf"), std::string::npos);
  const auto one = sass::functions(listing(), "loopy_one|nothing");
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].first, "_Z9loopy_oneILi3EEvPf");
  EXPECT_TRUE(sass::functions(listing(), "absent").empty());
  EXPECT_THROW(sass::functions(listing(), "(unclosed"), cli::UsageError);
}

TEST(Sass, LoopBoundBracketsTheSyntheticLoop) {
  const fs::path f = fs::temp_directory_path() / ("repix-sass-" + std::to_string(::getpid()) + ".sass");
  std::ofstream(f) << sass::functions(listing(), "loopy")[0].second;
  const nlohmann::json j = sass::loop_bound(f.string(), "_Z9loopy_oneILi3EEvPf", 384, 132, 1.98);
  fs::remove(f);
  EXPECT_EQ(j.value("function", ""), "_Z9loopy_oneILi3EEvPf") << j.dump();
  EXPECT_EQ(j.value("loop_instructions", 0), 130) << j.dump();
  const nlohmann::json& n = j.at("warp_instructions_per_iteration");
  EXPECT_EQ(n.value("longest", 0.0), 130);
  EXPECT_EQ(n.value("common", 0.0), 121);
  EXPECT_EQ(n.value("shortest", 0.0), 112);
  // 132 SMs x 4 issue slots x 1.98 GHz x 384 items / 130 instructions = 3088 G items/s.
  EXPECT_NEAR(j.at("issue_bound_gitems_per_s").value("longest", 0.0), 132 * 4 * 1.98 * 384 / 130, 1.0);
  EXPECT_NEAR(j.at("issue_bound_gitems_per_s").value("shortest", 0.0), 132 * 4 * 1.98 * 384 / 112, 1.0);
}

void make_executable(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
  ::chmod(p.c_str(), 0755);
}

class SassCli : public test::CliTest {};

// The whole command against a stand-in cuobjdump that prints the listing: the matching function
// alone in the .sass, its bracket in the summary, no scratch file left; no match is one error line
// and no output.
TEST_F(SassCli, BracketFromAStandInCuobjdump) {
  std::ofstream(path("listing.txt")) << listing();
  make_executable(path("bin/cuobjdump"), "#!/bin/sh\ncat '" + path("listing.txt") + "'\n");
  const std::string env = "PATH='" + path("bin") + ":/usr/local/bin:/usr/bin:/bin' CUDA_HOME=";
  const test::CliResult r =
      run("profile ecc --sass 'loopy_one' --items-per-iteration 384 --out " + path("out"), env);
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json s = json_text::decode(nlohmann::json::parse(slurp(path("out/ecc-sass.summary.json"))));
  ASSERT_EQ(s.at("kernels").size(), 1u) << s.dump();
  const nlohmann::json& k = s["kernels"][0];
  EXPECT_EQ(k.value("name", ""), "_Z9loopy_oneILi3EEvPf");
  EXPECT_EQ(k.at("loop_bound").at("warp_instructions_per_iteration").value("common", 0.0), 121) << k.dump();
  const std::string sass = slurp(path("out/ecc-sass.sass"));
  EXPECT_NE(sass.find("loopy_one"), std::string::npos);
  EXPECT_EQ(sass.find("_Z5otherPf"), std::string::npos);
  EXPECT_NE(r.out.find("common 121"), std::string::npos) << r.out;
  for (const auto& e : fs::directory_iterator(path("out")))
    EXPECT_EQ(e.path().filename().string().find("scratch"), std::string::npos) << e.path();

  const test::CliResult none = run("profile ecc --sass 'absent' --out " + path("none"), env);
  EXPECT_EQ(none.code, 1);
  EXPECT_NE(none.err.find("no kernel of this build has a name matching 'absent'"), std::string::npos) << none.err;
  EXPECT_FALSE(fs::exists(path("none/ecc-sass.summary.json")));
  const test::CliResult bad = run("profile ecc --sass '(' --out " + path("bad"), env);
  EXPECT_EQ(bad.code, 2) << bad.err;
}

// The real listing of this build: gpu-opt's float32 2D kernel (vectorised, no emit, 3 blocks an
// SM, mode opt) has a row loop of more than 100 instructions whose paths are ordered.
TEST_F(SassCli, RealCuobjdumpBracketsGpuOptsFloatKernel) {
  const char* p = std::getenv("PATH");
  const char* home = std::getenv("CUDA_HOME");
  try {
    ncu::find_cuda_tool("cuobjdump", "", p ? p : "", home ? home : "");
  } catch (const Error&) {
    GTEST_SKIP() << "no cuobjdump here (CUDA toolkit without it)";
  }
  const test::CliResult r =
      run("profile ecc --sass 'ecc2d_kernelIfLb1ELb0ELi3ELi0E' --items-per-iteration 384 --out " + path("out"));
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json s = nlohmann::json::parse(slurp(path("out/ecc-sass.summary.json")));
  ASSERT_EQ(s.at("kernels").size(), 1u) << s.dump();
  const nlohmann::json& n = s["kernels"][0].at("loop_bound").at("warp_instructions_per_iteration");
  EXPECT_GT(s["kernels"][0]["loop_bound"].value("loop_instructions", 0), 100);
  EXPECT_LE(n.at("shortest").get<double>(), n.at("common").get<double>()) << n;
  EXPECT_LE(n.at("common").get<double>(), n.at("longest").get<double>()) << n;
}

}  // namespace
}  // namespace repix
