// `repix profile ... --ncu` without Nsight Compute: the ncu command line built for a variant (NVTX
// filters on its timed ranges, warm-up excluded, --clock-control none), the summary parsed from a
// fixture in the shape of `ncu --csv --page raw` (tests/harness/data/ncu_raw.csv), the "ncu not
// found" error, and the whole command run against a stand-in ncu script that writes a report and
// prints the fixture. The real ncu is run on a GPU (repix experiment profile).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_test_util.hpp"
#include "core/error.hpp"
#include "harness/ncu.hpp"

namespace repix {
namespace {

namespace fs = std::filesystem;

std::string fixture() {
  std::ifstream in(std::string(REPIX_SOURCE_DIR) + "/tests/harness/data/ncu_raw.csv");
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_FALSE(ss.str().empty()) << "fixture missing";
  return ss.str();
}

const std::string kEcc = "void ecc2d_kernel<float, 2>(const float *, int, int, \"stats\")";

TEST(Ncu, CommandLineFiltersTheVariantsTimedRangesOnly) {
  const ncu::Target t{"ecc", "gpu-opt", "grf:256x256:seed=1", {"--iterations=1"}};
  const std::vector<std::string> c =
      ncu::profile_command("/opt/ncu", "/b/repix", t, {"SpeedOfLight", "Occupancy"}, "out/ecc-gpu-opt");
  const std::vector<std::string> want = {
      "/opt/ncu", "--clock-control", "none", "--nvtx", "--nvtx-include", "repix@ecc/gpu-opt/", "--nvtx-exclude",
      "repix@warmup/", "--section", "SpeedOfLight", "--section", "Occupancy", "-f", "-o", "out/ecc-gpu-opt",
      "/b/repix", "profile", "ecc", "--variant", "gpu-opt", "--dataset", "grf:256x256:seed=1", "--iterations=1"};
  EXPECT_EQ(c, want);
  EXPECT_EQ(ncu::include_filter("reconstruct", "gpu-opt"), "repix@reconstruct/gpu-opt/");
  EXPECT_EQ(ncu::import_command("/opt/ncu", "r.ncu-rep"),
            (std::vector<std::string>{"/opt/ncu", "--import", "r.ncu-rep", "--csv", "--page", "raw", "--print-units",
                                      "base"}));
  EXPECT_EQ(ncu::shell_line({"/opt/ncu", "--nvtx-include", "repix@ecc/gpu-opt/", "a b", "it's"}),
            "/opt/ncu --nvtx-include repix@ecc/gpu-opt/ 'a b' 'it'\\''s'");
}

// --all-launches: the same command with no NVTX filter, every launch of the process profiled.
TEST(Ncu, AllLaunchesDropsTheNvtxFilterOnly) {
  ncu::Target t{"ecc", "gpu-opt", "grf:256x256:seed=1", {"--iterations=1"}};
  t.all_launches = true;
  const std::vector<std::string> c = ncu::profile_command("/opt/ncu", "/b/repix", t, {"SpeedOfLight"}, "o/e");
  const std::vector<std::string> want = {"/opt/ncu", "--clock-control", "none", "--section", "SpeedOfLight", "-f",
                                         "-o", "o/e", "/b/repix", "profile", "ecc", "--variant", "gpu-opt",
                                         "--dataset", "grf:256x256:seed=1", "--iterations=1"};
  EXPECT_EQ(c, want);
}

// A peer opens no repix NVTX range: it is profiled through one bench run, its kernels chosen by
// name (ncu's -k), its reports named without the ':'.
TEST(Ncu, APeerIsProfiledThroughABenchRunFilteredByKernelName) {
  ncu::Target t{"maxtree", "peer:blin-maxtree", "texture:64x64:name=camera", ncu::bench_extra({"--connectivity=8"}),
                "merge|flatten"};
  EXPECT_EQ(ncu::report_stem(t), "maxtree-peer_blin-maxtree");
  const std::vector<std::string> c = ncu::profile_command("/opt/ncu", "/b/repix", t, {"Occupancy"}, "o/maxtree-peer_blin-maxtree");
  const std::vector<std::string> want = {
      "/opt/ncu", "--clock-control", "none", "-k", "regex:merge|flatten", "--section", "Occupancy", "-f", "-o",
      "o/maxtree-peer_blin-maxtree", "/b/repix", "bench", "--family", "maxtree", "--variants", "peer:blin-maxtree",
      "--dataset", "texture:64x64:name=camera", "--out", "o/maxtree-peer_blin-maxtree.bench.json", "--connectivity=8",
      "--scopes=kernel", "--samples=1", "--warmup=0"};
  EXPECT_EQ(c, want);
  EXPECT_EQ(ncu::bench_extra({"--samples=3", "--scopes=end-to-end"}),
            (std::vector<std::string>{"--samples=3", "--scopes=end-to-end", "--warmup=0"}));
  EXPECT_THROW(ncu::bench_extra({"--iterations=2"}), cli::UsageError);
  // Our own variants keep the NVTX filter; a kernel filter narrows it further.
  t = {"ecc", "gpu-opt", "grf:64x64", {}, "ecc2d"};
  const std::vector<std::string> own = ncu::profile_command("/opt/ncu", "/b/repix", t, {}, "o/ecc-gpu-opt");
  EXPECT_EQ(std::vector<std::string>(own.begin() + 3, own.begin() + 10),
            (std::vector<std::string>{"--nvtx", "--nvtx-include", "repix@ecc/gpu-opt/", "--nvtx-exclude", "repix@warmup/",
                                      "-k", "regex:ecc2d"}));
}

TEST(Ncu, CsvParsingKeepsQuotedFieldsAndSkipsNcuMessages) {
  const ncu::Csv csv = ncu::parse_csv(fixture());
  ASSERT_EQ(csv.names.size(), 28u);
  EXPECT_EQ(csv.names[4], "Kernel Name");
  EXPECT_EQ(csv.units[11], "nsecond");
  ASSERT_EQ(csv.rows.size(), 3u);
  EXPECT_EQ(csv.rows[0][4], kEcc);
  EXPECT_EQ(csv.rows[0][8], "(1,024, 1, 1)");
  EXPECT_EQ(ncu::number("12,345"), 12345.0);
  EXPECT_EQ(ncu::number(" 1,024.5 "), 1024.5);
  EXPECT_FALSE(ncu::number("n/a"));
  EXPECT_FALSE(ncu::number(""));
  // A row that does not match the header is an error, not a silently shifted table.
  EXPECT_THROW(ncu::parse_csv("\"a\",\"b\"\n\"\",\"\"\n\"1\"\n"), Error);
  EXPECT_THROW(ncu::parse_csv("==PROF== nothing else\n"), Error);
}

TEST(Ncu, SummaryPerKernelFromTheFixture) {
  const std::vector<ncu::Kernel> ks = ncu::summarise(ncu::parse_csv(fixture()));
  ASSERT_EQ(ks.size(), 2u);
  const ncu::Kernel& a = ks[0];
  EXPECT_EQ(a.name, kEcc);
  EXPECT_EQ(a.launches, 2);
  EXPECT_NEAR(a.median_us, 12.5, 1e-9);  // 12,345 and 12,655 ns
  EXPECT_NEAR(a.total_us, 25.0, 1e-9);
  ASSERT_TRUE(a.occupancy_pct && a.registers && a.dram_pct && a.l2_pct && a.bank_conflicts);
  EXPECT_NEAR(*a.occupancy_pct, 80.0, 1e-9);
  EXPECT_NEAR(*a.registers, 32.0, 1e-9);
  EXPECT_NEAR(*a.dram_pct, 45.0, 1e-9);
  EXPECT_NEAR(*a.l2_pct, 31.0, 1e-9);
  EXPECT_NEAR(*a.bank_conflicts, 1024.0, 1e-9);  // loads + stores per launch
  ASSERT_EQ(a.top_stalls.size(), 3u);
  EXPECT_EQ(a.top_stalls[0].first, "long_scoreboard");
  EXPECT_NEAR(a.top_stalls[0].second, 4.0, 1e-9);
  EXPECT_EQ(a.top_stalls[1].first, "barrier");
  EXPECT_EQ(a.top_stalls[2].first, "wait");
  EXPECT_NEAR(a.atomics.at("l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum"), 2048.0, 1e-9);
  EXPECT_NEAR(a.atomics.at("smsp__sass_inst_executed_op_shared_atom.sum"), 512.0, 1e-9);
  EXPECT_EQ(a.atomics.count("l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum"), 0u);  // the same operations again
  EXPECT_EQ(a.atomics.size(), 3u);  // global atom and red requests, shared atom instructions
  ASSERT_TRUE(a.warp_instructions && a.executed_ipc);
  EXPECT_NEAR(*a.warp_instructions, 1.1e6, 1e-6);  // mean per launch of 1,000,000 and 1,200,000
  EXPECT_NEAR(*a.executed_ipc, 3.0, 1e-9);
  const ncu::Kernel& b = ks[1];
  EXPECT_EQ(b.name, "reduce_bins(unsigned long long *)");
  EXPECT_EQ(b.launches, 1);
  EXPECT_NEAR(b.median_us, 1.5, 1e-9);
  EXPECT_FALSE(b.occupancy_pct);  // "n/a"
  EXPECT_FALSE(b.dram_pct);       // empty
  EXPECT_FALSE(b.executed_ipc);   // "n/a"
  ASSERT_TRUE(b.warp_instructions);
  EXPECT_NEAR(*b.warp_instructions, 4000.0, 1e-9);
  ASSERT_EQ(b.top_stalls.size(), 1u);  // zeros are no stall reason
  EXPECT_EQ(b.top_stalls[0].first, "long_scoreboard");

  const nlohmann::json j = ncu::to_json(ks);
  EXPECT_TRUE(j[1]["achieved_occupancy_pct"].is_null());
  const std::string md = ncu::to_markdown(j);
  EXPECT_NE(md.find("| 2 | 12.50 | 25.00 | 80.0 | 32 | 45.0 | 31.0 | long_scoreboard 4.00, barrier 1.00, wait 0.50 | 1024 | 2560 | 1100000 | 3.00 |"),
            std::string::npos)
      << md;

  // The ablation step's aggregate: duration-weighted means, counts summed over launches.
  const nlohmann::json step = ncu::step_counters({{"kernels", j}});
  EXPECT_EQ(step["kernels"], 2);
  EXPECT_NEAR(step["duration_us_total"].get<double>(), 26.5, 1e-9);
  EXPECT_NEAR(step["achieved_occupancy_pct"].get<double>(), 80.0, 1e-9);  // b has none
  EXPECT_NEAR(step["l2_throughput_pct_of_peak"].get<double>(), (31.0 * 25 + 12.5 * 1.5) / 26.5, 1e-9);
  EXPECT_EQ(step["top_stall"], "long_scoreboard");
  EXPECT_NEAR(step["shared_bank_conflicts"].get<double>(), 2048.0, 1e-9);
  EXPECT_NEAR(step["atomics"].get<double>(), 2 * 2560.0 + 64.0, 1e-9);
  EXPECT_NEAR(step["warp_instructions"].get<double>(), 2 * 1.1e6 + 4000.0, 1e-6);  // summed over launches
  EXPECT_NEAR(step["executed_ipc"].get<double>(), 3.0, 1e-9);  // duration-weighted; b reports none
  EXPECT_NE(ncu::counters_cells(step).find("| 26.5 | 80.0 |"), std::string::npos) << ncu::counters_cells(step);
  EXPECT_NE(ncu::counters_cells(step).find("| 2204000 | 3.00 |"), std::string::npos) << ncu::counters_cells(step);
  EXPECT_EQ(ncu::counters_cells({{"error", "x"}}), " - | - | - | - | - | not profiled | - | - | - | - |");
}

void make_executable(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
  ::chmod(p.c_str(), 0755);
}

TEST(Ncu, FoundOnPathInCudaHomeOrTheFallbackElseAClearError) {
  const fs::path root = fs::temp_directory_path() / ("repix-ncu-find-" + std::to_string(::getpid()));
  fs::remove_all(root);
  const std::string none = (root / "none").string();
  try {
    ncu::find_ncu("/nonexistent:" + none, "", none);
    ADD_FAILURE() << "no ncu anywhere, yet found";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ncu not found"), std::string::npos) << e.what();
  }
  make_executable(root / "home/bin/ncu", "#!/bin/sh\n");
  EXPECT_EQ(ncu::find_ncu(none, (root / "home").string(), none), (root / "home/bin/ncu").string());
  make_executable(root / "path/ncu", "#!/bin/sh\n");
  EXPECT_EQ(ncu::find_ncu(none + ":" + (root / "path").string(), (root / "home").string(), none),
            (root / "path/ncu").string());
  fs::create_directories(root / "plain");
  std::ofstream(root / "plain/ncu") << "#!/bin/sh\n";  // not executable: not an ncu to run
  EXPECT_THROW(ncu::find_ncu((root / "plain").string(), "", none), Error);
  fs::remove_all(root);
}

class NcuCli : public test::CliTest {};

TEST_F(NcuCli, NcuAbsentIsOneClearError) {
  if (fs::exists("/usr/local/cuda/bin/ncu")) GTEST_SKIP() << "ncu is installed here";
  const test::CliResult r = run("profile ecc --variant gpu-opt --dataset grf:64x64 --ncu --out " + path("p"),
                                "PATH=/nonexistent CUDA_HOME=");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("repix: error: ncu not found"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("p/ecc-gpu-opt.summary.json")));
}

TEST_F(NcuCli, CpuVariantAndUnknownVariantAreRefused) {
  EXPECT_EQ(run("profile ecc --variant seq --dataset grf:64x64 --ncu").code, 1);
  EXPECT_EQ(run("profile ecc --variant no-such --dataset grf:64x64 --ncu").code, 2);
  // A peer this machine lacks: one error line naming it, before ncu is looked for.
  const test::CliResult peer = run("profile maxtree --variant peer:no-such-peer --dataset texture:64x64:name=camera --ncu");
  EXPECT_EQ(peer.code, 1);
  EXPECT_NE(peer.err.find("peer:no-such-peer is not available on this machine"), std::string::npos) << peer.err;
}

// The whole command against a stand-in ncu: it records its arguments, writes the report where
// -o says and prints the fixture on --import.
TEST_F(NcuCli, ProfileWritesTheSummaryBesideTheReport) {
  const fs::path bin = path("bin");
  make_executable(bin / "ncu",
                  "#!/bin/sh\n"
                  "echo \"$@\" >> '" + path("ncu-args.txt") + "'\n"
                  "if [ \"$1\" = --import ]; then cat '" REPIX_SOURCE_DIR "/tests/harness/data/ncu_raw.csv'; exit 0; fi\n"
                  "while [ $# -gt 0 ]; do if [ \"$1\" = -o ]; then : > \"$2.ncu-rep\"; fi; shift; done\n");
  const test::CliResult r = run("profile ecc --variant gpu-opt --dataset grf:64x64:seed=2 --ncu --out " + path("p"),
                                "PATH='" + bin.string() + ":/usr/bin:/bin'");
  ASSERT_EQ(r.code, 0) << r.err;
  // The command lines are printed before they run.
  EXPECT_NE(r.err.find("repix profile: running " + (bin / "ncu").string() +
                       " --clock-control none --nvtx --nvtx-include repix@ecc/gpu-opt/ --nvtx-exclude repix@warmup/"),
            std::string::npos)
      << r.err;
  const std::string args = slurp(path("ncu-args.txt"));
  EXPECT_NE(args.find("profile ecc --variant gpu-opt --dataset grf:64x64:seed=2 --iterations=1"), std::string::npos)
      << args;
  EXPECT_NE(args.find("--import " + path("p") + "/ecc-gpu-opt.ncu-rep --csv --page raw"), std::string::npos) << args;
  const nlohmann::json j = nlohmann::json::parse(slurp(path("p/ecc-gpu-opt.summary.json")));
  EXPECT_EQ(j["nvtx_include"], "repix@ecc/gpu-opt/");
  ASSERT_EQ(j["kernels"].size(), 2u);
  EXPECT_EQ(j["kernels"][0]["launches"], 2);
  EXPECT_TRUE(fs::exists(path("p/ecc-gpu-opt.summary.md")));
  EXPECT_TRUE(fs::exists(path("p/ecc-gpu-opt.raw.csv")));
  EXPECT_NE(r.out.find("long_scoreboard"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace repix
