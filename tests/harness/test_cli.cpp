// End-to-end tests of the `repix` binary: exit codes, one-line errors, atomic outputs, and the
// ECC run path, on inputs written to a temporary folder. The binary's path comes from REPIX_CLI
// (set by CTest); when the test binary is run by hand without it, these tests skip.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "core/gpu.hpp"
#include "datasets/datasets.hpp"
#include "datasets/io.hpp"
#include "ecc/ecc.hpp"
#include "reconstruct/reconstruct.hpp"
#include "edt/edt.hpp"
#include "edt/verify.hpp"
#include "harness/report.hpp"
#include "harness/cli_test_util.hpp"

namespace fs = std::filesystem;

namespace repix {
namespace {

using test::CliResult;
class Cli : public test::CliTest {};

TEST_F(Cli, ListShowsFamiliesVariantsAndDatasets) {
  const CliResult r = run("list");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("ecc"), std::string::npos);
  EXPECT_NE(r.out.find("seq"), std::string::npos);
  EXPECT_NE(r.out.find("grf"), std::string::npos);
}

TEST_F(Cli, GenThenRunMatchesLibrary) {
  ASSERT_EQ(run("gen grf:48x40:seed=7 -o " + path("g.npy")).code, 0);
  const CliResult r = run("run ecc --variant omp --input " + path("g.npy") + " --output " + path("g.csv"));
  ASSERT_EQ(r.code, 0) << r.err;
  const ecc::Curve got = ecc::read_csv(path("g.csv"));
  const HostImage img = datasets::load(path("g.npy"));
  EXPECT_EQ(got, ecc::run_seq(img, {}));
  EXPECT_EQ(got.ecc.back(), 1);
  expect_only({"g.npy", "g.csv"});
}

TEST_F(Cli, CsvValuesReadBackAsTheSameFloats) {
  HostImage img(DType::f32, Shape::d2(3, 2));
  const float vals[6] = {0.1f, 1e-30f, -3.4028235e38f, 3.4028235e38f, 1.0f / 3.0f, -0.0f};
  std::copy(vals, vals + 6, img.data<float>());
  datasets::save(img, path("f.npy"));
  ASSERT_EQ(run("run ecc --variant seq --input " + path("f.npy") + " --output " + path("f.csv")).code, 0);
  const ecc::Curve got = ecc::read_csv(path("f.csv"));
  EXPECT_EQ(got, ecc::run_seq(img, {}));
}

TEST_F(Cli, MissingInputIsOneLineError) {
  const CliResult r = run("run ecc --variant seq --input " + path("nope.npy") + " --output " + path("o.csv"));
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("repix: error:"), std::string::npos) << r.err;
  expect_only({});
}

TEST_F(Cli, TruncatedNpyIsOneLineErrorAndNoOutput) {
  HostImage img(DType::u8, Shape::d2(64, 64));
  for (std::int64_t i = 0; i < img.size(); ++i) img.data<std::uint8_t>()[i] = static_cast<std::uint8_t>(i * 7);
  datasets::save(img, path("t.npy"));
  fs::resize_file(path("t.npy"), fs::file_size(path("t.npy")) - 100);
  const CliResult r = run("run ecc --variant seq --input " + path("t.npy") + " --output " + path("o.csv"));
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  expect_only({"t.npy"});
}

TEST_F(Cli, NaNInputIsRejectedWithPosition) {
  HostImage img(DType::f32, Shape::d2(4, 3));
  for (std::int64_t i = 0; i < img.size(); ++i) img.data<float>()[i] = static_cast<float>(i);
  img.data<float>()[6] = std::numeric_limits<float>::quiet_NaN();  // x=2, y=1
  datasets::save(img, path("n.npy"));
  const CliResult r = run("run ecc --variant omp --input " + path("n.npy") + " --output " + path("o.csv"));
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("NaN"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("x=2, y=1"), std::string::npos) << r.err;
  expect_only({"n.npy"});
}

