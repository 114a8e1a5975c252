// Environment capture, git state and clock snapshots; must pass on machines without a GPU and
// without NVML (CI), and must not depend on whether the machine running it has them.
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <regex>
#include <string>

#include "core/gpu.hpp"
#include "harness/env.hpp"

namespace repix::env {
namespace {

using nlohmann::json;

// Sets (or unsets, with nullptr) an environment variable for the scope of the object.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = std::string(old);
    if (value) ::setenv(name, value, 1);
    else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_.c_str(), old_->c_str(), 1);
    else ::unsetenv(name_.c_str());
  }

 private:
  std::string name_;
  std::optional<std::string> old_;
};

constexpr const char* kNoNvml = "libnvidia-ml-absent-for-repix-tests.so.0";

TEST(Env, CaptureEnvironmentWorksWithoutAGpu) {
  const json e = capture_environment();
  for (const char* k : {"gpu", "cpu", "os", "memory", "build", "hostname", "timestamp"})
    EXPECT_TRUE(e.contains(k)) << k << "\n" << e.dump(2);

  ASSERT_TRUE(e["gpu"].is_object());
  EXPECT_EQ(e["gpu"]["available"], gpu_available());
  if (!gpu_available()) {
    EXPECT_TRUE(e["gpu"]["reason"].is_string());
    EXPECT_FALSE(e["gpu"]["reason"].get<std::string>().empty());
  } else {
    for (const char* k : {"name", "sm_count", "compute_capability", "total_memory_bytes", "l2_bytes",
                          "memory_bus_width_bits", "memory_clock_khz", "theoretical_bandwidth_gbs",
                          "max_shared_memory_per_block_bytes", "max_shared_memory_per_sm_bytes",
                          "driver_version", "runtime_version", "ecc_enabled", "pci_bus_id"})
      EXPECT_TRUE(e["gpu"].contains(k)) << k;
  }

  const json& cpu = e["cpu"];
  EXPECT_TRUE(cpu["model"].is_string());
  EXPECT_GE(cpu["logical_cores"].get<int>(), 1);
  EXPECT_GE(cpu["openmp"]["max_threads"].get<int>(), 1);
  EXPECT_TRUE(cpu["openmp"].contains("OMP_NUM_THREADS"));

  EXPECT_EQ(e["os"]["sysname"], "Linux");
  EXPECT_TRUE(e["os"]["machine"].is_string());
  EXPECT_TRUE(e["os"].contains("pretty_name"));
  EXPECT_GT(e["memory"]["total_bytes"].get<double>(), 0);

  const json& b = e["build"];
  for (const char* k : {"cxx_compiler", "cxx_flags", "cuda_compiler", "cuda_flags",
                        "cuda_architectures", "build_type", "benchmark_version", "repix_version"})
    EXPECT_TRUE(b[k].is_string()) << k;
  EXPECT_FALSE(b["build_type"].get<std::string>().empty());
  // Whether the linked Google Benchmark is a debug build, and why that changes no number.
  EXPECT_TRUE(b["benchmark_library_debug"].is_boolean());
  EXPECT_NE(b["benchmark_note"].get<std::string>().find("manual time"), std::string::npos);

  EXPECT_TRUE(std::regex_match(e["timestamp"].get<std::string>(),
                               std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")))
      << e["timestamp"];
  EXPECT_NO_THROW((void)e.dump());  // everything in it is valid UTF-8 / serialisable
}

// Test hooks (REPIX_TEST_*) change what a run measures (a smaller machine, a killed run): every
// one that is set is recorded, with its value, in env.test_hooks; nothing else is.
TEST(Env, TestHooksThatAreSetAreRecorded) {
  const char* hook = "REPIX_TEST_ENV_PROBE";
  ::unsetenv(hook);
  ::setenv("REPIX_NOT_A_TEST_HOOK_PROBE", "1", 1);
  EXPECT_FALSE(test_hooks().contains(hook));
  EXPECT_FALSE(test_hooks().contains("REPIX_NOT_A_TEST_HOOK_PROBE"));
  ::setenv(hook, "12345", 1);
  const json e = capture_environment();
  ::unsetenv(hook);
  ::unsetenv("REPIX_NOT_A_TEST_HOOK_PROBE");
  ASSERT_TRUE(e["test_hooks"].is_object()) << e.dump();
  EXPECT_EQ(e["test_hooks"].value(hook, ""), "12345") << e["test_hooks"].dump();
  for (const auto& [k, v] : e["test_hooks"].items()) EXPECT_EQ(k.rfind("REPIX_TEST_", 0), 0u) << k;
  ::setenv(hook, "", 1);  // set but empty: still set
  EXPECT_EQ(test_hooks().value(hook, "absent"), "");
  ::unsetenv(hook);
  EXPECT_FALSE(test_hooks().contains(hook));
}

TEST(Env, ToolInfoPrefersEnvironmentVariables) {
  {
    ScopedEnv sha("REPIX_GIT_SHA", "0123456789abcdef0123456789abcdef01234567");
    ScopedEnv dirty("REPIX_GIT_DIRTY", "1");
    const json t = tool_info();
    EXPECT_EQ(t["name"], "repix");
    EXPECT_EQ(t["version"], REPIX_VERSION);
    EXPECT_EQ(t["git_sha"], "0123456789abcdef0123456789abcdef01234567");
    EXPECT_EQ(t["git_dirty"], true);
    EXPECT_EQ(t["git_source"], "env");
  }
  {
    ScopedEnv sha("REPIX_GIT_SHA", "abc");
    ScopedEnv dirty("REPIX_GIT_DIRTY", "false");
    EXPECT_EQ(tool_info()["git_dirty"], false);
  }
  {
    ScopedEnv sha("REPIX_GIT_SHA", "abc");
    ScopedEnv dirty("REPIX_GIT_DIRTY", nullptr);
    EXPECT_TRUE(tool_info()["git_dirty"].is_null());
  }
}

// In a clone: git. In a build from `git archive` (CI's scripts/test-archive runs these tests
// there): the archive's commit from .repix-source, dirty state unknown. Else unknown.
TEST(Env, ToolInfoFallsBackToGitThenArchiveThenUnknown) {
  ScopedEnv sha("REPIX_GIT_SHA", nullptr);
  ScopedEnv dirty("REPIX_GIT_DIRTY", nullptr);
  const json t = tool_info();
  ASSERT_TRUE(t["git_sha"].is_string());
  const std::string src = t["git_source"].get<std::string>();
  if (src == "git") {
    EXPECT_TRUE(std::regex_match(t["git_sha"].get<std::string>(), std::regex("[0-9a-f]{40}")))
        << t["git_sha"];
    EXPECT_TRUE(t["git_dirty"].is_boolean());
  } else if (src == "archive") {
    EXPECT_TRUE(std::regex_match(t["git_sha"].get<std::string>(), std::regex("[0-9a-f]{40}")))
        << t["git_sha"];
    EXPECT_TRUE(t["git_dirty"].is_null());
    EXPECT_TRUE(t["archive_date"].is_string());
  } else {
    EXPECT_EQ(src, "unknown");
    EXPECT_EQ(t["git_sha"], "unknown");
    EXPECT_TRUE(t["git_dirty"].is_null());
  }
}

TEST(Env, ClockSnapshotWithoutNvmlIsUnavailableNotAnError) {
  {
    ScopedEnv lib("REPIX_NVML_LIBRARY", kNoNvml);
    json s;
    EXPECT_NO_THROW(s = gpu_clock_snapshot());
    EXPECT_EQ(s["available"], false);
    EXPECT_NE(s["reason"].get<std::string>().find("NVML"), std::string::npos) << s;
  }
  json s;
  EXPECT_NO_THROW(s = gpu_clock_snapshot(0, kNoNvml));
  EXPECT_EQ(s["available"], false);
  // Whatever this machine has, the default call answers without throwing.
  EXPECT_NO_THROW(s = gpu_clock_snapshot());
  ASSERT_TRUE(s["available"].is_boolean()) << s;
  if (s["available"] == true) {
    EXPECT_TRUE(s.contains("sm_clock_mhz"));
    EXPECT_TRUE(s.contains("reasons"));
  }
}

TEST(Env, DecodesClockReasonBits) {
  EXPECT_EQ(decode_clock_reasons(0), json::array());
  EXPECT_EQ(decode_clock_reasons(0x1 | 0x4 | 0x40 | (1ULL << 40)),
            (json{"gpu_idle", "sw_power_cap", "hw_thermal_slowdown", "unknown_0x10000000000"}));
}

json snap(double sm_mhz, unsigned long long mask) {
  return {{"available", true}, {"sm_clock_mhz", sm_mhz}, {"reasons_mask", mask},
          {"reasons", decode_clock_reasons(mask)}};
}

TEST(Env, ClocksSaggedOnClockDropOrLimiterReasons) {
  std::string why = "stale";
  EXPECT_FALSE(clocks_sagged(snap(1980, 0), snap(1980, 0), &why));
  EXPECT_TRUE(why.empty());
  EXPECT_FALSE(clocks_sagged(snap(1980, 0), snap(1800, 0), &why));  // within 10%
  EXPECT_FALSE(clocks_sagged(snap(345, 0x1), snap(1980, 0), &why));  // idle before: fine
  EXPECT_FALSE(clocks_sagged(snap(1980, 0), snap(1980, 0x1 | 0x2 | 0x10 | 0x100), &why));

  EXPECT_TRUE(clocks_sagged(snap(1980, 0), snap(1500, 0), &why));
  EXPECT_NE(why.find("1980"), std::string::npos) << why;
  EXPECT_NE(why.find("1500"), std::string::npos) << why;

  for (unsigned long long bit : {0x4ULL, 0x8ULL, 0x20ULL, 0x40ULL, 0x80ULL}) {
    EXPECT_TRUE(clocks_sagged(snap(1980, 0), snap(1980, bit), &why)) << bit;
    EXPECT_NE(why.find(decode_clock_reasons(bit)[0].get<std::string>()), std::string::npos) << why;
  }
  // A limiter active only before the run does not count.
  EXPECT_FALSE(clocks_sagged(snap(1980, 0x4), snap(1980, 0), &why));

  // Names alone (no mask) are understood too.
  json after = {{"available", true}, {"sm_clock_mhz", 1980}, {"reasons", {"sw_thermal_slowdown"}}};
  EXPECT_TRUE(clocks_sagged(snap(1980, 0), after, &why));

  const json none = {{"available", false}, {"reason", "no NVML"}};
  EXPECT_FALSE(clocks_sagged(none, snap(100, 0x8), &why));
  EXPECT_FALSE(clocks_sagged(snap(1980, 0), none, nullptr));
}

TEST(Env, RecordClocksStoresBothSnapshotsAndTheVerdict) {
  json env = capture_environment();
  EXPECT_TRUE(record_clocks(env, snap(1980, 0), snap(1400, 0x4)));
  EXPECT_EQ(env["gpu"]["clocks_before"]["sm_clock_mhz"], 1980);
  EXPECT_EQ(env["gpu"]["clocks_after"]["sm_clock_mhz"], 1400);
  EXPECT_EQ(env["gpu"]["clocks_sagged"], true);
  EXPECT_NE(env["gpu"]["clocks_sagged_why"].get<std::string>().find("sw_power_cap"), std::string::npos);

  json empty;
  EXPECT_FALSE(record_clocks(empty, snap(1980, 0), snap(1980, 0)));
  EXPECT_EQ(empty["gpu"]["clocks_sagged"], false);
  EXPECT_EQ(empty["gpu"]["clocks_sagged_why"], "");
}

}  // namespace
}  // namespace repix::env
