// The NVTX ranges every family's runs carry, recorded through nvtx::set_observer: no `/` inside a
// range name, <family> > <variant> > phases, the warm-up under "warmup" (so that
// `--nvtx-include "repix@<family>/<variant>/" --nvtx-exclude "repix@warmup/"` selects the timed
// runs), for a CPU variant of each family run through the generic path (`repix profile`, and a
// table's measure()); on a GPU (skipped without), the kernel-scope path of each family's gpu-opt:
// set-up and uploads under "setup" outside the variant's ranges, the bench's KernelTimer, and the
// reference (another variant's run, since the protocol verifies) under "reference".
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "core/gpu.hpp"
#include "core/nvtx.hpp"
#include "harness/family.hpp"

namespace repix {
namespace {

using Stack = std::vector<std::string>;

// Each push on the test's thread with the stack it opened (outermost first).
struct Recorder {
  std::vector<Stack> pushes;
  Stack open;
  std::thread::id me = std::this_thread::get_id();
  bool balanced = true;
  Recorder() {
    nvtx::set_observer([this](const char* pushed) {
      if (std::this_thread::get_id() != me) return;  // worker threads' own phases
      if (pushed) {
        open.push_back(pushed);
        pushes.push_back(open);
      } else if (open.empty()) {
        balanced = false;
      } else {
        open.pop_back();
      }
    });
  }
  ~Recorder() { nvtx::set_observer({}); }
};

bool starts_with(const Stack& s, const Stack& prefix) {
  return s.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), s.begin());
}
// `s` lies on the path `x` (one of its outer ranges, or nested inside it).
bool on_path(const Stack& s, const Stack& x) { return starts_with(s, x) || starts_with(x, s); }

TEST(NvtxRange, PathsNestAndAnAlreadyOpenPathAddsNothing) {
  Recorder rec;
  {
    nvtx::Range a("fam/var");
    nvtx::Range again("fam/var");  // a variant's own range inside the harness's: nothing new
    nvtx::Range phase("kernel", 42);
    nvtx::Range other("fam2/var2");
  }
  EXPECT_TRUE(rec.open.empty());
  EXPECT_TRUE(rec.balanced);
  const std::vector<Stack> want = {{"fam"},
                                   {"fam", "var"},
                                   {"fam", "var", "kernel"},
                                   {"fam", "var", "kernel", "fam2"},
                                   {"fam", "var", "kernel", "fam2", "var2"}};
  EXPECT_EQ(rec.pushes, want);
}

// The first CPU variant of `f` and its first quick-suite dataset ("" when it has none).
std::pair<std::string, std::string> cpu_case(const family::Family& f) {
  std::string variant, dataset;
  for (const auto& v : f.variants())
    if (!v.gpu && variant.empty()) variant = v.id;
  const auto specs = f.suite_datasets("quick");
  if (!specs.empty()) dataset = specs.front();
  return {variant, dataset};
}

TEST(NvtxRange, ProfileOfEveryFamilyNestsFamilyVariantPhasesAndWrapsTheWarmup) {
  int phases = 0, families = 0;
  for (const auto& f : family::all()) {
    const auto [variant, dataset] = cpu_case(*f);
    if (variant.empty() || dataset.empty()) continue;
    SCOPED_TRACE(f->name() + "/" + variant + " on " + dataset);
    cli::Args a;
    a.positional = {f->name()};
    a.options = {{"variant", variant}, {"dataset", dataset}, {"iterations", "2"}};
    Recorder rec;
    ASSERT_EQ(f->profile(a), 0);
    EXPECT_TRUE(rec.open.empty());
    EXPECT_TRUE(rec.balanced);
    const Stack run = {f->name(), variant};
    const Stack warm = {"warmup", f->name(), variant};
    ++families;
    int warmups = 0, timed = 0;
    for (const Stack& s : rec.pushes) {
      EXPECT_EQ(s.back().find('/'), std::string::npos) << "a range name holds '/': " << s.back();
      EXPECT_LE(std::count(s.begin(), s.end(), f->name()), 1) << "the family's range opened twice";
      if (s == warm) ++warmups;
      if (s == run) ++timed;
      if (s.size() > run.size() && starts_with(s, run)) ++phases;  // inside a timed run
      // Every range is the dataset's, the reference's (another variant computing it), the warm-up's
      // (wrapping the variant's) or a timed run's.
      EXPECT_TRUE(on_path(s, warm) || on_path(s, run) || s[0] == "dataset" || s[0] == "reference")
          << "range outside the expected nesting: " << s.back() << " at depth " << s.size();
    }
    EXPECT_EQ(warmups, 1);
    EXPECT_EQ(timed, 2);
    EXPECT_GE(rec.pushes.size(), 1u);
    EXPECT_EQ(rec.pushes.front(), Stack{"dataset"});
  }
  EXPECT_GE(families, 3);
  // The variants' own phases (init, propagate, ...) sit inside their timed runs' ranges (and none
  // elsewhere, checked above).
  EXPECT_GT(phases, 0);
}

