// The measurement protocol around the rule (bench::measure_case): prepare (verify, warm up), the
// samples by the rule, finish (verify the timed output again), in that order; a wrong output is
// never timed; a wrong timed output marks the row; each row records its rule and what stopped it.
// The rule's options on the command line (protocol::from_args), the overall progress of a plan
// (progress::Plan), and every family's choice of the variant that computes its reference.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "datasets/io.hpp"
#include "harness/bench.hpp"
#include "harness/family.hpp"
#include "harness/progress.hpp"
#include "harness/protocol.hpp"

namespace repix {
namespace {

bench::Case fake_case(std::vector<std::string>& log, bool right_first, bool right_timed) {
  bench::Case c;
  c.result.family = "fam";
  c.result.variant = "v";
  c.result.items = 1000;
  c.prepare = [&log, right_first](bench::Case& me) {
    log.push_back("prepare");
    me.result.verified = right_first;
    me.result.verification = right_first ? "exact" : "differs at (3, 4)";
    if (!right_first) throw bench::WrongOutput(me.result.verification);
  };
  c.sample = [&log](bench::Case&) {
    log.push_back("sample");
    return 2.0;
  };
  c.finish = [&log, right_timed](bench::Case& me) {
    log.push_back("finish");
    if (!right_timed) {
      me.result.verified = false;
      me.result.verification = "timed output differs";
    }
  };
  return c;
}

TEST(MeasureCase, PrepareThenSamplesByTheRuleThenFinish) {
  std::vector<std::string> log;
  bench::Case c = fake_case(log, true, true);
  bench::measure_case(c, protocol::Rule::fixed(4));
  const std::vector<std::string> want = {"prepare", "sample", "sample", "sample", "sample", "finish"};
  EXPECT_EQ(log, want);
  EXPECT_TRUE(c.result.verified);
  EXPECT_TRUE(c.result.not_run.empty());
  EXPECT_EQ(c.result.samples_ms, std::vector<double>(4, 2.0));
  EXPECT_EQ(c.result.median_ms, 2.0);
  ASSERT_TRUE(c.result.measurement.is_object());
  EXPECT_EQ(c.result.measurement["stopped_by"], "max-samples");
  EXPECT_EQ(c.result.measurement["rule"]["max_samples"], 4);
  EXPECT_TRUE(c.result.measurement.contains("noise_pct"));
  EXPECT_TRUE(c.result.measurement.contains("sampling_s"));
  EXPECT_TRUE(c.result.measurement.contains("row_s"));
}

TEST(MeasureCase, AWrongOutputIsNeverTimed) {
  std::vector<std::string> log;
  bench::Case c = fake_case(log, false, true);
  bench::measure_case(c, protocol::Rule::fixed(4));
  EXPECT_EQ(log, std::vector<std::string>{"prepare"});
  EXPECT_FALSE(c.result.verified);
  EXPECT_TRUE(c.result.samples_ms.empty());
  EXPECT_EQ(c.result.not_run, "wrong output: differs at (3, 4)");
}

TEST(MeasureCase, AWrongTimedOutputMarksTheRow) {
  std::vector<std::string> log;
  bench::Case c = fake_case(log, true, false);
  bench::measure_case(c, protocol::Rule::fixed(2));
  EXPECT_EQ(log.back(), "finish");
  EXPECT_FALSE(c.result.verified);
  EXPECT_EQ(c.result.verification, "timed output differs");
  EXPECT_EQ(c.result.samples_ms.size(), 2u);  // kept: the report shows what was timed, unverified
}

TEST(MeasureCase, WrongOutputFoundAtTheFirstSampleEndsTheRow) {
  // Rows without a warm-up check their first timed output (FamilyOf's ensure_first_checked).
  std::vector<std::string> log;
  bench::Case c = fake_case(log, true, true);
  c.sample = [&log](bench::Case& me) -> double {
    log.push_back("sample");
    me.result.verification = "first timed output differs";
    throw bench::WrongOutput(me.result.verification);
  };
  bench::measure_case(c, protocol::Rule::fixed(5));
  EXPECT_EQ(log, (std::vector<std::string>{"prepare", "sample"}));
  EXPECT_TRUE(c.result.samples_ms.empty());
  EXPECT_EQ(c.result.not_run, "wrong output: first timed output differs");
}

TEST(MeasureCase, SelfTimedCasesKeepTheirOwnSamples) {
  // Peers take their samples by the rule themselves, in prepare().
  bench::Case c;
  c.result.items = 10;
  c.prepare = [](bench::Case& me) {
    me.result.verified = true;
    protocol::Outcome o;
    o.samples_ms = {3, 1, 2};
    o.stopped_by = protocol::Stop::kNoise;
    me.timed_by_prepare = o;
  };
  c.sample = [](bench::Case&) -> double { throw std::logic_error("a self-timed case is not sampled again"); };
  bench::measure_case(c, protocol::Rule{});
  EXPECT_EQ(c.result.samples_ms, (std::vector<double>{3, 1, 2}));
  EXPECT_EQ(c.result.median_ms, 2.0);
  EXPECT_EQ(c.result.measurement["stopped_by"], "noise");
}

TEST(ProtocolOptions, ParsedCheckedAndRecorded) {
  cli::Args a;
  a.options = {{"min-samples", "5"}, {"max-noise", "0.5"}, {"max-time", "2.5"}, {"min-time", "0"}, {"warmup", "0"}};
  const protocol::Rule r = protocol::from_args(a, protocol::Rule{});
  EXPECT_EQ(r.min_samples, 5);
  EXPECT_EQ(r.max_noise_pct, 0.5);
  EXPECT_EQ(r.max_time_s, 2.5);
  EXPECT_EQ(r.min_time_s, 0);
  EXPECT_EQ(r.warmup, 0);
  EXPECT_EQ(r.max_samples, protocol::Rule{}.max_samples);
  const nlohmann::json j = protocol::to_json(r);
  EXPECT_EQ(j["min_samples"], 5);
  EXPECT_EQ(protocol::rule_from_json(j).max_time_s, 2.5);
  EXPECT_EQ(protocol::to_json(protocol::Rule{})["min_samples"], "auto");
  for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{
           {"max-noise", "nan"}, {"max-noise", "-1"}, {"max-noise", "101"}, {"max-time", "inf"}, {"min-time", "1e9"},
           {"min-samples", "-2"}, {"max-samples", "0"}, {"max-samples", "1000000"}, {"warmup", "x"}, {"max-time", ""}}) {
    cli::Args bad;
    bad.options = {{k, v}};
    EXPECT_THROW(protocol::from_args(bad, protocol::Rule{}), cli::UsageError) << "--" << k << " " << v;
  }
  cli::Args crossed;
  crossed.options = {{"min-samples", "9"}, {"max-samples", "3"}};
  EXPECT_THROW(protocol::from_args(crossed, protocol::Rule{}), cli::UsageError);
  cli::Args min_only;  // one bound alone moves the other
  min_only.options = {{"min-samples", "2000"}};
  EXPECT_EQ(protocol::from_args(min_only, protocol::Rule{}).max_samples, 2000);
}

TEST(ProgressPlan, EstimatesTheRestFromTheRowsOfEachGroupDone) {
  progress::Plan p({"ecc", "ecc", "ecc", "edt", "edt", "maxtree"});
  EXPECT_EQ(p.rows(), 6u);
  EXPECT_EQ(p.summary(), "6 rows: ecc 3, edt 2, maxtree 1");
  EXPECT_LT(p.remaining_s(), 0);  // nothing done: nothing to estimate from
  EXPECT_EQ(p.line(0), "0/6 rows, 0 s elapsed");
  p.row_done(2);
  p.row_done(4);
  // ecc's last row ~3 s (its mean); edt's two and maxtree's one: the mean of all rows done, 3 s.
  EXPECT_DOUBLE_EQ(p.remaining_s(), 3 + 3 * 3);
  p.row_done(3);
  p.row_done(10);
  // edt's last: 10 s (its own mean now); maxtree: the mean of all done, 19 / 4.
  EXPECT_DOUBLE_EQ(p.remaining_s(), 10 + 19.0 / 4);
  EXPECT_EQ(p.line(75), "4/6 rows, 1 min 15 s elapsed, ~15 s left");
  EXPECT_EQ(p.time_per_group(), "ecc 9 s, edt 10 s");
  p.row_done(1);
  p.row_done(1);
  EXPECT_EQ(p.done(), 6u);
  EXPECT_EQ(p.line(3725), "6/6 rows, 1 h 02 min elapsed");
  p.row_done(5);  // past the plan: ignored
  EXPECT_EQ(p.done(), 6u);
}

// Gold: the variant each family's reference is computed by, on a small input and on its largest
// target input (where seq would take seconds or minutes): the fastest CPU variant that the family's
// own tests prove identical to the reference. A new family adds its line.
TEST(ReferenceChoice, EveryFamilyUsesAFastProvenVariantOnLargeInputs) {
  const std::map<std::string, std::pair<std::string, std::string>> want = {
      {"ecc", {"seq", "omp"}},              {"reconstruct", {"seq", "omp-tiled"}},
      {"edt", {"seq-exact", "seq-exact"}},  {"ranklet", {"seq", "omp-hist"}},
      {"auto-mi", {"seq", "omp"}},          {"ami", {"seq", "omp-hist"}},
      {"maxtree", {"seq", "omp"}},          {"area-opening", {"seq", "omp"}}};
  const std::vector<std::string> large_suites = {"targets", "iwpp-targets", "ami-targets", "maxtree-targets"};
  for (const auto& f : family::all()) {
    SCOPED_TRACE(f->name());
    const auto it = want.find(f->name());
    ASSERT_NE(it, want.end()) << "family " << f->name() << " has no line in this test";
    const std::vector<std::string> quick = f->suite_datasets("quick");
    ASSERT_FALSE(quick.empty());
    for (const std::string& spec : quick) EXPECT_EQ(f->reference_variant(spec, {}), it->second.first) << spec;
    std::string largest;
    std::int64_t most = 0;
    for (const std::string& suite : large_suites)
      for (const std::string& spec : f->suite_datasets(suite))
        if (datasets::shape_of(spec).size() > most) {
          most = datasets::shape_of(spec).size();
          largest = spec;
        }
    ASSERT_FALSE(largest.empty()) << "no targets dataset";
    const std::string by = f->reference_variant(largest, {});
    EXPECT_EQ(by, it->second.second) << largest;
    bool cpu = false;
    for (const auto& v : f->variants()) cpu = cpu || (v.id == by && !v.gpu);
    EXPECT_TRUE(cpu) << by << " is not a registered CPU variant";
  }
}

}  // namespace
}  // namespace repix
