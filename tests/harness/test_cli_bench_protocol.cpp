// `repix bench` through the measurement protocol, end to end: the default suite's plan names every
// registered family and variant (--plan, nothing measured); each row records its rule, what
// stopped it, its noise, its options and the variant that computed its reference; OpenMP's wait
// policy is recorded; Google Benchmark's flags other than the filter are refused, and
// a filter that is not a regular expression is a usage error before anything runs.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>
#include <string>

#include "harness/cli_test_util.hpp"
#include "harness/report.hpp"

namespace repix::test {
namespace {

class CliBenchProtocol : public CliTest {};

TEST_F(CliBenchProtocol, DefaultSuitePlanToursEveryFamilyAndVariant) {
  const CliResult plan = run("bench --suite default --plan");
  ASSERT_EQ(plan.code, 0) << plan.err;
  std::map<std::string, std::set<std::string>> planned;  // family -> variants
  std::set<std::string> scopes;
  std::istringstream lines(plan.out);
  std::string line;
  int rows = 0;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    ++rows;
    const std::string name = line.substr(0, line.find(' '));
    const auto a = name.find('/'), b = name.find('/', a + 1);
    planned[name.substr(0, a)].insert(name.substr(a + 1, b - a - 1));
    scopes.insert(name.substr(name.rfind('/') + 1));
  }
  EXPECT_NE(plan.out.find("# " + std::to_string(rows) + " rows: "), std::string::npos) << plan.out.substr(0, 200);
  const CliResult list = run("list variants");
  ASSERT_EQ(list.code, 0) << list.err;
  std::istringstream vl(list.out);
  int variants = 0;
  std::getline(vl, line);  // the header
  while (std::getline(vl, line)) {
    std::istringstream words(line);
    std::string family, id;
    if (!(words >> family >> id)) continue;
    ++variants;
    EXPECT_TRUE(planned[family].count(id)) << family << "/" << id << " is not in the default suite's plan";
  }
  EXPECT_GT(variants, 60);
  const CliResult families = run("list families");
  ASSERT_EQ(families.code, 0);
  std::istringstream fl(families.out);
  while (std::getline(fl, line)) {
    std::istringstream words(line);
    std::string word;
    if (words >> word && word.find(':') == std::string::npos) EXPECT_TRUE(planned.count(word)) << word;
  }
  EXPECT_TRUE(scopes.count("kernel") && scopes.count("end-to-end"));
  // Nothing measured, nothing written.
  expect_only({});
}

TEST_F(CliBenchProtocol, RowsRecordTheRuleWhatStoppedThemAndTheirReference) {
  // 2049 x 2048 uint8 is past ECC's 2^22 voxels: omp computes the reference seq is checked against.
  // No wait policy in the environment (ctest and the GPU round set one for the tests' processes).
  const CliResult r = run("bench --family ecc --variants seq --dataset uniform:2049x2048:levels=9:dtype=uint8:seed=3 "
                          "--max-samples 3 --max-time 0.2 --max-noise 0.5 --out " + path("r.json"),
                          "env -u OMP_WAIT_POLICY -u REPIX_OPENMP_DEFAULTS");
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  const report::Report rep = report::read_report(path("r.json"));
  ASSERT_EQ(rep.results.size(), 1u);
  const report::Result& x = rep.results[0];
  EXPECT_TRUE(x.verified) << x.verification;
  EXPECT_EQ(x.reference, "omp");
  EXPECT_NE(x.verification.find("reference computed by omp"), std::string::npos) << x.verification;
  ASSERT_TRUE(x.measurement.is_object());
  EXPECT_EQ(x.measurement["rule"]["max_samples"], 3);
  EXPECT_EQ(x.measurement["rule"]["max_time_s"], 0.2);
  EXPECT_EQ(x.measurement["rule"]["max_noise_pct"], 0.5);
  const std::string stop = x.measurement["stopped_by"];
  EXPECT_TRUE(stop == "noise" || stop == "max-time" || stop == "max-samples") << stop;
  EXPECT_LE(x.samples_ms.size(), 3u);
  EXPECT_GE(x.samples_ms.size(), 3u);  // the automatic minimum, capped by --max-samples
  EXPECT_TRUE(x.options.is_object());
  EXPECT_EQ(x.options["threads"], 0);
  // The progress line of the row, and the summary's noise column.
  EXPECT_NE(r.err.find("[1/1 rows, "), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("noise %"), std::string::npos) << r.out;
  // The OpenMP wait policy in force is recorded: libgomp's unless the environment chose one.
  EXPECT_TRUE(rep.env["cpu"]["openmp"]["OMP_WAIT_POLICY"].is_null());
  EXPECT_EQ(rep.env["cpu"]["openmp"]["wait_policy"], "libgomp default (spin, then sleep)");
  const CliResult passive = run("bench --family ecc --variants omp --dataset uniform:64x64:levels=9 --samples 2 --out " +
                                path("a.json"), "OMP_WAIT_POLICY=passive");
  ASSERT_EQ(passive.code, 0) << passive.err;
  const report::Report a = report::read_report(path("a.json"));
  EXPECT_EQ(a.env["cpu"]["openmp"]["OMP_WAIT_POLICY"], "passive");
  EXPECT_EQ(a.env["cpu"]["openmp"]["wait_policy"], "environment: passive");
}

TEST_F(CliBenchProtocol, ARowAboveTheNoiseTargetIsFlagged) {
  // An impossible target (0.0001 %) within 0.05 s: the row stops on time and says so.
  const CliResult r = run("bench --family ecc --variants seq --dataset uniform:64x64:levels=9 --max-noise 0.0001 "
                          "--max-time 0.05 --out " + path("r.json"),
                          "env -u OMP_WAIT_POLICY");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("stopped by max-time (noise above the target)"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("!"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("above the --max-noise target"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("OMP_WAIT_POLICY=passive"), std::string::npos) << r.out;  // the hint, under the default
  const report::Report rep = report::read_report(path("r.json"));
  EXPECT_FALSE(rep.results.at(0).measurement["noise_reached"].get<bool>());
  EXPECT_TRUE(rep.results.at(0).noise_above_target());
}

TEST_F(CliBenchProtocol, GoogleBenchmarkFlagsOtherThanTheFilterAreRefused) {
  const std::string bench = "bench --family ecc --variants seq,omp --dataset uniform:32x32:levels=5 --samples 1 ";
  for (const char* flag : {"--benchmark_out=" , "--benchmark_repetitions=3", "--benchmark_format=json"}) {
    const CliResult r = run(bench + flag + path("x.json") + " --out " + path("r.json"));
    EXPECT_EQ(r.code, 2) << flag << ": " << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
  }
  const CliResult bad_regex = run(bench + "'--benchmark_filter=seq(' --out " + path("r.json"));
  EXPECT_EQ(bad_regex.code, 2) << bad_regex.err;
  EXPECT_NE(bad_regex.err.find("not a regular expression"), std::string::npos) << bad_regex.err;
  expect_only({});
  // A leading '-' keeps what the expression does not match.
  const CliResult neg = run(bench + "--benchmark_filter=-/seq/ --out " + path("r.json"));
  ASSERT_EQ(neg.code, 0) << neg.err;
  const report::Report rep = report::read_report(path("r.json"));
  ASSERT_EQ(rep.results.size(), 1u);
  EXPECT_EQ(rep.results[0].variant, "omp");
  const CliResult none = run(bench + "--benchmark_filter=nothing-matches --out " + path("n.json"));
  EXPECT_EQ(none.code, 1);
  EXPECT_NE(none.err.find("no case matched"), std::string::npos) << none.err;
}

}  // namespace
}  // namespace repix::test