TEST(NvtxRange, MeasuredRunsOpenTheVariantsRangesOnly) {
  for (const auto& f : family::all()) {
    const auto [variant, dataset] = cpu_case(*f);
    if (variant.empty() || dataset.empty()) continue;
    SCOPED_TRACE(f->name() + "/" + variant + " on " + dataset);
    auto p = f->problem(dataset, cli::Args{});
    bench::Reps reps;
    reps.cpu = protocol::Rule::fixed(2);
    Recorder rec;
    const report::Result r = f->measure(*p, variant, "end-to-end", reps, cli::Args{});
    EXPECT_TRUE(r.verified) << r.not_run << r.verification;
    int runs = 0, warmups = 0;
    for (const Stack& s : rec.pushes) {
      EXPECT_EQ(s.back().find('/'), std::string::npos) << s.back();
      // The variant's own runs, its verifying warm-up, or the reference computed by another variant.
      const std::size_t at = s[0] == "warmup" || s[0] == "reference" ? 1 : 0;
      if (s.size() == at) continue;  // the "warmup" or "reference" range itself
      EXPECT_EQ(s[at], f->name()) << "outside the family's ranges: " << s.back();
      if (s.size() == 2 && at == 0) ++runs;
      if (s.size() == 3 && s[0] == "warmup") ++warmups;
    }
    EXPECT_EQ(runs, 2);     // the two samples
    EXPECT_EQ(warmups, 1);  // the verifying run (the reference where the variant makes it)
  }
}

TEST(NvtxRangeGpu, KernelScopeProfileSetsUpOutsideTheVariantsRanges) {
  if (!gpu_available()) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason();
  int profiled = 0;
  for (const auto& f : family::all()) {
    bool has = false;
    for (const auto& v : f->variants()) has = has || (v.gpu && v.id == "gpu-opt");
    const auto specs = f->suite_datasets("quick");
    if (!has || specs.empty()) continue;
    SCOPED_TRACE(f->name() + "/gpu-opt on " + specs.front());
    cli::Args a;
    a.positional = {f->name()};
    a.options = {{"variant", "gpu-opt"}, {"dataset", specs.front()}, {"iterations", "3"}, {"scope", "kernel"}};
    Recorder rec;
    try {
      ASSERT_EQ(f->profile(a), 0);
    } catch (const cli::UsageError&) {  // a gpu-opt without a device plan: end-to-end only
      continue;
    }
    ++profiled;
    EXPECT_TRUE(rec.open.empty());
    const Stack run = {f->name(), "gpu-opt"}, warm = {"warmup", f->name(), "gpu-opt"};
    int setups = 0, warmups = 0, timed = 0;
    for (const Stack& s : rec.pushes) {
      EXPECT_EQ(s.back().find('/'), std::string::npos) << s.back();
      if (s == Stack{"setup"}) ++setups;
      if (s[0] == "setup") EXPECT_EQ(std::count(s.begin(), s.end(), f->name()), 0) << "set-up inside the variant";
      if (s == warm) ++warmups;
      if (s == run) ++timed;
      EXPECT_TRUE(s[0] == "dataset" || s[0] == "setup" || s[0] == "reference" || on_path(s, warm) || on_path(s, run))
          << s.back();
      if (s[0] == "reference") EXPECT_NE(std::count(s.begin(), s.end(), std::string("gpu-opt")), 1) << "reference by the profiled variant";
    }
    EXPECT_EQ(setups, 1);
    EXPECT_EQ(warmups, 1);
    EXPECT_EQ(timed, 3);
  }
  EXPECT_GT(profiled, 0);
}

}  // namespace
}  // namespace repix
