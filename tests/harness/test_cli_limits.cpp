// The CLI under careless and hostile use (issue 12): limits checked up front (thread counts, host
// and device memory, header lengths), values that must not silently mean a default, inputs of the
// wrong kind, and reports or paper files that cannot be what they claim. Each case runs the
// binary and expects one line on stderr with the documented exit code (1 error, 2 usage; never 3,
// which is for bugs, and never a signal).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/gpu.hpp"
#include "core/host_limits.hpp"
#include "datasets/datasets.hpp"
#include "datasets/io.hpp"
#include "ecc/ecc.hpp"
#include "edt/edt.hpp"
#include "harness/cli_test_util.hpp"
#include "reconstruct/reconstruct.hpp"

namespace fs = std::filesystem;

namespace repix {
namespace {

using test::CliResult;

class CliLimits : public test::CliTest {
 protected:
  // One line on stderr, the exit code, no signal, and every needle in the line.
  void expect_refused(const CliResult& r, int code, std::initializer_list<std::string> needles) const {
    EXPECT_EQ(r.signal, 0) << r.err;
    EXPECT_EQ(r.code, code) << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    for (const auto& n : needles) EXPECT_NE(r.err.find(n), std::string::npos) << "'" << n << "' not in: " << r.err;
  }
  std::string small_image() const {
    const std::string p = path("img.npy");
    if (!fs::exists(p)) datasets::save(datasets::generate("uniform:16x12:levels=5:dtype=uint8"), p);
    return p;
  }
  // A bench report of one CPU result (seq on a tiny input).
  nlohmann::json small_report() const {
    const CliResult r = run("bench --family ecc --variants seq --dataset uniform:16x16:levels=4:dtype=uint8 "
                            "--scopes end-to-end --cpu-samples 3 --warmup 0 --out " + path("base.json"));
    EXPECT_EQ(r.code, 0) << r.err;
    std::ifstream in(path("base.json"));
    return nlohmann::json::parse(in);
  }
  void write_json(const std::string& name, const nlohmann::json& j) const { std::ofstream(path(name)) << j.dump(1); }
};

// ---- item 1: thread counts --------------------------------------------------------------------------

const char* const kTooManyThreads = "more threads than repix runs on this machine";

TEST_F(CliLimits, ThreadCountsAboveTheCapAreUsageErrorsForEveryFamily) {
  const std::string img = small_image();
  const std::string rec = " --marker noise-mask:32x32:marker=opening --mask noise-mask:32x32 --output " + path("o.npy");
  const std::vector<std::string> commands = {
      "run ecc --variant omp --threads 70000 --input " + img + " --output " + path("o.csv"),
      "run edt --variant seq-exact --threads 70000 --input " + img + " --output " + path("o.npy"),
      "run reconstruct --variant omp-nontiled --threads 70000" + rec,
      "run reconstruct --variant multi-device --cpu-groups 1 --cpu-group-threads 70000" + rec,
      "run edt --variant multi-device --cpu-groups 70000 --input " + img + " --output " + path("o.npy"),
      "profile ecc --variant omp --threads 70000 --dataset uniform:8x8",
      "bench --family reconstruct --cpu-group-threads 70000 --dataset noise-mask:32x32:marker=opening",
  };
  for (const std::string& c : commands) {
    SCOPED_TRACE(c);
    expect_refused(run(c), 2, {kTooManyThreads, "70000", "hardware threads"});
  }
  // Each count within the cap, their product (the multi-device engine's threads) above it.
  expect_refused(run("run reconstruct --variant multi-device --cpu-groups 1000 --cpu-group-threads 1000" + rec), 1,
                 {"1000 CPU groups of 1000 threads", kTooManyThreads});
  expect_only({"img.npy"});
}

TEST_F(CliLimits, ThreadCapItselfIsAccepted) {
  // The limit is stated in the message; exactly that many threads run (a tiny image).
  const CliResult refused = run("run ecc --variant omp --threads 1000000 --input " + small_image() + " --output " +
                                path("o.csv"));
  ASSERT_EQ(refused.code, 2) << refused.err;
  const std::string at_most = "at most ";
  const auto at = refused.err.find(at_most);
  ASSERT_NE(at, std::string::npos) << refused.err;
  const int cap = std::stoi(refused.err.substr(at + at_most.size()));
  EXPECT_EQ(cap, max_threads());
  EXPECT_GE(cap, 1024);
  const CliResult r = run("run ecc --variant omp --threads " + std::to_string(cap) + " --input " + small_image() +
                          " --output " + path("o.csv"));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(ecc::read_csv(path("o.csv")), ecc::run_seq(datasets::load(small_image()), {}));
  const CliResult over = run("run ecc --variant omp --threads " + std::to_string(cap + 1) + " --input " + small_image() +
                             " --output " + path("p.csv"));
  expect_refused(over, 2, {kTooManyThreads});
}

TEST_F(CliLimits, OmpNumThreadsAboveTheCapIsRefusedNotCrashed) {
  const std::string args = "run ecc --variant omp --input " + small_image() + " --output " + path("o.csv");
  expect_refused(run(args, "OMP_NUM_THREADS=70000"), 2, {"OMP_NUM_THREADS=70000", kTooManyThreads});
  expect_refused(run(args, "OMP_NUM_THREADS=4,70000"), 2, {"OMP_NUM_THREADS=4,70000", kTooManyThreads});
  expect_refused(run("list families", "OMP_NUM_THREADS=" + std::to_string(max_threads() + 1)), 2, {kTooManyThreads});
  EXPECT_EQ(run("list families", "OMP_NUM_THREADS=" + std::to_string(max_threads())).code, 0);
  const CliResult ok = run(args, "OMP_NUM_THREADS=3");
  EXPECT_EQ(ok.code, 0) << ok.err;
}

TEST_F(CliLimits, TableThreadCountsAreRefusedBeforeMeasuring) {
  expect_refused(run("table iwpp-fig10 --sizes small --threads 1,70000 --out " + path("t")), 2, {kTooManyThreads});
  expect_refused(run("table iwpp-fig15 --sizes small --cpu-group-threads 70000 --out " + path("t")), 2,
                 {kTooManyThreads, "--cpu-group-threads"});
  EXPECT_FALSE(fs::exists(path("t/iwpp-fig10.partial.jsonl")));
}

// ---- item 6: host and device memory -------------------------------------------------------------------

TEST_F(CliLimits, GenRefusesWhatDoesNotFitInHostMemory) {
  // 2^40 pixels: about 4.4 TB of working memory on any machine.
  expect_refused(run("gen noise-mask:1048576x1048576 -o " + path("g.npy")), 1,
                 {"generating noise-mask:1048576x1048576", "needs", "GB of host memory", "available"});
  // The same spec with a forced amount of memory (the test hook), on both sides of the estimate.
  expect_refused(run("gen tissue:200000x200000 -o " + path("g.npy"), "REPIX_TEST_HOST_MEMORY=100000000000"), 1,
                 {"needs 240 GB of host memory, 100 GB available"});
  expect_only({});
}

TEST_F(CliLimits, GenEstimatesEachKindsWorkingMemory) {
  // The peak per output byte each generator was measured at (datasets/*.cpp): refused one byte
  // below the estimate, generated at it.
  struct Case {
    std::string spec;
    long long peak;
  };
  const Case cases[] = {{"uniform:1000x1000:dtype=uint8", 1000000},
                        {"noise-mask:1000x1000", 4000000},
                        {"noise-mask:1000x1000:marker=opening", 4000000},
                        {"tissue:1000x1000", 6000000},
                        {"grf:500x500", 5000000},
                        {"blobs:1000x1000", 1000000}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.spec);
    expect_refused(run("gen " + c.spec + " -o " + path("g.npy"), "REPIX_TEST_HOST_MEMORY=" + std::to_string(c.peak - 1)),
                   1, {"needs", "of host memory"});
    EXPECT_FALSE(fs::exists(path("g.npy")));
    const CliResult ok = run("gen " + c.spec + " -o " + path("g.npy"), "REPIX_TEST_HOST_MEMORY=" + std::to_string(c.peak));
    EXPECT_EQ(ok.code, 0) << ok.err;
    fs::remove(path("g.npy"));
  }
}

TEST_F(CliLimits, BenchTableAndRunRefuseTooLargeInputsUpFront) {
  const std::string mem = "REPIX_TEST_HOST_MEMORY=1000000000";  // 1 GB
  expect_refused(run("bench --family reconstruct --dataset noise-mask:100000x100000:marker=opening --out " +
                         path("r.json"), mem),
                 1, {"bench on noise-mask:100000x100000:marker=opening", "needs", "1 GB available"});
  // A table refuses a size before it opens its journal.
  expect_refused(run("table iwpp-fig10 --sizes 1048576 --threads 1 --out " + path("t"), mem), 1,
                 {"iwpp-fig10 at 1048576^2", "needs 1100 GB of host memory, 1 GB available"});
  EXPECT_FALSE(fs::exists(path("t/iwpp-fig10.partial.jsonl")));
  // One the first check lets through is refused with its inputs' full estimate before they are
  // generated (tissue: 6 bytes a pixel while generating, marker and mask held, two outputs).
  const CliResult t = run("table iwpp-fig10 --sizes 20000 --threads 1 --out " + path("t"), mem);
  EXPECT_EQ(t.code, 1) << t.err;
  EXPECT_EQ(t.signal, 0);
  EXPECT_NE(t.err.find("repix: error: reconstruct on tissue:20000x20000"), std::string::npos) << t.err;
  EXPECT_NE(t.err.find("needs 3.6 GB of host memory, 1 GB available"), std::string::npos) << t.err;
  expect_refused(run("run reconstruct --variant seq --marker tissue:100000x100000:marker=frame --mask "
                     "tissue:100000x100000 --output " + path("o.npy"), mem),
                 1, {"generating tissue:100000x100000", "needs"});
  expect_refused(run("run ecc --variant seq --input grf:30000x30000 --output " + path("o.csv"), mem), 1,
                 {"generating grf:30000x30000", "needs"});
  EXPECT_FALSE(fs::exists(path("r.json")));
  EXPECT_FALSE(fs::exists(path("r.json.partial.jsonl")));
  EXPECT_FALSE(fs::exists(path("o.npy")));
}

TEST_F(CliLimits, AnAllocationThatFailsAnywayIsAnOutOfMemoryErrorNotABug) {
  // The estimate lets it through (forced plenty), the address-space limit makes the allocation
  // fail: std::bad_alloc inside the generator must end as exit 1, "out of host memory".
  const CliResult r = run("gen noise-mask:20000x20000 -o " + path("g.npy"), "ulimit -v 600000; REPIX_TEST_HOST_MEMORY=1000000000000");
  expect_refused(r, 1, {"out of host memory"});
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
  expect_only({});
}

TEST_F(CliLimits, DeviceMemoryShortageNamesTheBytes) {
  if (!gpu_available()) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason();
  // A forced device-memory limit (the test hook): the first large allocation fails as on a small GPU.
  const CliResult r = run("run reconstruct --variant gpu-naive --marker noise-mask:1024x1024:marker=opening --mask "
                          "noise-mask:1024x1024 --output " + path("o.npy"),
                          "REPIX_TEST_DEVICE_MEMORY=100000");
  expect_refused(r, 1, {"GPU out of memory: an allocation of", "bytes", "REPIX_TEST_DEVICE_MEMORY"});
  EXPECT_FALSE(fs::exists(path("o.npy")));
}

TEST(DeviceMemory, AllocationFailureNamesTheBytesAndLeavesTheGpuUsable) {
  if (!gpu_available()) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason();
  ::setenv("REPIX_TEST_DEVICE_MEMORY", "4096", 1);
  try {
    DeviceBuffer<float> b(2048);
    ADD_FAILURE() << "8192 bytes allocated under a 4096-byte limit";
  } catch (const CudaOutOfMemory& e) {
    EXPECT_NE(std::string(e.what()).find("8192 bytes"), std::string::npos) << e.what();
  }
  DeviceBuffer<float> fits(1024);  // 4096 bytes: at the limit
  EXPECT_NE(fits.get(), nullptr);
  ::unsetenv("REPIX_TEST_DEVICE_MEMORY");
  // Without the hook, an impossible size fails the same way, naming its bytes.
  try {
    DeviceBuffer<unsigned char> huge(std::size_t(1) << 50);
    ADD_FAILURE() << "1 PiB allocated";
  } catch (const CudaOutOfMemory& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(std::size_t(1) << 50) + " bytes"), std::string::npos) << e.what();
  }
  DeviceBuffer<float> after(1024);
  EXPECT_NE(after.get(), nullptr);
}