TEST_F(Cli, UnknownVariantAndUsageErrors) {
  datasets::save(datasets::generate(datasets::Spec::parse("const:4x4:value=1")), path("c.npy"));
  CliResult r = run("run ecc --variant warp-drive --input " + path("c.npy") + " --output " + path("o.csv"));
  EXPECT_EQ(r.code, 2);  // an unknown name is a bad value: a usage error
  EXPECT_NE(r.err.find("known:"), std::string::npos) << r.err;
  r = run("run ecc --input " + path("c.npy") + " --output");  // an option without its value
  EXPECT_EQ(r.code, 2) << r.err;
  r = run("frobnicate");
  EXPECT_EQ(r.code, 2);
  r = run("run ecc --variant seq --input " + path("c.npy") + " --output " + path("o.csv") + " --bogus 1");
  EXPECT_EQ(r.code, 2);
  r = run("gen notakind:4x4 -o " + path("x.npy"));
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  expect_only({"c.npy"});
}

// gpu-opt's tuning options (ECC): an out-of-range value is one usage error line naming the option
// (exit 2) in run, profile and bench, before anything is computed or written.
TEST_F(Cli, EccTuningOptionOutOfRangeIsOneUsageLine) {
  const std::string input = " --input uniform:8x8:levels=3";
  for (const std::string& bad : {"--min-chunk-2d 0", "--min-chunk-3d 4097", "--items-2d 0", "--items-3d 5000",
                                 "--head-pct-2d 101", "--head-pct-3d -1", "--blocks-2d 4", "--blocks-3d 1",
                                 "--dense-from 1026", "--graph-chunks 17", "--graph-chunks x"}) {
    SCOPED_TRACE(bad);
    const std::string name = bad.substr(0, bad.find(' '));
    for (const std::string& cmd :
         {"run ecc --variant seq" + input + " --output " + path("o.csv") + " " + bad,
          "profile ecc --variant seq --dataset uniform:8x8:levels=3 --iterations 1 " + bad,
          "bench --family ecc --variants seq --dataset uniform:8x8:levels=3 --samples 1 --out " + path("r.json") + " " + bad}) {
      const CliResult r = run(cmd);
      EXPECT_EQ(r.code, 2) << cmd << "\n" << r.err;
      EXPECT_EQ(lines(r.err), 1) << r.err;
      EXPECT_NE(r.err.find(name), std::string::npos) << r.err;
    }
  }
  expect_only({});
  // In range, each is taken (seq reads none of them: its row lists none).
  const CliResult ok = run("bench --family ecc --variants seq --dataset uniform:8x8:levels=3 --samples 1 --out " +
                           path("r.json") + " --min-chunk-2d 5 --blocks-3d 3 --graph-chunks 16 --dense-from 1025");
  ASSERT_EQ(ok.code, 0) << ok.err;
  const report::Report rep = report::read_report(path("r.json"));
  ASSERT_EQ(rep.results.size(), 1u);
  EXPECT_TRUE(rep.results[0].options.contains("threads")) << rep.results[0].options.dump();
  EXPECT_FALSE(rep.results[0].options.contains("min-chunk-2d")) << rep.results[0].options.dump();
}

// A family option that none of the selected variants reads: one note line on standard error, and
// the run goes on (bench, run, profile); none where a selected variant reads it.
TEST_F(Cli, OptionReadByNoSelectedVariantIsOneNote) {
  const std::string note = "note: --min-chunk-2d is read by none of the selected variants (read by ";
  const CliResult b = run("bench --family ecc --variants seq --dataset uniform:8x8:levels=3 --samples 1 --out " +
                          path("r.json") + " --min-chunk-2d 24");
  ASSERT_EQ(b.code, 0) << b.err;
  EXPECT_NE(b.err.find(note), std::string::npos) << b.err;
  EXPECT_NE(b.err.find("gpu-opt"), std::string::npos) << b.err;
  const CliResult r = run("run ecc --variant seq --input uniform:8x8:levels=3 --output " + path("o.csv") +
                          " --min-chunk-2d 24");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(note), std::string::npos) << r.err;
  // gpu-opt reads it: no note (its bench case may be skipped without a GPU; the note comes first).
  const CliResult read = run("bench --family ecc --variants seq,gpu-opt --dataset uniform:8x8:levels=3 --samples 1 "
                             "--plan --min-chunk-2d 24");
  EXPECT_EQ(read.err.find("note: --min-chunk-2d"), std::string::npos) << read.err;
}

