// Which variants read which option (options::Spec::variants, declared next to each option in the
// families' adapters): a report row and a `repix run --json` record list exactly the options their
// variant reads (FamilyOf::row_options_json). Every id a declaration names must be a variant of
// its family, or the option would silently drop out of the rows of the variant meant; a list that
// names every variant should be empty instead. Then, per family, the record of a CPU variant has
// the options it reads and none that only other (GPU, tiled, multi-device) variants read.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "harness/bench.hpp"
#include "harness/cli_test_util.hpp"
#include "harness/family.hpp"

namespace repix {
namespace {

// Every id each option of `family` names is a variant of it, once; no list names them all.
void expect_readers_are_variants(const std::string& family) {
  const family::Family& f = family::find(family);
  std::set<std::string> ids;
  for (const registry::VariantInfo& v : f.variants()) ids.insert(v.id);
  ASSERT_FALSE(ids.empty()) << family;
  int declared = 0;
  for (const options::Spec& s : f.option_specs()) {
    SCOPED_TRACE(family + " --" + s.name);
    if (s.variants.empty()) continue;
    ++declared;
    for (const std::string& id : s.variants) EXPECT_EQ(ids.count(id), 1u) << "'" << id << "' is no " << family << " variant";
    const std::set<std::string> named(s.variants.begin(), s.variants.end());
    EXPECT_EQ(named.size(), s.variants.size()) << "an id named twice";
    EXPECT_LT(named.size(), ids.size()) << "read by every variant: leave `variants` empty";
  }
  // Each of these families has options that only some of its variants read.
  EXPECT_GT(declared, 0) << family;
}

TEST(OptionReaders, ReconstructNamesOnlyItsVariants) { expect_readers_are_variants("reconstruct"); }
TEST(OptionReaders, EdtNamesOnlyItsVariants) { expect_readers_are_variants("edt"); }
TEST(OptionReaders, MaxtreeNamesOnlyItsVariants) { expect_readers_are_variants("maxtree"); }
TEST(OptionReaders, AreaOpeningNamesOnlyItsVariants) { expect_readers_are_variants("area-opening"); }
TEST(OptionReaders, RankletNamesOnlyItsVariants) { expect_readers_are_variants("ranklet"); }
TEST(OptionReaders, AutoMiNamesOnlyItsVariants) { expect_readers_are_variants("auto-mi"); }
TEST(OptionReaders, AmiNamesOnlyItsVariants) { expect_readers_are_variants("ami"); }
TEST(OptionReaders, EccNamesOnlyItsVariants) { expect_readers_are_variants("ecc"); }

// ---- the records ----------------------------------------------------------------------------

// The record's options are exactly `want` (the names; their values are the defaults or as given).
void expect_options(const nlohmann::json& j, std::vector<std::string> want) {
  ASSERT_TRUE(j.contains("options") && j["options"].is_object()) << j.dump();
  std::vector<std::string> got;
  for (const auto& [k, v] : j["options"].items()) got.push_back(k);
  std::sort(want.begin(), want.end());
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, want) << j.dump();
}

class OptionReadersCli : public test::CliTest {
 protected:
  // `repix run ARGS` with no output named: its --json record, on standard output.
  nlohmann::json record(const std::string& args) const {
    const test::CliResult r = run("run " + args);
    EXPECT_EQ(r.code, 0) << args << "\n" << r.err;
    try {
      return nlohmann::json::parse(r.out);
    } catch (const std::exception& e) {
      ADD_FAILURE() << args << ": no JSON record on stdout (" << e.what() << "):\n" << r.out;
      return nlohmann::json::object();
    }
  }
};

const std::string kMarker = " --marker noise-mask:24x20:marker=opening --mask noise-mask:24x20";

TEST_F(OptionReadersCli, ReconstructRecordsOnlyWhatItsVariantReads) {
  // seq: FH on one thread; it reads the scan pairs and sizes its FIFO by --queue-capacity, but no
  // thread count, tile, GPU queue launch or worker.
  const nlohmann::json seq = record("reconstruct --variant seq" + kMarker + " --connectivity 4 --clip");
  expect_options(seq, {"connectivity", "clip", "raster-scans", "queue-capacity"});
  EXPECT_EQ(seq["options"].value("connectivity", 0), 4) << seq;
  EXPECT_EQ(seq["options"].value("clip", false), true) << seq;
  // omp-tiled: threads, tiles and FH's scans per tile; no queue of the GPU's, no workers.
  const nlohmann::json tiled = record("reconstruct --variant omp-tiled" + kMarker + " --tile 8 --threads 2");
  expect_options(tiled, {"connectivity", "clip", "threads", "tile", "raster-scans"});
  EXPECT_EQ(tiled["options"].value("tile", 0), 8) << tiled;
  // seq-sr: scans until stable, nothing else.
  expect_options(record("reconstruct --variant seq-sr" + kMarker), {"connectivity", "clip"});
  // A GPU queue's option given to seq: not recorded, and one note naming its readers.
  const test::CliResult r = run("run reconstruct --variant seq" + kMarker + " --queue-blocks-per-sm 2");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(nlohmann::json::parse(r.out)["options"].contains("queue-blocks-per-sm")) << r.out;
  EXPECT_NE(r.err.find("note: --queue-blocks-per-sm is read by none of the selected variants (read by gpu-queue-atomic"),
            std::string::npos)
      << r.err;
}

// A bench row lists the options of its variant as its run record does, whatever else is given.
TEST(OptionReaders, ReconstructBenchRowRecordsOnlyWhatItsVariantReads) {
  const family::Family& f = family::find("reconstruct");
  auto p = f.problem("noise-mask:24x20:marker=opening", cli::Args{});
  bench::Reps reps;
  reps.cpu = protocol::Rule::fixed(1);
  reps.gpu = protocol::Rule::fixed(1);
  cli::Args given;
  given.options.emplace("queue-blocks-per-sm", "2");
  given.options.emplace("gpus", "1");
  const report::Result r = f.measure(*p, "seq", "end-to-end", reps, given);
  EXPECT_TRUE(r.verified) << r.not_run << r.verification;
  expect_options(nlohmann::json{{"options", r.options}}, {"connectivity", "clip", "raster-scans", "queue-capacity"});
}

TEST_F(OptionReadersCli, EdtRecordsOnlyWhatItsVariantReads) {
  const std::string in = " --input blobs:32x24:radius=4:fill=0.4:seed=1";
  // seq: one thread, a growing FIFO: none of the family's options.
  expect_options(record("edt --variant seq" + in), {});
  // seq-exact: its passes on --threads; no tile, queue or workers.
  const nlohmann::json exact = record("edt --variant seq-exact" + in + " --threads 2");
  expect_options(exact, {"threads"});
  EXPECT_EQ(exact["options"].value("threads", 0), 2) << exact;
  expect_options(record("edt --variant omp-tiled" + in), {"threads", "tile"});
}

TEST_F(OptionReadersCli, MaxtreeRecordsOnlyWhatItsVariantReads) {
  const std::string in = " --input uniform:16x12:levels=5:seed=2";
  expect_options(record("maxtree --variant seq" + in), {"connectivity"});
  expect_options(record("maxtree --variant seq-flood" + in + " --connectivity 8"), {"connectivity"});
  expect_options(record("maxtree --variant omp" + in), {"connectivity", "threads", "tile"});
}

TEST_F(OptionReadersCli, AreaOpeningRecordsOnlyWhatItsVariantReads) {
  const std::string in = " --input uniform:16x12:levels=5:seed=2 --area 3";
  const nlohmann::json seq = record("area-opening --variant seq" + in);
  expect_options(seq, {"connectivity", "area"});
  EXPECT_EQ(seq["options"].value("area", 0), 3) << seq;
  expect_options(record("area-opening --variant omp" + in), {"connectivity", "area", "threads", "tile"});
}

TEST_F(OptionReadersCli, RankletRecordsOnlyWhatItsVariantReads) {
  const std::string in = " --input uniform:12x10:levels=256:seed=1 --windows 2,4";
  const nlohmann::json seq = record("ranklet --variant seq" + in);
  expect_options(seq, {"windows"});
  EXPECT_EQ(seq["options"].value("windows", ""), "2,4") << seq;
  expect_options(record("ranklet --variant omp-hist" + in), {"windows", "threads"});
}

TEST_F(OptionReadersCli, AutoMiRecordsOnlyWhatItsVariantReads) {
  const std::string in = " --input uniform:12x10:levels=4:seed=1";
  // seq: one histogram a lag on one thread, nothing on a GPU.
  expect_options(record("auto-mi --variant seq" + in), {});
  expect_options(record("auto-mi --variant omp" + in), {"threads"});
}

TEST_F(OptionReadersCli, AmiRecordsOnlyWhatItsVariantReads) {
  const std::string in = " --input uniform:12x10:levels=256:seed=1 --windows 2";
  // seq's stages run on one thread, its quantisation on --threads; no GPU's options.
  expect_options(record("ami --variant seq" + in), {"windows", "threads"});
  expect_options(record("ami --variant omp-hist" + in), {"windows", "threads"});
}

}  // namespace
}  // namespace repix