// ---- item 8: .npy header length ----------------------------------------------------------------------

TEST_F(CliLimits, NpyHeaderLengthBeyondTheFileIsRefusedWithoutAllocatingIt) {
  // 100 bytes, format 2.0, header length 0xFFFFFFF0. Under a 1 GB address-space limit, reserving
  // the claimed 4 GB would end in bad_alloc; the length must be refused before.
  std::string bytes = std::string("\x93NUMPY\x02\x00", 8) + std::string("\xf0\xff\xff\xff", 4);
  bytes.resize(100, ' ');
  std::ofstream(path("big.npy"), std::ios::binary) << bytes;
  const CliResult r = run("run ecc --variant seq --input " + path("big.npy") + " --output " + path("o.csv"),
                          "ulimit -v 1000000;");
  expect_refused(r, 1, {"big.npy", "claims 4294967280 bytes"});
  expect_only({"big.npy"});
}

TEST_F(CliLimits, NpyHeaderWithADuplicateKeyIsRefused) {
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'descr': '|u1', }";
  dict.append((64 - (10 + dict.size() + 1) % 64) % 64, ' ');
  dict.push_back('\n');
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
  bytes.push_back(static_cast<char>(dict.size()));
  bytes.push_back(0);
  bytes += dict + std::string(8, '\0');
  std::ofstream(path("dup.npy"), std::ios::binary) << bytes;
  expect_refused(run("run ecc --variant seq --input " + path("dup.npy") + " --output " + path("o.csv")), 1,
                 {"dup.npy", "'descr' given twice"});
}

