// The IWPP paper tables (iwpp-*): the transcriptions hold the numbers of the paper's text, the
// builders compute the ratios and verdicts from synthetic measurements (no GPU needed), and every
// table runs from the CLI at `--sizes small` on whatever machine runs the tests (GPU cells say
// "no GPU" on a machine without one; the CPU parts run and are verified).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "core/gpu.hpp"
#include "harness/papers/iwpp/tables.hpp"
#include "harness/cli_test_util.hpp"
#include "harness/tables_test_util.hpp"
#include "edt/edt.hpp"
#include "reconstruct/reconstruct.hpp"

namespace repix {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using tables::SpeedupRow;
using tables::SpeedupTable;
using tables::Timing;

json paper(const std::string& name) { return test::paper_json(name); }

tables::Meta meta(bool gpu) { return test::table_meta(gpu, "small"); }

Timing timing(const std::string& variant, const std::string& scope, std::vector<double> samples, bool verified = true) {
  Timing t;
  t.variant = variant;
  t.scope = scope;
  t.samples_ms = std::move(samples);
  t.verified = verified;
  t.verification = verified ? "exact match with seq" : "MISMATCH vs seq: 3 pixels differ";
  return t;
}

Timing not_run(const std::string& variant, const std::string& scope, const std::string& why) {
  Timing t;
  t.variant = variant;
  t.scope = scope;
  t.not_run = why;
  return t;
}

fs::path fresh_dir(const std::string& name) { return test::fresh_dir("tables-iwpp", name); }

json read_json(const fs::path& p) {
  std::ifstream in(p);
  return json::parse(in);
}

// ---- the transcriptions ----------------------------------------------------------------------

TEST(TablesIwppPaper, Table1HasThePapersRows) {
  const json p = paper("iwpp-table1");
  const double want[7][6] = {{534e3, 30.4e6, 7, 685, 291, 228}, {388e3, 22.2e6, 9, 527, 223, 175},
                             {282e3, 16.7e6, 11, 409, 164, 134}, {210e3, 12.7e6, 13, 323, 133, 106},
                             {158e3, 9.9e6, 15, 255, 118, 98},   {124e3, 7.7e6, 17, 207, 99, 83},
                             {97e3, 6.2e6, 19, 162, 84, 70}};
  ASSERT_EQ(p["rows"].size(), 7u);
  for (int i = 0; i < 7; ++i) {
    const json& r = p["rows"][i];
    EXPECT_EQ(r["initially_queued"].get<double>(), want[i][0]) << i;
    EXPECT_EQ(r["total_queued"].get<double>(), want[i][1]) << i;
    EXPECT_EQ(r["raster_scans"].get<int>(), want[i][2]) << i;
    EXPECT_EQ(r["atomic_ms"].get<double>(), want[i][3]) << i;
    EXPECT_EQ(r["scan_ms"].get<double>(), want[i][4]) << i;
    EXPECT_EQ(r["tq_ms"].get<double>(), want[i][5]) << i;
  }
  EXPECT_EQ(p["claims"][0]["value"].get<double>(), 2.31);
  EXPECT_EQ(p["claims"][1]["value"].get<double>(), 1.24);
}

TEST(TablesIwppPaper, SpeedupFiguresHoldTheTextsNumbers) {
  const json t2 = paper("iwpp-table2");
  const double sizes[4] = {4096, 8192, 16384, 32768}, speedups[4] = {31.4, 36.8, 37.5, 37.1};
  ASSERT_EQ(t2["rows"].size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(t2["rows"][i]["size"].get<double>(), sizes[i]);
    EXPECT_EQ(t2["rows"][i]["speedup"].get<double>(), speedups[i]);
  }
  const json f10 = paper("iwpp-fig10");
  EXPECT_EQ(f10["rows"][0]["threads"], 12);
  EXPECT_EQ(f10["rows"][0]["tiled_speedup"].get<double>(), 7.5);
  EXPECT_NE(f10["notes"][0].get<std::string>().find("not in the text"), std::string::npos);
  auto claim = [](const json& p, const std::string& what) {
    for (const auto& c : p["claims"])
      if (c["what"] == what) return c.value("value", -1.0);
    return -2.0;
  };
  EXPECT_EQ(claim(paper("iwpp-fig11"), "mean FH_GPU/SR_GPU"), 2.6);
  EXPECT_EQ(claim(paper("iwpp-fig11"), "FH_GPU vs one core"), 14.3);
  EXPECT_EQ(claim(paper("iwpp-fig13"), "max FH_GPU/SR_GPU"), 3.1);
  EXPECT_EQ(paper("iwpp-fig14")["claims"].size(), 1u);
  const json f15 = paper("iwpp-fig15");
  ASSERT_EQ(f15["rows"].size(), 4u);
  EXPECT_EQ(f15["rows"][0]["speedup"].get<double>(), 16.0);
  EXPECT_EQ(f15["rows"][1]["speedup"].get<double>(), 30.0);
  EXPECT_EQ(f15["rows"][2]["speedup"].get<double>(), 43.0);
  EXPECT_EQ(f15["rows"][3]["speedup"].get<double>(), 50.0);
  EXPECT_EQ(f15["rows"][3]["over_gpus_only"].get<double>(), 1.17);
  const json f16 = paper("iwpp-fig16");
  EXPECT_EQ(f16["rows"][0]["speedup"].get<double>(), 85.6);
  EXPECT_EQ(f16["rows"][0]["over_gpus_only"].get<double>(), 1.07);
}

// ---- the builders ------------------------------------------------------------------------------

// A ladder timing with whole-run samples and wavefront samples.
Timing ladder_timing(const std::string& id, std::vector<double> whole, std::vector<double> wavefront) {
  Timing t = timing(id, "kernel", std::move(whole));
  t.extra["sample_stats"] = json::array();
  for (double w : wavefront) t.extra["sample_stats"].push_back({{"wavefront_ms", w}});
  return t;
}

TEST(TablesIwpp, Table1RatiosAndTheColumnSumAveragesOfTheWavefrontPhase) {
  tables::LadderBlock b;
  b.marker = "frame";
  b.dataset = "tissue:64x64:coverage=100:seed=1:marker=frame";
  b.blocks_per_sm = 1;
  for (int s : {7, 9}) {
    tables::LadderRow r;
    r.raster_scans = s;
    // Wavefront medians: atomic 8, warp 5, scan 4, tq 2 (N=7) and 12 / 7 / 6 / 5 (N=9); the whole
    // runs are 10 ms longer (what the ratios must not use).
    const double ms[4] = {s == 7 ? 8.0 : 12.0, s == 7 ? 5.0 : 7.0, s == 7 ? 4.0 : 6.0, s == 7 ? 2.0 : 5.0};
    for (int i = 0; i < 4; ++i)
      r.queues.push_back(ladder_timing(tables::kQueueLadder[i], {ms[i] + 10, ms[i] + 11, ms[i] + 9},
                                       {ms[i], ms[i] + 1, ms[i] - 1}));
    r.queues[3].extra["initially_queued"] = 1500;
    r.queues[3].extra["total_queued"] = 2500000;
    b.rows.push_back(r);
  }
  b.reference = timing("gpu-opt", "kernel", {0.5});
  const fs::path dir = fresh_dir("t1");
  const std::string md = tables::iwpp_table1(paper("iwpp-table1"), {b}, meta(true), dir.string());
  EXPECT_NE(md.find("## Marker `frame`, 1 block per SM (the paper's launch)"), std::string::npos) << md;
  // N=7: paper 685/291 = 2.35, 291/228 = 1.28; ours 8/4 = 2, 4/2 = 2, atomic/warp 8/5 = 1.6.
  EXPECT_NE(md.find("| 7 | 534K / 1500 | 30.4M / 2.5M | 685 / 8.00 | 5.00 | 291 / 4.00 | 228 / 2.00 | 2.35x / 2.00x "
                    "| 1.28x / 2.00x | 1.60x | 18.00 / 15.00 / 14.00 / 12.00 | yes |"),
            std::string::npos) << md;
  // All rows: paper (685+527)/(291+223) = 2.36, (291+223)/(228+175) = 1.28; ours 20/10, 10/7, 20/12.
  EXPECT_NE(md.find("| all rows | | | | | | | 2.36x / 2.00x | 1.28x / 1.43x | 1.67x | | |"), std::string::npos) << md;
  EXPECT_NE(md.find("gpu-opt (kernel scope, whole run; no raster scans, for reference): 0.500 ms"), std::string::npos) << md;
  const json j = read_json(dir / "iwpp-table1.json");
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["table"], "iwpp-table1");
  EXPECT_EQ(j["blocks"][0]["blocks_per_sm"], 1);
  EXPECT_EQ(j["blocks"][0]["rows"].size(), 2u);
  EXPECT_DOUBLE_EQ(j["blocks"][0]["all_rows"]["scan_over_tq"].get<double>(), 10.0 / 7.0);
  EXPECT_DOUBLE_EQ(j["blocks"][0]["rows"][0]["ours"]["whole_run_ms"]["atomic"].get<double>(), 18.0);
  EXPECT_EQ(j["blocks"][0]["rows"][0]["queues"][0]["samples_ms"].size(), 3u);  // raw samples kept
  EXPECT_EQ(j["blocks"][0]["rows"][0]["queues"][0]["wavefront_ms"].size(), 3u);
  fs::remove_all(dir);
}