// `repix run --json` records the options the run read, defaults included, as a bench row does:
// a value given is there, an option the variant does not read is not.
TEST_F(Cli, RunJsonRecordsTheOptionsItRanWith) {
  const CliResult e = run("run ecc --variant omp --input uniform:16x8:levels=3 --threads 1 --json " + path("e.json"));
  ASSERT_EQ(e.code, 0) << e.err;
  const nlohmann::json je = nlohmann::json::parse(slurp(path("e.json")));
  EXPECT_EQ(je.at("options").value("threads", -1), 1) << je;
  EXPECT_FALSE(je["options"].contains("min-chunk-2d")) << je;  // gpu-opt's, not omp's
  const CliResult m = run("run maxtree --variant omp --input uniform:16x8:levels=3 --connectivity 8 --json " +
                          path("m.json"));
  ASSERT_EQ(m.code, 0) << m.err;
  const nlohmann::json jm = nlohmann::json::parse(slurp(path("m.json")));
  EXPECT_EQ(jm.at("options").value("connectivity", 0), 8) << jm;
  EXPECT_EQ(jm["options"].value("tile", -1), 0) << jm;  // a default, recorded
  EXPECT_EQ(jm.value("family", ""), "maxtree");
  EXPECT_EQ(jm.value("variant", ""), "omp");
}

// A report made under a test hook says so (env.test_hooks), and compare marks rows whose options
// differ, with a footnote naming them.
TEST_F(Cli, TestHooksInTheReportAndCompareFlagsDifferentOptions) {
  const std::string bench = "bench --family ecc --variants omp --dataset uniform:16x8:levels=3 --samples 1 --out ";
  const CliResult a = run(bench + path("a.json") + " --chunk-mib 1", "REPIX_TEST_HOST_MEMORY=1000000000000");
  ASSERT_EQ(a.code, 0) << a.err;
  const CliResult b = run(bench + path("b.json") + " --chunk-mib 2");
  ASSERT_EQ(b.code, 0) << b.err;
  const report::Report ra = report::read_report(path("a.json")), rb = report::read_report(path("b.json"));
  EXPECT_EQ(ra.env["test_hooks"].value("REPIX_TEST_HOST_MEMORY", ""), "1000000000000") << ra.env["test_hooks"];
  EXPECT_FALSE(rb.env["test_hooks"].contains("REPIX_TEST_HOST_MEMORY")) << rb.env["test_hooks"];
  const CliResult c = run("compare " + path("a.json") + " " + path("b.json"));
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_NE(c.out.find("omp [1]"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("[1] options differ: chunk-mib: A 1, B 2"), std::string::npos) << c.out;
  const CliResult same = run("compare " + path("a.json") + " " + path("a.json"));
  ASSERT_EQ(same.code, 0) << same.err;
  EXPECT_EQ(same.out.find("options differ"), std::string::npos) << same.out;
}

TEST_F(Cli, BenchWritesAValidReportAndCompareReadsIt) {
  const CliResult r = run("bench --variants seq,omp --dataset uniform:96x80:levels=7:seed=3 "
                          "--dataset grf:16x16x16:seed=5 --cpu-samples 2 --warmup 0 --out " +
                          path("r.json"));
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  const report::Report rep = report::read_report(path("r.json"));
  ASSERT_EQ(rep.results.size(), 4u);  // 2 variants x 2 datasets, end-to-end only without a GPU
  for (const auto& res : rep.results) {
    EXPECT_TRUE(res.verified) << res.variant << " " << res.dataset << ": " << res.verification;
    EXPECT_EQ(res.samples_ms.size(), 2u);
    EXPECT_GT(res.throughput, 0);
  }
  ASSERT_EQ(rep.datasets.size(), 2u);
  EXPECT_GT(rep.datasets[0].distinct_values, 1);
  const CliResult c = run("compare " + path("r.json") + " " + path("r.json"));
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_NE(c.out.find("omp"), std::string::npos);
}

TEST_F(Cli, BenchWithIoReadsTheFileEachSampleAndVerifies) {
  const CliResult r = run("bench --variants omp --dataset grf:24x20:seed=5 --scopes end-to-end,with-io "
                          "--cpu-samples 2 --warmup 0 --out " + path("r.json"));
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  const report::Report rep = report::read_report(path("r.json"));
  ASSERT_EQ(rep.results.size(), 2u);
  EXPECT_EQ(rep.results[1].scope, "with-io");
  EXPECT_TRUE(rep.results[1].verified) << rep.results[1].verification;
  EXPECT_EQ(rep.results[1].samples_ms.size(), 2u);
  const CliResult bad = run("bench --variants omp --dataset grf:8x8 --scopes disk");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("with-io"), std::string::npos) << bad.err;
}