// ---- item 12: values that must not mean a default, inputs of the wrong kind --------------------------

TEST_F(CliLimits, EmptyOrZeroCountsAreUsageErrorsNotDefaults) {
  const std::string img = small_image();
  const std::string bench = "bench --family ecc --variants seq --dataset uniform:8x8 --scopes end-to-end ";
  const std::vector<std::pair<std::string, std::string>> commands = {
      {"run ecc --variant omp --threads \"\" --input " + img + " --output " + path("o.csv"), "--threads"},
      {"run reconstruct --variant omp-tiled --threads= --marker noise-mask:16x16:marker=frame --mask noise-mask:16x16 "
       "--output " + path("o.npy"), "--threads"},
      {bench + "--samples \"\"", "--samples"},
      {bench + "--cpu-samples \"\"", "--cpu-samples"},
      {bench + "--cpu-samples 0", "--cpu-samples"},
      {bench + "--samples 0", "--samples"},
      {bench + "--warmup \"\"", "--warmup"},
      {"profile ecc --variant seq --dataset uniform:8x8 --iterations 0", "--iterations"},
      {"profile ecc --variant seq --dataset uniform:8x8 --iterations \"\"", "--iterations"},
  };
  for (const auto& [c, option] : commands) {
    SCOPED_TRACE(c);
    expect_refused(run(c), 2, {option});
  }
  expect_only({"img.npy"});
}