TEST(TablesIwpp, Table1OfThePapersOwnRowsGivesItsAverages) {
  // Our rows timed exactly as the paper's: the column-sum averages are the text's 2.31x and 1.24x.
  const json p = paper("iwpp-table1");
  tables::LadderBlock b;
  b.marker = "opening";
  for (const auto& pr : p["rows"]) {
    tables::LadderRow r;
    r.raster_scans = pr["raster_scans"];
    for (const char* k : {"atomic_ms", "atomic_ms", "scan_ms", "tq_ms"})
      r.queues.push_back(ladder_timing(k, {1.0}, {pr[k].get<double>()}));
    b.rows.push_back(r);
  }
  const std::string md = tables::iwpp_table1(p, {b}, meta(true), "");
  EXPECT_NE(md.find("as many blocks as fit on each SM (repix's default launch)"), std::string::npos) << md;
  EXPECT_NE(md.find("| all rows | | | | | | | 2.31x / 2.31x | 1.24x / 1.24x | 1.00x | | |"), std::string::npos) << md;
}

TEST(TablesIwpp, Table1MarksWrongOutputsMissingWavefrontsAndMissingGpu) {
  tables::LadderBlock b;
  b.marker = "opening";
  tables::LadderRow r;
  r.raster_scans = 7;
  r.queues = {ladder_timing("gpu-queue-atomic", {3}, {1}), ladder_timing("gpu-queue-warp-atomic", {3}, {}),
              timing("gpu-queue-scan", "kernel", {2}, false),
              not_run("gpu-queue-tq", "kernel", "wrong output: MISMATCH vs seq: 1 pixels differ")};
  b.rows.push_back(r);
  b.reference = not_run("gpu-opt", "kernel", "no GPU");
  const std::string md = tables::iwpp_table1(paper("iwpp-table1"), {b}, meta(true), "");
  EXPECT_NE(md.find("| NO |"), std::string::npos) << md;
  EXPECT_NE(md.find("gpu-queue-tq (kernel) not timed: wrong output"), std::string::npos) << md;
  EXPECT_NE(md.find("gpu-queue-scan (kernel): MISMATCH"), std::string::npos) << md;
  EXPECT_NE(md.find("for reference): no GPU."), std::string::npos) << md;
  // A variant that ran without wavefront samples has no wavefront time and no ratio (no sums either).
  EXPECT_NE(md.find("| 685 / 1.00 | - | 291 / - | 228 / - | 2.35x / - | 1.28x / - | - | 3.00 / 3.00 / 2.00 / - | NO |"),
            std::string::npos) << md;
  EXPECT_NE(md.find("| all rows | | | | | | | 2.35x / - | 1.28x / - | - | | |"), std::string::npos) << md;
}