TEST_F(Cli, CompareRejectsAMissingOrBrokenReport) {
  { std::ofstream(path("bad.json")) << "{\"schema_version\": 1,"; }
  const CliResult r = run("compare " + path("bad.json") + " " + path("missing.json"));
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(lines(r.err), 1) << r.err;
}

// ---- reconstruct ---------------------------------------------------------------------------------

TEST_F(Cli, ReconstructGenThenRunMatchesLibrary) {
  ASSERT_EQ(run("gen noise-mask:70x50:sigma=2:seed=3:marker=frame -o " + path("m.npy")).code, 0);
  ASSERT_EQ(run("gen noise-mask:70x50:sigma=2:seed=3 -o " + path("k.npy")).code, 0);
  const HostImage marker = datasets::load(path("m.npy")), mask = datasets::load(path("k.npy"));
  for (int conn : {4, 8}) {
    const CliResult r = run("run reconstruct --variant omp-tiled --tile 16 --threads 2 --connectivity " +
                            std::to_string(conn) + " --marker " + path("m.npy") + " --mask " + path("k.npy") +
                            " --output " + path("o.npy") + " --json " + path("s.json"));
    ASSERT_EQ(r.code, 0) << r.err;
    reconstruct::Options opt;
    opt.connectivity = conn;
    const HostImage want = reconstruct::find_variant("seq").run(marker, mask, opt).image;
    const HostImage got = datasets::load(path("o.npy"));
    ASSERT_EQ(got.shape(), want.shape());
    EXPECT_EQ(std::memcmp(got.raw(), want.raw(), want.bytes()), 0) << "connectivity " << conn;
    const std::string json = slurp(path("s.json"));
    EXPECT_NE(json.find("\"total_queued\""), std::string::npos) << json;
    EXPECT_NE(json.find("\"omp-tiled\""), std::string::npos) << json;
  }
  expect_only({"m.npy", "k.npy", "o.npy", "s.json"});
}

TEST_F(Cli, ReconstructTakesSpecsAndClipFlag) {
  // Dataset specs instead of files; --clip as a bare flag before another option.
  const CliResult r = run("run reconstruct --variant seq --clip --marker noise-mask:40x30:seed=2 "
                          "--mask noise-mask:40x30:seed=1 --output " + path("o.npy"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(datasets::load(path("o.npy")).shape(), Shape::d2(40, 30));
}

TEST_F(Cli, ReconstructBadInputsAreOneLineErrorsAndLeaveNothing) {
  HostImage mask(DType::u8, Shape::d2(8, 6)), marker(DType::u8, Shape::d2(8, 6));
  for (std::int64_t i = 0; i < mask.size(); ++i) {
    mask.data<std::uint8_t>()[i] = 100;
    marker.data<std::uint8_t>()[i] = 50;
  }
  marker.data<std::uint8_t>()[2 * 8 + 5] = 101;  // (x=5, y=2) above the mask
  datasets::save(mask, path("k.npy"));
  datasets::save(marker, path("m.npy"));
  datasets::save(datasets::generate("const:6x8:value=1"), path("t.npy"));            // transposed shape
  datasets::save(datasets::generate("const:8x6:value=1:dtype=uint16"), path("w.npy"));  // other dtype
  datasets::save(datasets::generate("const:8x6x2:value=1"), path("c.npy"));             // 3D
  const std::string out = " --output " + path("o.npy");
  struct Bad {
    std::string args, needle;
    int code;
  };
  const Bad bad[] = {
      {"--marker " + path("m.npy") + " --mask " + path("k.npy"), "(x=5, y=2)", 1},
      {"--marker " + path("t.npy") + " --mask " + path("k.npy"), "shapes differ", 1},
      {"--marker " + path("w.npy") + " --mask " + path("k.npy"), "dtypes differ", 1},
      {"--marker " + path("c.npy") + " --mask " + path("c.npy"), "2D", 1},
      {"--marker " + path("nope.npy") + " --mask " + path("k.npy"), "nope.npy", 1},
      {"--marker " + path("m.npy") + " --mask " + path("k.npy") + " --connectivity 6", "connectivity", 2},
      {"--marker " + path("m.npy") + " --mask " + path("k.npy") + " --queue-blocks-per-sm=-2", "queue-blocks-per-sm", 2},
      {"--marker " + path("m.npy"), "--mask", 2},
      {"--variant warp-drive --marker " + path("m.npy") + " --mask " + path("k.npy"), "known:", 2},
  };
  for (const Bad& b : bad) {
    const CliResult r = run("run reconstruct " + b.args + out);
    EXPECT_EQ(r.code, b.code) << b.args << ": " << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(b.needle), std::string::npos) << r.err;
  }
  expect_only({"k.npy", "m.npy", "t.npy", "w.npy", "c.npy"});
  // The same marker with --clip is fine.
  const CliResult ok = run("run reconstruct --clip --variant seq --marker " + path("m.npy") + " --mask " +
                           path("k.npy") + out);
  ASSERT_EQ(ok.code, 0) << ok.err;
  const HostImage got = datasets::load(path("o.npy"));
  for (std::int64_t i = 0; i < got.size(); ++i) EXPECT_EQ(got.data<std::uint8_t>()[i], 100) << i;
}

TEST_F(Cli, ReconstructBenchVerifiesEveryVariant) {
  const CliResult r = run("bench --family reconstruct --dataset tissue:80x64:coverage=50:marker=opening:radius=3 "
                          "--cpu-samples 1 --warmup 0 --out " + path("r.json"));
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  const report::Report rep = report::read_report(path("r.json"));
  ASSERT_GE(rep.results.size(), 5u);
  for (const auto& res : rep.results) {
    EXPECT_TRUE(res.verified) << res.variant << ": " << res.verification;
    EXPECT_EQ(res.unit, "GPx/s");
    // Our variants report their queue counters; peers (scikit-image where installed) have none.
    if (res.variant.rfind("peer:", 0) != 0) EXPECT_TRUE(res.extra.contains("total_queued")) << res.variant;
  }
  ASSERT_EQ(rep.datasets.size(), 2u);  // the marker and its mask
  const CliResult bad = run("bench --family reconstruct --dataset noise-mask:32x32 --cpu-samples 1");
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.err.find("marker spec"), std::string::npos) << bad.err;
}