TEST_F(CliLimits, GpuVariantsWithoutAGpuSayTheyNeedOne) {
  if (gpu_available()) GTEST_SKIP() << "a GPU is present";
  const std::string img = small_image();
  std::vector<std::string> commands;
  for (const auto& v : ecc::variants())
    if (v.gpu) commands.push_back("run ecc --variant " + v.id + " --input " + img + " --output " + path("o.csv"));
  for (const auto& v : edt::variants())
    if (v.gpu && v.id != "multi-device")
      commands.push_back("run edt --variant " + v.id + " --input " + img + " --output " + path("o.npy"));
  for (const auto& v : reconstruct::variants())
    if (v.gpu && v.id != "multi-device")
      commands.push_back("run reconstruct --variant " + v.id +
                         " --marker noise-mask:16x16:marker=frame --mask noise-mask:16x16 --output " + path("o.npy"));
  ASSERT_GE(commands.size(), 15u);
  for (const std::string& c : commands) {
    SCOPED_TRACE(c);
    const CliResult r = run(c);
    expect_refused(r, 1, {"this variant needs a GPU"});
    EXPECT_EQ(r.err.find(".hpp:"), std::string::npos) << r.err;
  }
  expect_only({"img.npy"});
}

TEST_F(CliLimits, ADirectoryAsInputIsNamedAsOne) {
  fs::create_directories(path("folder"));
  fs::create_directories(path("folder.npy"));
  const std::vector<std::string> commands = {
      "run ecc --variant seq --input " + path("folder") + " --output " + path("o.csv"),
      "run ecc --variant seq --input " + path("folder.npy") + " --output " + path("o.csv"),
      "run edt --variant seq-exact --input " + path("folder.npy") + " --output " + path("o.npy"),
      "run reconstruct --variant seq --marker " + path("folder") + " --mask " + path("folder") + " --output " +
          path("o.npy"),
      "bench --family ecc --variants seq --dataset file:" + path("folder.npy"),
  };
  for (const std::string& c : commands) {
    SCOPED_TRACE(c);
    expect_refused(run(c), 1, {"folder", "is a directory"});
  }
  expect_only({"folder", "folder.npy"});
}