TEST(TablesIwpp, TimingFailedCoversWrongOutputsAndErrorsOnly) {
  EXPECT_FALSE(timing("a", "kernel", {1}).failed());
  EXPECT_TRUE(timing("a", "kernel", {1}, false).failed());
  EXPECT_TRUE(not_run("a", "kernel", "error: out of memory").failed());
  EXPECT_TRUE(not_run("a", "kernel", "wrong output: x").failed());
  EXPECT_FALSE(not_run("a", "kernel", "no GPU").failed());
  EXPECT_FALSE(not_run("a", "kernel", "absent: edt has no variant `x` in this build").failed());
  EXPECT_FALSE(not_run("a", "kernel", "skipped: 1 GPU visible").failed());
  EXPECT_DOUBLE_EQ(tables::median_ms(timing("a", "kernel", {3, 1, 2})), 2.0);
  EXPECT_DOUBLE_EQ(tables::median_ms(not_run("a", "kernel", "no GPU")), 0.0);
}

SpeedupRow row(const std::string& label, double seq_ms, double fh_ms, double sr_ms) {
  SpeedupRow r;
  r.label = label;
  r.dataset = "tissue:" + label;
  r.seq = timing("seq", "end-to-end", {seq_ms});
  r.cells = {timing("gpu-queue-tq", "kernel", {fh_ms}), timing("gpu-sr", "kernel", {sr_ms}),
             not_run("gpu-opt", "kernel", "absent: reconstruct has no variant `gpu-opt` in this build")};
  return r;
}

