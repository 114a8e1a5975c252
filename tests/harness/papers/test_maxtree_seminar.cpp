// `repix table maxtree-seminar`: the seminar's figures beside ours from bench reports written here
// (no GPU needed), with the numbers worked out by hand: 6000x4000 is 24e6 pixels, so a 6 ms kernel
// is 4000 MB/s at one byte a pixel; omp 180 ms over that kernel is 30x; a 1.25 ms kernel at
// 1920x1080 is 800 fps.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "harness/papers/maxtree/seminar.hpp"

namespace repix {
namespace {

using nlohmann::json;

report::Result case_of(const std::string& variant, const std::string& dataset, const std::string& scope, double ms,
                       int connectivity = 4) {
  report::Result r;
  r.family = "maxtree";
  r.variant = variant;
  r.dataset = dataset;
  r.scope = scope;
  r.samples_ms = {ms};
  r.median_ms = r.q1_ms = r.q3_ms = r.min_ms = ms;
  r.verified = true;
  r.extra = {{"connectivity", connectivity}, {"build_ms", ms / 2}, {"merge_ms", ms / 4}, {"canonical_ms", ms / 4}};
  return r;
}

report::DatasetInfo dataset(const std::string& spec, const std::string& shape, const std::string& dtype,
                            std::int64_t elements) {
  report::DatasetInfo d;
  d.spec = spec;
  d.shape = shape;
  d.dtype = dtype;
  d.elements = elements;
  return d;
}

json paper() {
  json rows = json::array();
  auto row = [&](const char* q, const char* shape, double v, const char* unit) {
    rows.push_back({{"quantity", q}, {"shape", shape}, {"value", v}, {"unit", unit}});
  };
  row("gpu_vs_parallel_cpu_speedup", "6000x4000", 10, "speedup");
  row("kernel_throughput", "6000x4000", 793, "MB/s");
  row("kernel_fps_1920x1080", "1920x1080", 382, "fps");
  row("end_to_end_ms", "6000x4000", 57.6, "ms");
  row("border_extra_steps_cost", "6000x4000", 2.4, "ms");
  row("border_horizontal_merge_saving", "6000x4000", 0.5, "ms");
  row("border_size_reduction", "6000x4000", 5, "ratio");
  row("copies_share_of_end_to_end", "6000x4000", 50, "pct");
  return {{"table", "maxtree-seminar"}, {"source", "test"}, {"rows", rows}};
}

double figure(const json& j, const std::string& quantity) {
  for (const json& f : j.at("figures"))
    if (f.at("quantity") == quantity) return f.at("ours").is_number() ? f.at("ours").get<double>() : -1;
  return -2;
}

TEST(TablesMaxtree, SeminarFiguresFromTwoReportsWithTheirOwnSpellings) {
  report::Report four, eight;
  four.env = eight.env = {{"gpu", {{"name", "Test GPU"}}}};
  four.tool = eight.tool = {{"git_sha", "abcdef0123456789"}};
  // The reports list datasets canonically; results keep the spelling they were given (the 16-bit
  // image's options in another order) and must still be found.
  four.datasets = {dataset("texture:6000x4000:name=camera", "6000x4000", "uint8", 24000000),
                   dataset("texture:6000x4000:name=camera:dtype=uint16", "6000x4000", "uint16", 24000000),
                   dataset("texture:1920x1080:name=camera", "1920x1080", "uint8", 2073600)};
  four.results = {case_of("omp", "texture:6000x4000:name=camera", "end-to-end", 180),
                  case_of("gpu-tile", "texture:6000x4000:name=camera", "kernel", 9),
                  case_of("gpu-opt", "texture:6000x4000:name=camera", "kernel", 6),
                  case_of("gpu-grid", "texture:6000x4000:name=camera", "kernel", 8),
                  case_of("gpu-border", "texture:6000x4000:name=camera", "kernel", 7.6),
                  case_of("gpu-opt", "texture:6000x4000:name=camera", "end-to-end", 12),
                  case_of("gpu-opt", "texture:6000x4000:dtype=uint16:name=camera", "kernel", 7),
                  case_of("gpu-grid", "texture:1920x1080:name=camera", "kernel", 1.25)};
  // A faster variant of ours than gpu-opt on the frame stands for us there (1 / 1.1 ms), a peer never.
  four.results.push_back(case_of("gpu-packed", "texture:1920x1080:name=camera", "kernel", 1.1));
  four.results[4].extra["border_pixels"] = 6000;  // gpu-border's counters
  four.results[4].extra["border_nodes"] = 1500;
  eight.datasets = {four.datasets[0]};
  // 8-connectivity: its own input in the table, never the seminar's (4-connectivity) figures.
  eight.results = {case_of("omp", "texture:6000x4000:name=camera", "end-to-end", 500, 8),
                   case_of("gpu-opt", "texture:6000x4000:name=camera", "kernel", 1, 8)};
  // The frame without gpu-opt: the fastest of ours stands for us, never a faster peer.
  four.results.push_back(case_of("peer:blin-maxtree", "texture:1920x1080:name=camera", "kernel", 0.5));
  four.results.back().extra = {{"connectivity", 4}};  // a peer reports no steps
  const auto dir = std::filesystem::temp_directory_path() / "repix-maxtree-seminar-test";
  std::filesystem::remove_all(dir);
  const std::string md = tables::maxtree_seminar(paper(), {four, eight}, dir.string());
  std::ifstream in(dir / "maxtree-seminar.json");
  ASSERT_TRUE(in.good());
  const json j = json::parse(in);
  EXPECT_DOUBLE_EQ(figure(j, "gpu_vs_parallel_cpu_speedup"), 30.0);  // 180 / 6
  EXPECT_DOUBLE_EQ(figure(j, "kernel_throughput"), 4000.0);          // 24e6 B / 6 ms
  EXPECT_NEAR(figure(j, "kernel_fps_1920x1080"), 1000 / 1.1, 1e-9);  // gpu-packed's; not the peer's 0.5 ms
  EXPECT_DOUBLE_EQ(figure(j, "end_to_end_ms"), 12.0);
  EXPECT_DOUBLE_EQ(figure(j, "copies_share_of_end_to_end"), 50.0);  // (12 - 6) / 12
  EXPECT_DOUBLE_EQ(figure(j, "border_extra_steps_cost"), -1);  // one kernel in ours: no number, a reason
  EXPECT_NE(md.find("no separate steps"), std::string::npos) << md;
  EXPECT_NEAR(figure(j, "border_horizontal_merge_saving"), 8.0 / 4 - 7.6 / 4, 1e-12);  // the merge phases: ms / 4
  EXPECT_DOUBLE_EQ(figure(j, "border_size_reduction"), 6000.0 / 1500);
  // Every input apart: 8-bit and 16-bit 4-connectivity, the frame, and 8-connectivity.
  EXPECT_NE(md.find("### texture:6000x4000:name=camera, 4-conn."), std::string::npos) << md;
  EXPECT_NE(md.find("### texture:6000x4000:name=camera:dtype=uint16, 4-conn."), std::string::npos) << md;
  EXPECT_NE(md.find("### texture:1920x1080:name=camera, 4-conn."), std::string::npos) << md;
  EXPECT_NE(md.find("### texture:6000x4000:name=camera, 8-conn."), std::string::npos) << md;
  int rows = 0;
  for (const json& v : j.at("variants")) {
    ++rows;
    if (v.at("variant") == "peer:blin-maxtree") EXPECT_TRUE(v.at("build_ms").is_null()) << v;  // not 0
    if (v.at("variant") == "gpu-tile") EXPECT_DOUBLE_EQ(v.at("speedup_over_omp").get<double>(), 20.0);  // 180 / 9
    if (v.at("variant") == "gpu-opt" && v.at("connectivity") == 8)
      EXPECT_DOUBLE_EQ(v.at("speedup_over_omp").get<double>(), 500.0);
    if (v.at("variant") == "gpu-opt" && v.at("dataset") == "texture:6000x4000:name=camera:dtype=uint16")
      EXPECT_TRUE(v.at("speedup_over_omp").is_null());  // no omp case for that input
  }
  EXPECT_EQ(rows, 11);  // omp, gpu-tile, gpu-opt, gpu-grid, gpu-border | gpu-opt (16-bit) | gpu-grid, gpu-packed, peer (frame) | omp, gpu-opt (8-conn.)
  EXPECT_NE(md.find("| 3 (50 %) | 1.5 (25 %) | 1.5 (25 %) |"), std::string::npos) << md;  // gpu-opt's steps
  EXPECT_NE(md.find("| peer:blin-maxtree | 0.5 | 4.15 | 2000 | - | - | - | - | - | - |"), std::string::npos) << md;
  std::filesystem::remove_all(dir);
}

TEST(TablesMaxtree, SeminarWithoutMaxtreeResultsIsAnError) {
  report::Report other;
  report::Result r = case_of("gpu-opt", "texture:64x64:name=camera", "kernel", 1);
  r.family = "ecc";
  other.results = {r};
  EXPECT_THROW(tables::maxtree_seminar(paper(), {other}, ""), Error);
  EXPECT_THROW(tables::maxtree_seminar(paper(), {}, ""), Error);
}

}  // namespace
}  // namespace repix
