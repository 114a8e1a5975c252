#include "core/host_limits.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <thread>
#include <vector>

#include "core/error.hpp"

namespace repix {

namespace {

constexpr int kThreadsPerHardwareThread = 4;
constexpr int kThreadFloor = 1024;
constexpr std::uint64_t kUnknown = std::numeric_limits<std::uint64_t>::max();

int hardware_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

// The whole text as an unsigned number, or nothing.
bool parse_u64(const std::string& text, std::uint64_t& out) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return false;
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
  if (errno == ERANGE) return false;
  out = v;
  return true;
}

// The first whitespace-separated token of a file ("max", "1234"), or "".
std::string first_token(const std::string& path) {
  std::ifstream in(path);
  std::string t;
  in >> t;
  return t;
}

// The value of `key` in a "key value" file (cgroup memory.stat), or 0.
std::uint64_t stat_value(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string k;
  std::uint64_t v = 0;
  while (in >> k >> v)
    if (k == key) return v;
  return 0;
}

// "MemAvailable: 123 kB" in bytes, or kUnknown.
std::uint64_t meminfo_available() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  std::uint64_t v = 0;
  while (in >> key >> v) {
    std::getline(in, unit);
    if (key == "MemAvailable:") return v * 1024;
  }
  return kUnknown;
}

// What one cgroup folder leaves: limit - (usage - inactive page cache); kUnknown without a limit.
std::uint64_t cgroup_room(const std::string& dir, bool v2) {
  std::uint64_t limit = 0, usage = 0;
  if (!parse_u64(first_token(dir + (v2 ? "/memory.max" : "/memory.limit_in_bytes")), limit)) return kUnknown;
  if (limit >= (std::uint64_t(1) << 60)) return kUnknown;  // v1 writes "no limit" as ~2^63
  if (!parse_u64(first_token(dir + (v2 ? "/memory.current" : "/memory.usage_in_bytes")), usage)) usage = 0;
  const std::uint64_t inactive = stat_value(dir + "/memory.stat", v2 ? "inactive_file" : "total_inactive_file");
  const std::uint64_t working = usage > inactive ? usage - inactive : 0;
  return limit > working ? limit - working : 0;
}

// The least room of the process's memory cgroup and its ancestors (v2 and v1 hierarchies).
std::uint64_t cgroup_available() {
  std::uint64_t room = kUnknown;
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    // "0::/path" (v2) or "4:memory:/path" (v1).
    const auto a = line.find(':'), b = line.find(':', a == std::string::npos ? a : a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    std::string rel = line.substr(b + 1);
    const bool v2 = controllers.empty();
    if (!v2 && controllers.find("memory") == std::string::npos) continue;
    std::vector<std::string> mounts;
    if (v2) mounts = {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"};
    else mounts = {"/sys/fs/cgroup/memory"};
    for (const std::string& mount : mounts) {
      // The cgroup itself, then each parent up to the mount's root (all their limits apply).
      std::string r = rel;
      for (;;) {
        room = std::min(room, cgroup_room(mount + (r == "/" ? "" : r), v2));
        if (r.empty() || r == "/") break;
        const auto slash = r.find_last_of('/');
        r = slash == 0 || slash == std::string::npos ? "/" : r.substr(0, slash);
      }
    }
  }
  return room;
}

}  // namespace

int max_threads() { return std::max(kThreadFloor, kThreadsPerHardwareThread * hardware_threads()); }

std::string max_threads_text() {
  return "at most " + std::to_string(max_threads()) + ": " + std::to_string(kThreadsPerHardwareThread) +
         " x the " + std::to_string(hardware_threads()) + " hardware threads, and never fewer than " +
         std::to_string(kThreadFloor);
}

std::uint64_t available_host_memory() {
  // Test hook (recorded in a report's env.test_hooks): a machine with N bytes available.
  if (const char* forced = std::getenv("REPIX_TEST_HOST_MEMORY")) {
    std::uint64_t v = 0;
    if (parse_u64(forced, v)) return v;
  }
  return std::min(meminfo_available(), cgroup_available());
}

void require_host_memory(std::uint64_t need, const std::string& what) {
  const std::uint64_t have = available_host_memory();
  if (have == kUnknown || need <= have) return;
  throw Error(what + " needs " + format_gb(need) + " of host memory, " + format_gb(have) + " available");
}

std::string format_gb(std::uint64_t bytes) {
  const double gb = static_cast<double>(bytes) / 1e9;
  char buf[64];
  if (gb >= 100) std::snprintf(buf, sizeof buf, "%.0f GB", gb);
  else std::snprintf(buf, sizeof buf, "%.3g GB", gb);
  return buf;
}

}  // namespace repix
