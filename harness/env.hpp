// What a report records about the code and the machine it ran on: the tool and its git state,
// the GPU/CPU/OS/build environment, and SM clocks and throttle reasons (through NVML, loaded at
// run time; nothing here links against the driver or changes any clock or power setting).
// Everything works on machines without a GPU or without NVML: the GPU parts then say
// {"available": false, "reason": ...} instead of throwing.
#pragma once
#include <nlohmann/json.hpp>

#include <string>

namespace repix::env {

// {"name": "repix", "version": "0.1.0", "git_sha": "<40 hex>|unknown", "git_dirty": true|false|null,
//  "git_source": "env"|"git"|"archive"|"unknown"} (+ "archive_date" for an archive).
// The environment variables REPIX_GIT_SHA and REPIX_GIT_DIRTY (1/0, true/false, yes/no) win over
// git (the GPU machines get a copy of the tree without .git); otherwise `git -C REPIX_SOURCE_DIR`
// is asked; without a work tree there, a source archive's commit (.repix-source, filled in by
// `git archive`) is used. git_dirty is null when unknown (always for an archive: its files may
// have been edited after unpacking); untracked (non-ignored) files count as dirty.
nlohmann::json tool_info();
// One line about the source a tool_info() came from, for table and report headers:
// "<12-hex sha>", "<sha> (dirty)", "<sha> (source archive)", "unversioned source".
// Any field may be missing, null or mistyped (reports from elsewhere).
std::string describe_source(const nlohmann::json& tool);

// The prefix of the test hooks: environment variables (REPIX_TEST_DEVICE_MEMORY,
// REPIX_TEST_HOST_MEMORY, REPIX_TEST_KILL_AFTER_RECORDS, ...) that tests set to simulate a smaller
// machine or a killed run. Nothing else under algorithms/ reads the environment for what changes
// results or timings (scripts/check-no-tunable-getenv); those are declared options.
inline constexpr const char* kTestHookPrefix = "REPIX_TEST_";
// Every REPIX_TEST_* variable set in the environment, name -> value ({} when none): a report made
// under a test hook says so.
nlohmann::json test_hooks();

// This host's name ("unknown" where the system will not say).
std::string hostname();

// The report's "env" object: {"test_hooks", "gpu", "cpu", "os", "memory", "build", "hostname",
// "timestamp"}.
// "gpu" describes the current CUDA device, or is {"available": false, "reason": ...}.
// Clock snapshots are not taken here; the harness adds them with record_clocks().
nlohmann::json capture_environment();

// One NVML reading of the GPU the current CUDA device maps to (by PCI bus id; NVML index 0 when
// CUDA sees no device): {"available": true, "name", "pci_bus_id", "sm_clock_mhz", "mem_clock_mhz",
// "max_sm_clock_mhz", "max_mem_clock_mhz", "temperature_c", "power_w", "power_limit_w",
// "reasons_mask", "reasons": ["sw_power_cap", ...], "timestamp"}; a reading NVML refuses is null.
// Without NVML (or without a GPU): {"available": false, "reason": ...}. Never throws.
// The library is "libnvidia-ml.so.1" unless the environment variable REPIX_NVML_LIBRARY names
// another (tests use it to simulate a machine without NVML).
nlohmann::json gpu_clock_snapshot();
// Same, for an explicit CUDA device ordinal and NVML library (nullptr: as above).
nlohmann::json gpu_clock_snapshot(int cuda_device, const char* nvml_library = nullptr);

// Names of the bits of an NVML clocks event/throttle reasons mask, in bit order; bits without a
// name come out as "unknown_0x...".
nlohmann::json decode_clock_reasons(unsigned long long mask);

// True when the clocks sagged between two snapshots: the SM clock after is below 90% of the SM
// clock before, or a thermal, power-cap or hardware-slowdown reason is active after (GPU-idle,
// application-clocks, sync-boost and display-clock reasons are ignored). `why` (if not null)
// receives a one-line explanation when true and is cleared when false. Unavailable snapshots
// never count as sagged.
bool clocks_sagged(const nlohmann::json& before, const nlohmann::json& after, std::string* why);

// Stores the two snapshots in env["gpu"] as "clocks_before"/"clocks_after" with
// "clocks_sagged" (bool) and "clocks_sagged_why" (string, empty when not sagged); returns the
// sagged flag. env["gpu"] is created if absent.
bool record_clocks(nlohmann::json& env, const nlohmann::json& before, const nlohmann::json& after);

// UTC now, ISO-8601 with a Z suffix: "2025-01-31T12:34:56Z".
std::string utc_timestamp();

// The results folder name of this machine: the GPU's name in lowercase words joined by '-'
// ("nvidia-h100-80gb-hbm3"), or "cpu-only".
std::string machine_slug();

}  // namespace repix::env
