// gpu-opt's engine tuning as ECC options (ecc::OptTuning; harness/families/ecc/adapter.cpp):
// each is declared for run, profile and bench with today's default, a non-default value given as
// on a command line reaches the row's `options` of every variant that reads it (and only those),
// and on a GPU the engine's variants stay exact under non-default values.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "core/gpu.hpp"
#include "ecc/ecc.hpp"
#include "ecc/gpu_opt.cuh"
#include "harness/bench.hpp"
#include "harness/family.hpp"

namespace repix {
namespace {

// Every tuning option with a value other than its default (each inside its range).
const std::map<std::string, std::string>& non_default() {
  static const std::map<std::string, std::string> v = {
      {"min-chunk-2d", "5"}, {"min-chunk-3d", "4"},  {"items-2d", "3"},    {"items-3d", "2"},
      {"head-pct-2d", "0"},  {"head-pct-3d", "30"},  {"blocks-2d", "2"},   {"blocks-3d", "3"},
      {"dense-from", "1"},   {"graph-chunks", "3"}};
  return v;
}

cli::Args given(const std::map<std::string, std::string>& values) {
  cli::Args a;
  for (const auto& [k, v] : values) a.options.emplace(k, v);
  return a;
}

bench::Reps two_samples() {
  bench::Reps reps;
  reps.cpu = protocol::Rule::fixed(2);
  reps.gpu = protocol::Rule::fixed(2);
  return reps;
}

// Declared once, for run, profile and bench, with OptTuning's defaults; each value above differs.
TEST(EccTuningOptions, DeclaredForRunProfileAndBenchWithTodaysDefaults) {
  const ecc::OptTuning t;
  const std::map<std::string, int> defaults = {
      {"min-chunk-2d", t.min_chunk_2d}, {"min-chunk-3d", t.min_chunk_3d}, {"items-2d", t.items_2d},
      {"items-3d", t.items_3d},         {"head-pct-2d", t.head_pct_2d},   {"head-pct-3d", t.head_pct_3d},
      {"blocks-2d", t.blocks_2d},       {"blocks-3d", t.blocks_3d},       {"dense-from", t.dense_from},
      {"graph-chunks", t.graph_chunks}};
  // Today's defaults, as measured (NOTES-gpu-opt.md): a change here changes every timing.
  EXPECT_EQ(defaults.at("min-chunk-2d"), 12);
  EXPECT_EQ(defaults.at("min-chunk-3d"), 9);
  EXPECT_EQ(defaults.at("items-2d"), 8);
  EXPECT_EQ(defaults.at("items-3d"), 8);
  EXPECT_EQ(defaults.at("head-pct-2d"), 40);
  EXPECT_EQ(defaults.at("head-pct-3d"), 75);
  EXPECT_EQ(defaults.at("blocks-2d"), 3);
  EXPECT_EQ(defaults.at("blocks-3d"), 2);
  EXPECT_EQ(defaults.at("dense-from"), 353);
  EXPECT_EQ(defaults.at("graph-chunks"), 0);
  int found = 0;
  for (const options::Spec& s : family::find("ecc").option_specs()) {
    const auto d = defaults.find(s.name);
    if (d == defaults.end()) continue;
    ++found;
    SCOPED_TRACE(s.name);
    EXPECT_EQ(s.default_text, std::to_string(d->second));
    EXPECT_NE(non_default().at(s.name), s.default_text);
    EXPECT_EQ(s.commands, options::kRun | options::kProfile | options::kBench);
    EXPECT_NE(s.help.find("gpu-opt"), std::string::npos) << s.help;
    EXPECT_FALSE(s.variants.empty());
    EXPECT_NO_THROW(s.check(non_default().at(s.name)));
  }
  EXPECT_EQ(found, static_cast<int>(defaults.size()));
}

// A gpu-opt row (end to end, where the graph path reads --graph-chunks too) records every tuning
// value given. On a machine without a GPU the row does not run ("no GPU") and still says what it
// would have run with; on a GPU it runs and its output is checked against the reference.
TEST(EccTuningOptions, NonDefaultValuesAreInTheGpuOptRow) {
  const family::Family& f = family::find("ecc");
  auto p = f.problem("uniform:96x80:levels=300:dtype=uint16:seed=3", cli::Args{});
  const report::Result r = f.measure(*p, "gpu-opt", "end-to-end", two_samples(), given(non_default()));
  ASSERT_TRUE(r.options.is_object()) << r.options.dump();
  for (const auto& [name, value] : non_default()) EXPECT_EQ(r.options.value(name, nlohmann::json()).dump(), value) << name;
  EXPECT_EQ(r.options.value("threads", nlohmann::json()), 0);  // the family's others, defaults included
  if (gpu_available()) {
    EXPECT_TRUE(r.not_run.empty()) << r.not_run;
    EXPECT_TRUE(r.verified) << r.verification;
  } else {
    EXPECT_EQ(r.not_run, "no GPU");
  }
}

// A row lists the options its variant reads: the CPU variants none of the engine's; gpu-opt-static
// (fixed strides) not the dynamic schedule's; only gpu-opt end to end the graph's.
TEST(EccTuningOptions, ARowListsOnlyTheOptionsItsVariantReads) {
  const family::Family& f = family::find("ecc");
  auto p = f.problem("uniform:40x33:levels=7:dtype=uint8:seed=2", cli::Args{});
  const report::Result omp = f.measure(*p, "omp", "end-to-end", two_samples(), given(non_default()));
  EXPECT_TRUE(omp.verified) << omp.not_run << omp.verification;
  EXPECT_TRUE(omp.options.contains("threads")) << omp.options.dump();
  for (const auto& [name, value] : non_default()) EXPECT_FALSE(omp.options.contains(name)) << name;

  const report::Result st = f.measure(*p, "gpu-opt-static", "kernel", two_samples(), given(non_default()));
  for (const char* name : {"min-chunk-2d", "min-chunk-3d", "blocks-2d", "blocks-3d", "dense-from"})
    EXPECT_EQ(st.options.value(name, nlohmann::json()).dump(), non_default().at(name)) << name;
  for (const char* name : {"items-2d", "items-3d", "head-pct-2d", "head-pct-3d", "graph-chunks"})
    EXPECT_FALSE(st.options.contains(name)) << name;

  const report::Result gs = f.measure(*p, "gpu-stream", "end-to-end", two_samples(), given(non_default()));
  for (const auto& [name, value] : non_default())
    if (std::string(name) != "graph-chunks") EXPECT_EQ(gs.options.value(name, nlohmann::json()).dump(), value) << name;
  EXPECT_FALSE(gs.options.contains("graph-chunks"));
}

// A value outside an option's range is refused by the option itself (the CLI's one-line usage
// error, exit 2: tests/harness/test_cli.cpp), naming the option.
TEST(EccTuningOptions, OutOfRangeValuesAreRefusedNamingTheOption) {
  const std::map<std::string, std::vector<std::string>> bad = {
      {"min-chunk-2d", {"0", "4097", "x"}}, {"min-chunk-3d", {"0", "4097"}}, {"items-2d", {"0", "4097"}},
      {"items-3d", {"0", "-1"}},           {"head-pct-2d", {"-1", "101"}},  {"head-pct-3d", {"101", "4096"}},
      {"blocks-2d", {"1", "4"}},           {"blocks-3d", {"0", "4"}},       {"dense-from", {"0", "1026"}},
      {"graph-chunks", {"-1", "17"}}};
  const std::map<std::string, std::vector<std::string>> good = {
      {"min-chunk-2d", {"1", "4096"}}, {"items-3d", {"1", "4096"}},  {"head-pct-2d", {"0", "100"}},
      {"blocks-2d", {"2", "3"}},       {"dense-from", {"1", "1025"}}, {"graph-chunks", {"0", "16"}}};
  int checked = 0;
  for (const options::Spec& s : family::find("ecc").option_specs()) {
    if (const auto b = bad.find(s.name); b != bad.end()) {
      ++checked;
      for (const std::string& v : b->second) {
        try {
          s.check(v);
          ADD_FAILURE() << "--" << s.name << " " << v << " accepted";
        } catch (const cli::UsageError& e) {
          EXPECT_NE(std::string(e.what()).find("--" + s.name), std::string::npos) << e.what();
          EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
        }
      }
    }
    if (const auto g = good.find(s.name); g != good.end())
      for (const std::string& v : g->second) EXPECT_EQ(s.check(v), v) << s.name;
  }
  EXPECT_EQ(checked, static_cast<int>(bad.size()));
}

// On a GPU: the engine's variants with non-default tuning (both register budgets' other
// instantiations, small items, no head, the dense read-back everywhere, the graph path) still give
// the reference's curve, in each scope, and the rows record the values.
TEST(EccTuningOptionsGpu, NonDefaultValuesStayExact) {
  if (!gpu_available()) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason();
  const family::Family& f = family::find("ecc");
  for (const char* spec : {"uniform:515x97:levels=3000:dtype=uint16:seed=4", "grf:260x250:alpha=3:seed=5",
                           "uniform:129x17x13:levels=200:dtype=uint8:seed=6", "grf:40x41x42:alpha=3:seed=7"}) {
    auto p = f.problem(spec, cli::Args{});
    for (const char* variant :
         {"gpu-opt", "gpu-opt-static", "gpu-opt-fresh-rows", "gpu-opt-direct", "gpu-opt-warp", "gpu-opt-cluster", "gpu-opt-bins16",
          "gpu-opt-hash-bins16", "gpu-opt-sampled16", "gpu-stream"})
      for (const char* scope : {"kernel", "end-to-end"}) {
        if (std::string(variant) == "gpu-opt-cluster" && !ecc::opt::clusters_available()) continue;  // Hopper+
        if (std::string(variant) == "gpu-stream" && std::string(scope) == "kernel") continue;  // no plan
        SCOPED_TRACE(std::string(variant) + " " + scope + " on " + spec);
        const report::Result r = f.measure(*p, variant, scope, two_samples(), given(non_default()));
        EXPECT_TRUE(r.not_run.empty()) << r.not_run;
        EXPECT_TRUE(r.verified) << r.verification;
        EXPECT_EQ(r.options.value("min-chunk-2d", nlohmann::json()), 5);
        EXPECT_EQ(r.options.value("blocks-3d", nlohmann::json()), 3);
      }
  }
}

}  // namespace
}  // namespace repix