TEST(TablesIwpp, SpeedupTableSpeedupsComparisonsAndPaperColumn) {
  SpeedupTable t;
  t.id = "iwpp-table2";
  t.title = "test";
  t.explanation = "what runs";
  t.x_label = "size";
  t.rows = {row("4096^2", 100, 4, 10), row("8192^2", 400, 10, 30)};
  t.compare = {{"gpu-queue-tq", "gpu-sr"}};
  t.paper_row = [](const SpeedupRow& r) { return r.label == "4096^2" ? json{{"speedup", 31.4}} : json(); };
  t.wall_s = 12.5;
  const fs::path dir = fresh_dir("speedup");
  const std::string md = tables::speedup_table(paper("iwpp-table2"), t, meta(true), dir.string());
  EXPECT_NE(md.find("| size | input | seq ms (runs) | gpu-queue-tq kernel ms (x seq) | gpu-sr kernel ms (x seq) "
                    "| gpu-opt kernel ms (x seq) | paper x seq | verified |"),
            std::string::npos) << md;
  EXPECT_NE(md.find("| 4096^2 | tissue:4096^2 | 100.0 (1) | 4.00 (25.0x) | 10.00 (10.0x) | absent | 31.4 | yes |"),
            std::string::npos) << md;
  EXPECT_NE(md.find("| 8192^2 | tissue:8192^2 | 400.0 (1) | 10.00 (40.0x) | 30.00 (13.3x) | absent | - | yes |"),
            std::string::npos) << md;
  // tq over sr: 2.5x and 3x.
  EXPECT_NE(md.find("`gpu-queue-tq` over `gpu-sr` (kernel): 4096^2: 2.50x, 8192^2: 3.00x; mean 2.75x, max 3.00x"),
            std::string::npos) << md;
  EXPECT_NE(md.find("`gpu-opt` absent: reconstruct has no variant"), std::string::npos) << md;  // said once
  EXPECT_EQ(md.find("8192^2: gpu-opt"), std::string::npos) << md;
  EXPECT_NE(md.find("This table took 12.5 s"), std::string::npos) << md;
  const json j = read_json(dir / "iwpp-table2.json");
  EXPECT_EQ(j["table"], "iwpp-table2");
  EXPECT_DOUBLE_EQ(j["rows"][1]["cells"][0]["speedup_vs_seq"].get<double>(), 40.0);
  EXPECT_TRUE(j["rows"][0]["cells"][2]["speedup_vs_seq"].is_null());
  EXPECT_DOUBLE_EQ(j["comparisons"][0]["mean"].get<double>(), 2.75);
  EXPECT_DOUBLE_EQ(j["wall_s"].get<double>(), 12.5);
  EXPECT_EQ(j["paper_claims"].size(), 1u);
  fs::remove_all(dir);
}