// `--connectivity 4` reaches the runs (seq's queue counters differ from the default 8's, and the
// variants still equal seq) and is recorded in every result; it is refused where it cannot apply.
TEST_F(Cli, ReconstructBenchConnectivity) {
  const std::string ds = "--family reconstruct --dataset tissue:80x64:coverage=50:marker=opening:radius=3 "
                         "--variants seq,seq-sr,omp-tiled --cpu-samples 1 --warmup 0 --out ";
  ASSERT_EQ(run("bench " + ds + path("c4.json") + " --connectivity 4").code, 0);
  ASSERT_EQ(run("bench " + ds + path("c8.json")).code, 0);
  const report::Report r4 = report::read_report(path("c4.json")), r8 = report::read_report(path("c8.json"));
  ASSERT_EQ(r4.results.size(), 3u);
  for (const auto& res : r4.results) {
    EXPECT_TRUE(res.verified) << res.variant << ": " << res.verification;
    EXPECT_EQ(res.extra.value("connectivity", 0), 4) << res.variant;
  }
  for (const auto& res : r8.results) EXPECT_EQ(res.extra.value("connectivity", 0), 8) << res.variant;
  EXPECT_NE(r4.results[0].extra["total_queued"], r8.results[0].extra["total_queued"]);  // seq, 4 vs 8 neighbours
  EXPECT_EQ(run("bench " + ds + path("x.json") + " --connectivity 6").code, 2);
  const CliResult ecc = run("bench --suite quick --family ecc --connectivity 4 --out " + path("e.json"));
  EXPECT_EQ(ecc.code, 2);
  // The message names the families that take --connectivity (reconstruct, and the max-tree ones).
  EXPECT_NE(ecc.err.find("--connectivity applies to the reconstruct"), std::string::npos) << ecc.err;
}

// ---- edt --------------------------------------------------------------------------------------