TEST_F(CliLimits, EccRunTakesDatasetSpecsLikeTheOtherFamilies) {
  const std::string spec = "uniform:8x8:levels=4";
  const CliResult r = run("run ecc --variant seq --input " + spec + " --output " + path("o.csv"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(ecc::read_csv(path("o.csv")), ecc::run_seq(datasets::generate(spec), {}));
  const CliResult g = run("run ecc --variant omp --input grf:12x10x6:seed=3 --json " + path("o.json"));
  ASSERT_EQ(g.code, 0) << g.err;
  // A spec with a bad key is still refused as a spec, and file: specs still read files.
  expect_refused(run("run ecc --variant seq --input uniform:8x8:lvls=4 --output " + path("p.csv")), 1, {"'lvls'"});
  datasets::save(datasets::generate(spec), path("u.npy"));
  const CliResult f = run("run ecc --variant seq --input file:" + path("u.npy") + " --output " + path("q.csv"));
  ASSERT_EQ(f.code, 0) << f.err;
  EXPECT_EQ(ecc::read_csv(path("q.csv")), ecc::read_csv(path("o.csv")));
}

TEST_F(CliLimits, GenShapeTooLargeSaysSo) {
  for (const std::string spec : {"uniform:4294967296x4294967296", "uniform:65536x65536x65537", "const:4294967296x65537"}) {
    SCOPED_TRACE(spec);
    const CliResult r = run("gen " + spec + " -o " + path("x.npy"));
    expect_refused(r, 1, {"too large", "2^48"});
    EXPECT_EQ(r.err.find("missing or empty"), std::string::npos) << r.err;
  }
  expect_refused(run("run ecc --variant seq --input file:" + path("x.raw") +
                     ":shape=4294967296x4294967296:dtype=uint8 --output " + path("o.csv")),
                 1, {"too large"});
  expect_only({});
}

TEST_F(CliLimits, CompareAndTablesRefuseTimingsNoMeasurementGives) {
  const nlohmann::json base = small_report();
  ASSERT_FALSE(base["results"].empty());
  write_json("good.json", base);
  const CliResult ok = run("compare " + path("good.json") + " " + path("good.json"));
  ASSERT_EQ(ok.code, 0) << ok.err;
  struct Bad {
    std::string field;
    nlohmann::json value;
  };
  const Bad bad[] = {{"median_ms", 0.0}, {"median_ms", -1.5}, {"median_ms", 1e308}, {"median_ms", nullptr},
                     {"q3_ms", 1e300}, {"min_ms", -0.1}};
  int n = 0;
  for (const Bad& b : bad) {
    SCOPED_TRACE(b.field + " = " + b.value.dump());
    nlohmann::json j = base;
    j["results"][0][b.field] = b.value;
    const std::string name = "bad" + std::to_string(n++) + ".json";
    write_json(name, j);
    const CliResult c = run("compare " + path("good.json") + " " + path(name));
    expect_refused(c, 1, {name, "results[0]." + b.field, "not a time a measurement gives"});
    EXPECT_EQ(c.out.find("nan"), std::string::npos) << c.out;
    expect_refused(run("table ecc-ablation --report " + path(name)), 1, {"results[0]." + b.field});
  }
  nlohmann::json sample = base;
  sample["results"][0]["samples_ms"][0] = 1e308;
  write_json("sample.json", sample);
  expect_refused(run("compare " + path("sample.json") + " " + path("good.json")), 1, {"samples_ms[0]"});
}

TEST_F(CliLimits, TableRefusesAnotherTablesPaperFile) {
  const std::string ecc_paper = std::string(REPIX_SOURCE_DIR) + "/results/paper/ecc-table1.json";
  expect_refused(run("table iwpp-fig10 --sizes small --paper " + ecc_paper + " --out " + path("t")), 1,
                 {"ecc-table1.json", "transcribes table ecc-1, not iwpp-fig10"});
  // The ECC tables read their paper file once measured (a journal of the measurements is kept).
  const CliResult e = run("table ecc-2 --quick --paper " + std::string(REPIX_SOURCE_DIR) +
                          "/results/paper/iwpp-fig10.json --out-dir " + path("t"));
  EXPECT_EQ(e.code, 1) << e.err;
  EXPECT_NE(e.err.find("repix: error: '"), std::string::npos) << e.err;
  EXPECT_NE(e.err.find("transcribes table iwpp-fig10, not ecc-2"), std::string::npos) << e.err;
  EXPECT_FALSE(fs::exists(path("t/ecc-table2.md")));
  // A file that does not say which table it transcribes is refused too.
  write_json("anon.json", {{"source", "somewhere"}, {"rows", nlohmann::json::array()}});
  expect_refused(run("table iwpp-fig10 --sizes small --paper " + path("anon.json") + " --out " + path("t")), 1,
                 {"anon.json", "does not say which table"});
}

TEST(PaperFiles, EachNamesTheTableItTranscribes) {
  // Every transcription under results/paper/ names its table, and that table exists.
  const fs::path dir = fs::path(REPIX_SOURCE_DIR) / "results" / "paper";
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".json") continue;
    ++files;
    std::ifstream in(e.path());
    const nlohmann::json j = nlohmann::json::parse(in);
    ASSERT_TRUE(j.contains("table") && j["table"].is_string()) << e.path();
    std::string want = e.path().stem().string();
    if (want.rfind("ecc-table", 0) == 0) want = "ecc-" + want.substr(9);
    EXPECT_EQ(j["table"].get<std::string>(), want) << e.path();
  }
  EXPECT_GT(files, 5);
}

}  // namespace
}  // namespace repix