TEST(TablesIwpp, SpeedupTableRowComparisonsAndFailures) {
  SpeedupTable t;
  t.id = "iwpp-fig15";
  t.x_label = "configuration";
  SpeedupRow one, two, plus;
  one.label = "1 GPU";
  two.label = "2 GPUs";
  plus.label = "2 GPUs + CPU groups";
  for (SpeedupRow* r : {&one, &two, &plus}) r->seq = timing("seq", "end-to-end", {1000});
  one.cells = {timing("multi-device", "end-to-end", {50})};
  two.cells = {timing("multi-device", "end-to-end", {25})};
  plus.cells = {timing("multi-device", "end-to-end", {20}, false)};
  plus.note = "3 CPU groups of 4 threads";
  t.rows = {one, two, plus};
  t.compare_rows = {{"2 GPUs", "1 GPU"}, {"2 GPUs + CPU groups", "2 GPUs"}};
  const std::string md = tables::speedup_table(paper("iwpp-fig15"), t, meta(true), "");
  EXPECT_NE(md.find("- 2 GPUs over 1 GPU (`multi-device`, end-to-end): 2.00x"), std::string::npos) << md;
  EXPECT_NE(md.find("- 2 GPUs + CPU groups over 2 GPUs (`multi-device`, end-to-end): 1.25x"), std::string::npos) << md;
  EXPECT_NE(md.find("| 20.00 (50.0x) | - | NO |"), std::string::npos) << md;
  EXPECT_NE(md.find("2 GPUs + CPU groups: 3 CPU groups of 4 threads"), std::string::npos) << md;
}

// ---- the CLI at --sizes small ------------------------------------------------------------------

// The CLI on the tables (cli_test_util.hpp): `out` below is stdout and stderr together.
class TablesIwppCli : public test::CliTest {
 protected:
  test::CliResult run_all(const std::string& args) const {
    test::CliResult r = run(args);
    r.out = r.err + r.out;
    return r;
  }
  // `table <id> --sizes small` into the folder.
  test::CliResult small(const std::string& id) const {
    return run_all("table " + id + " --sizes small --out '" + dir_.string() + "'");
  }
};

// Every timing in a table's JSON: what ran is verified; GPU timings did not run only where there is
// no GPU (or the variant is absent from this build).
void expect_cells_sound(const json& t, const std::string& id) {
  for (const auto& r : t["rows"]) {
    EXPECT_TRUE(r["seq"]["verified"].get<bool>()) << id << ": " << r["seq"].dump();
    EXPECT_FALSE(r["seq"]["samples_ms"].empty()) << id;
    for (const auto& c : r["cells"]) {
      const std::string why = c["not_run"];
      if (why.empty()) {
        EXPECT_TRUE(c["verified"].get<bool>()) << id << ": " << c.dump();
        EXPECT_FALSE(c["samples_ms"].empty()) << id;
      } else {
        EXPECT_TRUE((why == "no GPU" && !gpu_available()) || why.rfind("absent", 0) == 0 ||
                    why.rfind("skipped", 0) == 0)
            << id << ": " << c.dump();
      }
    }
  }
}