TEST_F(Cli, EdtRunWritesDistancesSitesAndJson) {
  ASSERT_EQ(run("gen sparse:90x70:density=0.01:seed=3 -o " + path("m.npy")).code, 0);
  const CliResult r = run("run edt --variant omp-tiled --tile 16 --threads 2 --input " + path("m.npy") + " --output " +
                          path("d.npy") + " --sites " + path("s.npy") + " --json " + path("j.json"));
  ASSERT_EQ(r.code, 0) << r.err;
  const HostImage mask = datasets::load(path("m.npy"));
  edt::Result got;
  got.distance = datasets::load(path("d.npy"));
  ASSERT_EQ(got.distance.dtype(), DType::f32);
  // The int64 site map: the last 8 * n bytes of the .npy, after its '<i8' header.
  const std::string sites = slurp(path("s.npy"));
  ASSERT_NE(sites.find("'descr': '<i8'"), std::string::npos);
  ASSERT_NE(sites.find("'shape': (70, 90)"), std::string::npos);
  got.sites.resize(static_cast<std::size_t>(mask.size()));
  std::memcpy(got.sites.data(), sites.data() + sites.size() - got.sites.size() * 8, got.sites.size() * 8);
  const edt::Check c = edt::check_propagation(mask, edt::find_variant("seq-exact").run(mask, {}), got);
  EXPECT_TRUE(c.ok) << c.first_violation;
  const std::string j = slurp(path("j.json"));
  EXPECT_NE(j.find("\"properties_ok\": true"), std::string::npos) << j;
  EXPECT_NE(j.find("\"max_abs\""), std::string::npos) << j;
  expect_only({"m.npy", "d.npy", "s.npy", "j.json"});
}

TEST_F(Cli, EdtDefaultIsExactAndMatchesLibrary) {
  ASSERT_EQ(run("gen blobs:64x50:radius=6:fill=0.45:seed=2 -o " + path("b.npy")).code, 0);
  const CliResult r = run("run edt --input " + path("b.npy") + " --output " + path("d.npy"));
  ASSERT_EQ(r.code, 0) << r.err;
  const HostImage mask = datasets::load(path("b.npy"));
  EXPECT_EQ(datasets::load(path("d.npy")).content_hash(),
            edt::find_variant("seq-exact").run(mask, {}).distance.content_hash());
}

TEST_F(Cli, EdtErrorsAreOneLine) {
  HostImage img(DType::f32, Shape::d2(4, 3));
  for (std::int64_t i = 0; i < img.size(); ++i) img.data<float>()[i] = static_cast<float>(i);
  img.data<float>()[5] = std::numeric_limits<float>::infinity();
  datasets::save(img, path("n.npy"));
  CliResult r = run("run edt --variant seq --input " + path("n.npy") + " --output " + path("o.npy"));
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("inf at x=1, y=1"), std::string::npos) << r.err;
  ASSERT_EQ(run("gen uniform:8x8x8:levels=2 -o " + path("v.npy")).code, 0);
  r = run("run edt --variant seq --input " + path("v.npy") + " --output " + path("o.npy"));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("2D"), std::string::npos) << r.err;
  r = run("run edt --variant nope --input " + path("v.npy") + " --output " + path("o.npy"));
  EXPECT_NE(r.code, 0);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  r = run("run edt --variant seq --input " + path("v.npy"));
  EXPECT_NE(r.code, 0);
  expect_only({"n.npy", "v.npy"});
}

TEST_F(Cli, EdtBenchQuickVerifiesEveryCpuVariant) {
  const CliResult r = run("bench --family edt --dataset sparse:60x40:density=0.02 --samples 2 --cpu-samples 2 --out " + path("r.json"));
  ASSERT_EQ(r.code, 0) << r.err;
  const report::Report rep = report::read_report(path("r.json"));
  int n = 0;
  for (const auto& res : rep.results) {
    if (res.family != "edt") continue;
    ++n;
    EXPECT_TRUE(res.verified) << res.variant << ": " << res.verification;
    EXPECT_EQ(res.unit, "GPx/s");
    if (res.variant == "seq") EXPECT_TRUE(res.errors.contains("max_abs"));
  }
  EXPECT_GE(n, 3);
}

// ---- multi-device ---------------------------------------------------------------------------------