TEST_F(TablesIwppCli, EveryTableRunsSmall) {
  for (const char* id : {"iwpp-table1", "iwpp-table2", "iwpp-fig10", "iwpp-fig11", "iwpp-fig13", "iwpp-fig14"}) {
    const test::CliResult r = small(id);
    ASSERT_EQ(r.code, 0) << id << ": " << r.out;
    EXPECT_TRUE(fs::exists(dir_ / (std::string(id) + ".md"))) << id;
    const json j = read_json(dir_ / (std::string(id) + ".json"));
    EXPECT_EQ(j["table"], id);
    EXPECT_EQ(j["sizes"], "small");
    EXPECT_TRUE(j["env"].is_object()) << id;
    EXPECT_TRUE(j["tool"].contains("git_sha")) << id;
    if (std::string(id) == "iwpp-table1") {
      ASSERT_EQ(j["blocks"].size(), 4u);  // opening and frame, each at 1 block per SM and at the default launch
      EXPECT_EQ(j["blocks"][0]["blocks_per_sm"], 1);
      EXPECT_EQ(j["blocks"][1]["blocks_per_sm"], 0);
      for (const auto& b : j["blocks"]) {
        EXPECT_EQ(b["rows"].size(), 7u);
        for (const auto& row : b["rows"]) {
          ASSERT_EQ(row["queues"].size(), 4u);
          for (const auto& q : row["queues"])
            if (q["not_run"] == "") {
              EXPECT_TRUE(q["verified"].get<bool>()) << q.dump();
              // Every timed sample has its wavefront time (0 when nothing was left to queue).
              EXPECT_EQ(q["wavefront_ms"].size(), q["samples_ms"].size()) << q.dump();
            } else {
              EXPECT_TRUE(q["not_run"] == "no GPU" && !gpu_available()) << q.dump();
            }
        }
      }
    } else {
      EXPECT_FALSE(j["rows"].empty()) << id;
      expect_cells_sound(j, id);
    }
  }
  // fig10's CPU variants always run.
  const json f10 = read_json(dir_ / "iwpp-fig10.json");
  for (const auto& r : f10["rows"])
    for (const auto& c : r["cells"]) EXPECT_EQ(c["not_run"], "") << c.dump();
}

TEST_F(TablesIwppCli, MultiDeviceFiguresNeedTheVariant) {
  auto registered = [](const auto& all) {
    for (const auto& v : all)
      if (v.id == "multi-device") return true;
    return false;
  };
  const std::pair<const char*, bool> figs[2] = {{"iwpp-fig15", registered(reconstruct::variants())},
                                                {"iwpp-fig16", registered(edt::variants())}};
  for (const auto& [id, present] : figs) {
    const test::CliResult r = small(id);
    if (!present) {
      EXPECT_EQ(r.code, 1) << id << ": " << r.out;
      EXPECT_NE(r.out.find("needs the"), std::string::npos) << r.out;
      EXPECT_NE(r.out.find("`multi-device`"), std::string::npos) << r.out;
      EXPECT_FALSE(fs::exists(dir_ / (std::string(id) + ".json"))) << id;
      continue;
    }
    ASSERT_EQ(r.code, 0) << id << ": " << r.out;
    const json j = read_json(dir_ / (std::string(id) + ".json"));
    ASSERT_EQ(j["rows"].size(), 3u) << id;
    expect_cells_sound(j, id);
  }
}

TEST_F(TablesIwppCli, UsageErrors) {
  for (const char* args : {"table iwpp-table2 --sizes huge", "table iwpp-table2 --sizes 0", "table iwpp-fig10 --markers x",
                           "table iwpp-fig13 --sizes 64,96", "table iwpp-table1 --out a --out-dir b",
                           "table iwpp-table2 --reps 0", "table iwpp-fig10 --threads 2,x",
                           "table iwpp-table1 --blocks-per-sm -1", "table iwpp-table1 --blocks-per-sm 1,x"}) {
    const test::CliResult r = run_all(args);
    EXPECT_EQ(r.code, 2) << args << ": " << r.out;
    EXPECT_NE(r.out.find("usage error"), std::string::npos) << args << ": " << r.out;
  }
}

}  // namespace
}  // namespace repix