TEST_F(Cli, MultiDeviceRunsOnCpuGroupsAndReportsItsWorkers) {
  ASSERT_EQ(run("gen noise-mask:90x70:sigma=2:seed=3:marker=frame -o " + path("m.npy")).code, 0);
  ASSERT_EQ(run("gen noise-mask:90x70:sigma=2:seed=3 -o " + path("k.npy")).code, 0);
  const CliResult r = run("run reconstruct --variant multi-device --cpu-groups 2 --cpu-group-threads 1 --tile 16 "
                          "--marker " + path("m.npy") + " --mask " + path("k.npy") + " --output " + path("o.npy") +
                          " --json " + path("s.json"));
  ASSERT_EQ(r.code, 0) << r.err;
  const HostImage marker = datasets::load(path("m.npy")), mask = datasets::load(path("k.npy"));
  const HostImage want = reconstruct::find_variant("seq").run(marker, mask, {}).image;
  const HostImage got = datasets::load(path("o.npy"));
  ASSERT_EQ(got.shape(), want.shape());
  EXPECT_EQ(std::memcmp(got.raw(), want.raw(), want.bytes()), 0);
  const nlohmann::json j = nlohmann::json::parse(slurp(path("s.json")));
  ASSERT_TRUE(j["stats"].contains("tiled")) << j.dump();
  EXPECT_EQ(j["stats"]["tiled"]["tile_width"], 16);
  int groups = 0;
  for (const auto& w : j["stats"]["tiled"]["workers"]) groups += w["name"].get<std::string>().rfind("cpu", 0) == 0;
  EXPECT_EQ(groups, 2);

  ASSERT_EQ(run("gen sparse:80x60:density=0.01:seed=3 -o " + path("e.npy")).code, 0);
  const CliResult e = run("run edt --variant multi-device --cpu-groups 3 --tile 20 --input " + path("e.npy") +
                          " --output " + path("d.npy") + " --json " + path("e.json"));
  ASSERT_EQ(e.code, 0) << e.err;
  const nlohmann::json je = nlohmann::json::parse(slurp(path("e.json")));
  EXPECT_TRUE(je["properties_ok"].get<bool>()) << je.dump();
  EXPECT_EQ(je["stats"]["tiled"]["tiles"], 4 * 3);

  // Bad worker counts are usage errors; without a GPU, no CPU group means no worker at all.
  const CliResult bad = run("run reconstruct --variant multi-device --cpu-groups -1 --marker " + path("m.npy") +
                            " --mask " + path("k.npy") + " --output " + path("x.npy"));
  EXPECT_EQ(bad.code, 2) << bad.err;
  EXPECT_EQ(lines(bad.err), 1) << bad.err;
  if (!gpu_available()) {
    const CliResult none = run("run reconstruct --variant multi-device --marker " + path("m.npy") + " --mask " +
                               path("k.npy") + " --output " + path("x.npy"));
    EXPECT_EQ(none.code, 1);
    EXPECT_EQ(lines(none.err), 1) << none.err;
    EXPECT_NE(none.err.find("no workers"), std::string::npos) << none.err;
  }
  expect_only({"m.npy", "k.npy", "o.npy", "s.json", "e.npy", "d.npy", "e.json"});
}

// The bench passes its worker options to the multi-device variants (a GPU variant: without a GPU
// the bench skips it, and the options are only parsed).
TEST_F(Cli, BenchTakesMultiDeviceWorkers) {
  const CliResult r = run("bench --family reconstruct --variants multi-device --gpus 1 --cpu-groups 2 "
                          "--cpu-group-threads 1 --dataset noise-mask:150x100:marker=frame --samples 2 "
                          "--cpu-samples 1 --warmup 0 --out " + path("r.json"));
  if (!gpu_available()) {  // the options are taken; multi-device needs a GPU, so nothing runs
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.err.find("nothing ran: no variant or peer was selected that runs without a GPU"), std::string::npos)
        << r.err;
    EXPECT_FALSE(fs::exists(path("r.json")));
    return;
  }
  ASSERT_EQ(r.code, 0) << r.err;
  const report::Report rep = report::read_report(path("r.json"));
  ASSERT_FALSE(rep.results.empty());
  for (const auto& res : rep.results) {
    EXPECT_TRUE(res.verified) << res.variant << ": " << res.verification;
    ASSERT_TRUE(res.extra.contains("tiled")) << res.extra.dump();
    std::vector<std::string> names;
    for (const auto& w : res.extra["tiled"]["workers"]) names.push_back(w["name"]);
    EXPECT_EQ(names, (std::vector<std::string>{"gpu0", "cpu0", "cpu1"}));
  }
}

}  // namespace
}  // namespace repix
