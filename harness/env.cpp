#include "harness/env.hpp"

#include <dlfcn.h>
#include <omp.h>
#include <sched.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <system_error>
#include <thread>
#include <vector>

#include "core/gpu.hpp"
#include "harness/gbench.hpp"
#include "harness/json_fields.hpp"

namespace repix::env {

using json_fields::field_or;

using nlohmann::json;

namespace {

// ---- small helpers --------------------------------------------------------------------------------

std::string trim(std::string s) {
  const auto not_space = [](unsigned char c) { return !std::isspace(c); };
  while (!s.empty() && !not_space(static_cast<unsigned char>(s.back()))) s.pop_back();
  std::size_t i = 0;
  while (i < s.size() && !not_space(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

json getenv_json(const char* name) {
  const char* v = std::getenv(name);
  return v ? json(v) : json(nullptr);
}

// Runs a shell command; true when it exits with status 0. Output (stdout only) in *out.
bool run_command(const std::string& cmd, std::string* out) {
  std::FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return false;
  std::string text;
  std::array<char, 4096> buf{};
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) text.append(buf.data(), n);
  const int status = ::pclose(p);
  if (out) *out = std::move(text);
  return status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') q += "'\\''";
    else q += c;
  }
  return q + "'";
}

// "12040" -> "12.4"; 0 -> null (no driver).
json cuda_version_string(int v) {
  if (v <= 0) return nullptr;
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

// Value of "key : value" lines (/proc/cpuinfo style) or "KEY=value" lines (os-release style).
std::string find_keyed_line(const std::string& path, const std::string& key, char sep) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const auto pos = line.find(sep);
    if (pos == std::string::npos) continue;
    if (trim(line.substr(0, pos)) != key) continue;
    std::string v = trim(line.substr(pos + 1));
    if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front())
      v = v.substr(1, v.size() - 2);
    return v;
  }
  return {};
}

// ---- git ------------------------------------------------------------------------------------------

json parse_dirty_flag(const std::string& raw) {
  const std::string v = lower(trim(raw));
  if (v == "1" || v == "true" || v == "yes" || v == "dirty") return true;
  if (v == "0" || v == "false" || v == "no" || v == "clean") return false;
  return nullptr;
}

// ---- CUDA device description -------------------------------------------------------------------

json device_attr(cudaDeviceAttr a, int dev) {
  int v = 0;
  if (cudaDeviceGetAttribute(&v, a, dev) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return v;
}

json describe_gpu() {
  json g = json::object();
  int runtime = 0, driver = 0;
  if (cudaRuntimeGetVersion(&runtime) != cudaSuccess) cudaGetLastError();
  if (cudaDriverGetVersion(&driver) != cudaSuccess) cudaGetLastError();
  if (!gpu_available()) {
    g["available"] = false;
    g["reason"] = gpu_unavailable_reason();
    g["runtime_version"] = cuda_version_string(runtime);
    g["driver_version"] = cuda_version_string(driver);
    g["cuda_visible_devices"] = getenv_json("CUDA_VISIBLE_DEVICES");
    return g;
  }
  int dev = 0, count = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) {
    cudaGetLastError();
    dev = 0;
  }
  if (cudaGetDeviceCount(&count) != cudaSuccess) cudaGetLastError();
  g["available"] = true;
  g["device"] = dev;
  g["device_count"] = count;
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, dev) == cudaSuccess) {
    g["name"] = std::string(prop.name);
    g["total_memory_bytes"] = static_cast<std::uint64_t>(prop.totalGlobalMem);
    std::ostringstream uuid;
    uuid << "GPU-";
    for (int i = 0; i < 16; ++i) {
      static const char* hex = "0123456789abcdef";
      const auto b = static_cast<unsigned char>(prop.uuid.bytes[i]);
      uuid << hex[b >> 4] << hex[b & 15];
      if (i == 3 || i == 5 || i == 7 || i == 9) uuid << '-';
    }
    g["uuid"] = uuid.str();
  } else {
    cudaGetLastError();
    g["name"] = nullptr;
    g["total_memory_bytes"] = nullptr;
  }
  const json major = device_attr(cudaDevAttrComputeCapabilityMajor, dev);
  const json minor = device_attr(cudaDevAttrComputeCapabilityMinor, dev);
  g["compute_capability"] = (major.is_number() && minor.is_number())
                                ? json(std::to_string(major.get<int>()) + "." +
                                       std::to_string(minor.get<int>()))
                                : json(nullptr);
  g["sm_count"] = device_attr(cudaDevAttrMultiProcessorCount, dev);
  g["sm_clock_peak_khz"] = device_attr(cudaDevAttrClockRate, dev);
  g["l2_bytes"] = device_attr(cudaDevAttrL2CacheSize, dev);
  g["memory_bus_width_bits"] = device_attr(cudaDevAttrGlobalMemoryBusWidth, dev);
  g["memory_clock_khz"] = device_attr(cudaDevAttrMemoryClockRate, dev);
  // Double data rate: two transfers per clock over the whole bus.
  if (g["memory_bus_width_bits"].is_number() && g["memory_clock_khz"].is_number()) {
    const double bytes_per_s = 2.0 * g["memory_clock_khz"].get<double>() * 1e3 *
                               g["memory_bus_width_bits"].get<double>() / 8.0;
    g["theoretical_bandwidth_gbs"] = bytes_per_s / 1e9;
    g["theoretical_bandwidth_how"] = "2 x memory clock x bus width / 8 (DDR), from CUDA attributes";
  } else {
    g["theoretical_bandwidth_gbs"] = nullptr;
  }
  g["max_shared_memory_per_block_bytes"] = device_attr(cudaDevAttrMaxSharedMemoryPerBlock, dev);
  g["max_shared_memory_per_block_optin_bytes"] =
      device_attr(cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
  g["max_shared_memory_per_sm_bytes"] =
      device_attr(cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev);
  const json ecc = device_attr(cudaDevAttrEccEnabled, dev);
  g["ecc_enabled"] = ecc.is_number() ? json(ecc.get<int>() != 0) : json(nullptr);
  char bus[64] = {0};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, dev) == cudaSuccess) {
    g["pci_bus_id"] = std::string(bus);
  } else {
    cudaGetLastError();
    g["pci_bus_id"] = nullptr;
  }
  g["driver_version"] = cuda_version_string(driver);
  g["runtime_version"] = cuda_version_string(runtime);
  g["cuda_visible_devices"] = getenv_json("CUDA_VISIBLE_DEVICES");
  return g;
}

// ---- CPU, OS, memory ------------------------------------------------------------------------------

json describe_cpu() {
  json c = json::object();
  std::string model = find_keyed_line("/proc/cpuinfo", "model name", ':');
  if (model.empty()) model = find_keyed_line("/proc/cpuinfo", "Model", ':');
  if (model.empty()) model = find_keyed_line("/proc/cpuinfo", "cpu model", ':');
  if (model.empty()) {
    // Arm servers (Grace) name only the implementer and part numbers.
    const std::string impl = find_keyed_line("/proc/cpuinfo", "CPU implementer", ':');
    const std::string part = find_keyed_line("/proc/cpuinfo", "CPU part", ':');
    if (!impl.empty()) model = "arm implementer " + impl + " part " + part;
  }
  c["model"] = model.empty() ? json("unknown") : json(model);
  c["logical_cores"] = std::thread::hardware_concurrency();
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  const long configured = ::sysconf(_SC_NPROCESSORS_CONF);
  c["online_cores"] = online > 0 ? json(online) : json(nullptr);
  c["configured_cores"] = configured > 0 ? json(configured) : json(nullptr);
  cpu_set_t set;
  CPU_ZERO(&set);
  c["affinity_cores"] =
      ::sched_getaffinity(0, sizeof set, &set) == 0 ? json(CPU_COUNT(&set)) : json(nullptr);
  json omp = json::object();
  omp["max_threads"] = omp_get_max_threads();
  omp["num_procs"] = omp_get_num_procs();
  omp["version"] = _OPENMP;
  omp["OMP_NUM_THREADS"] = getenv_json("OMP_NUM_THREADS");
  omp["OMP_PROC_BIND"] = getenv_json("OMP_PROC_BIND");
  omp["OMP_PLACES"] = getenv_json("OMP_PLACES");
  omp["OMP_WAIT_POLICY"] = getenv_json("OMP_WAIT_POLICY");
  omp["GOMP_SPINCOUNT"] = getenv_json("GOMP_SPINCOUNT");
  // The wait policy in force: libgomp's default spins before it sleeps, which on a busy machine
  // makes OpenMP rows noisy (report.cpp's summary says so where rows are).
  omp["wait_policy"] = std::getenv("OMP_WAIT_POLICY") ? "environment: " + std::string(std::getenv("OMP_WAIT_POLICY"))
                                                      : "libgomp default (spin, then sleep)";
  c["openmp"] = omp;
  return c;
}

json describe_os() {
  json o = json::object();
  struct utsname u {};
  if (::uname(&u) == 0) {
    o["sysname"] = u.sysname;
    o["release"] = u.release;
    o["version"] = u.version;
    o["machine"] = u.machine;
  } else {
    o["sysname"] = o["release"] = o["version"] = o["machine"] = nullptr;
  }
  std::string pretty = find_keyed_line("/etc/os-release", "PRETTY_NAME", '=');
  if (pretty.empty()) pretty = find_keyed_line("/usr/lib/os-release", "PRETTY_NAME", '=');
  o["pretty_name"] = pretty.empty() ? json(nullptr) : json(pretty);
  return o;
}

json describe_memory() {
  json m = json::object();
  // "MemTotal:       131891224 kB"
  const std::string v = find_keyed_line("/proc/meminfo", "MemTotal", ':');
  long long kb = 0;
  if (!v.empty() && std::sscanf(v.c_str(), "%lld", &kb) == 1 && kb > 0)
    m["total_bytes"] = static_cast<std::uint64_t>(kb) * 1024u;
  else
    m["total_bytes"] = nullptr;
  return m;
}

json describe_build() {
  json b = json::object();
  b["repix_version"] = REPIX_VERSION;
  b["build_type"] = REPIX_BUILD_TYPE;
  b["cxx_compiler"] = REPIX_CXX_COMPILER;
  b["cxx_flags"] = trim(REPIX_CXX_FLAGS);
  b["cuda_compiler"] = REPIX_CUDA_COMPILER;
  b["cuda_flags"] = trim(REPIX_CUDA_FLAGS);
  b["cuda_architectures"] = REPIX_CUDA_ARCHITECTURES;
  b["cuda_toolkit_headers"] = cuda_version_string(CUDART_VERSION);
  b["benchmark_version"] = REPIX_BENCHMARK_VERSION;
  // Distribution builds of Google Benchmark keep assertions on; it only schedules the cases.
  b["benchmark_library_debug"] = gbench::library_is_debug_build();
  b["benchmark_note"] =
      "Google Benchmark registers, filters and repeats the cases and prints the console table; every time in "
      "this report is a CUDA-event or host-clock sample taken by repix (manual time), so how the library itself "
      "was built does not change any number here";
  b["nlohmann_json_version"] = std::to_string(NLOHMANN_JSON_VERSION_MAJOR) + "." +
                               std::to_string(NLOHMANN_JSON_VERSION_MINOR) + "." +
                               std::to_string(NLOHMANN_JSON_VERSION_PATCH);
  return b;
}

// ---- NVML, loaded at run time -------------------------------------------------------------------
// The handful of NVML declarations used here (see nvml.h): every function returns nvmlReturn_t,
// an enum whose success value is 0.

using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1;      // NVML_CLOCK_SM
constexpr int kNvmlClockMem = 2;     // NVML_CLOCK_MEM
constexpr int kNvmlTemperatureGpu = 0;  // NVML_TEMPERATURE_GPU

// Clocks event (formerly "throttle") reason bits.
constexpr unsigned long long kReasonGpuIdle = 0x1ULL;
constexpr unsigned long long kReasonApplicationsClocksSetting = 0x2ULL;
constexpr unsigned long long kReasonSwPowerCap = 0x4ULL;
constexpr unsigned long long kReasonHwSlowdown = 0x8ULL;
constexpr unsigned long long kReasonSyncBoost = 0x10ULL;
constexpr unsigned long long kReasonSwThermalSlowdown = 0x20ULL;
constexpr unsigned long long kReasonHwThermalSlowdown = 0x40ULL;
constexpr unsigned long long kReasonHwPowerBrakeSlowdown = 0x80ULL;
constexpr unsigned long long kReasonDisplayClockSetting = 0x100ULL;
// The reasons that mean the measurement ran below the clocks it would otherwise have had.
constexpr unsigned long long kSagReasons = kReasonSwPowerCap | kReasonHwSlowdown |
                                           kReasonSwThermalSlowdown | kReasonHwThermalSlowdown |
                                           kReasonHwPowerBrakeSlowdown;

const std::vector<std::pair<unsigned long long, const char*>>& reason_names() {
  static const std::vector<std::pair<unsigned long long, const char*>> names = {
      {kReasonGpuIdle, "gpu_idle"},
      {kReasonApplicationsClocksSetting, "applications_clocks_setting"},
      {kReasonSwPowerCap, "sw_power_cap"},
      {kReasonHwSlowdown, "hw_slowdown"},
      {kReasonSyncBoost, "sync_boost"},
      {kReasonSwThermalSlowdown, "sw_thermal_slowdown"},
      {kReasonHwThermalSlowdown, "hw_thermal_slowdown"},
      {kReasonHwPowerBrakeSlowdown, "hw_power_brake_slowdown"},
      {kReasonDisplayClockSetting, "display_clock_setting"},
  };
  return names;
}

struct Nvml {
  void* handle = nullptr;
  nvmlReturn_t (*init)() = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*by_index)(unsigned, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*by_pci)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*max_clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*power)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*reasons)(nvmlDevice_t, unsigned long long*) = nullptr;

  std::string err(nvmlReturn_t r) const {
    const char* s = error_string ? error_string(r) : nullptr;
    return s ? std::string(s) : "NVML error " + std::to_string(r);
  }
};

template <class F>
void load_symbol(void* h, F& f, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    if (void* s = ::dlsym(h, n)) {
      f = reinterpret_cast<F>(s);
      return;
    }
  }
}

// Loads and initialises NVML once per library name; *why says what failed.
const Nvml* nvml_for(const std::string& lib, std::string* why) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<Nvml>> loaded;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = loaded.find(lib); it != loaded.end()) return it->second.get();
  void* h = ::dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = ::dlerror();
    *why = "NVML not loadable (" + lib + ": " + (e ? e : "dlopen failed") + ")";
    return nullptr;
  }
  auto n = std::make_unique<Nvml>();
  n->handle = h;
  load_symbol(h, n->init, {"nvmlInit_v2", "nvmlInit"});
  load_symbol(h, n->error_string, {"nvmlErrorString"});
  load_symbol(h, n->by_index, {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"});
  load_symbol(h, n->by_pci, {"nvmlDeviceGetHandleByPciBusId_v2", "nvmlDeviceGetHandleByPciBusId"});
  load_symbol(h, n->name, {"nvmlDeviceGetName"});
  load_symbol(h, n->clock, {"nvmlDeviceGetClockInfo"});
  load_symbol(h, n->max_clock, {"nvmlDeviceGetMaxClockInfo"});
  load_symbol(h, n->temperature, {"nvmlDeviceGetTemperature"});
  load_symbol(h, n->power, {"nvmlDeviceGetPowerUsage"});
  load_symbol(h, n->power_limit, {"nvmlDeviceGetEnforcedPowerLimit"});
  load_symbol(h, n->reasons, {"nvmlDeviceGetCurrentClocksEventReasons",
                              "nvmlDeviceGetCurrentClocksThrottleReasons"});
  if (!n->init || !n->by_index || !n->clock) {
    *why = "NVML library " + lib + " lacks nvmlInit/nvmlDeviceGetHandleByIndex/nvmlDeviceGetClockInfo";
    ::dlclose(h);
    return nullptr;
  }
  // Initialised for the life of the process (NVML reference-counts init/shutdown; a shutdown at
  // exit would race with other static destructors and buys nothing).
  const nvmlReturn_t r = n->init();
  if (r != kNvmlSuccess) {
    *why = "nvmlInit failed: " + n->err(r);
    ::dlclose(h);
    return nullptr;
  }
  return (loaded[lib] = std::move(n)).get();
}

json unavailable(const std::string& reason) {
  return json{{"available", false}, {"reason", reason}};
}

}  // namespace

std::string hostname() {
  char buf[256] = {0};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

// ---- public API -----------------------------------------------------------------------------------

std::string utc_timestamp() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

json tool_info() {
  json t = json::object();
  t["name"] = "repix";
  t["version"] = REPIX_VERSION;
  const char* env_sha = std::getenv("REPIX_GIT_SHA");
  const char* env_dirty = std::getenv("REPIX_GIT_DIRTY");
  t["git_dirty"] = env_dirty ? parse_dirty_flag(env_dirty) : json(nullptr);
  if (env_sha && *env_sha) {
    t["git_sha"] = trim(env_sha);
    t["git_source"] = "env";
    return t;
  }
  // Only trust git when REPIX_SOURCE_DIR is itself the top of a work tree: a copy of the sources
  // without .git that happens to lie inside some other repository must not borrow its sha.
  const std::string dir = REPIX_SOURCE_DIR;
  const std::string git = "git -C " + shell_quote(dir) + " ";
  std::string top, sha, status;
  std::error_code ec;
  if (run_command(git + "rev-parse --show-toplevel 2>/dev/null", &top) &&
      std::filesystem::equivalent(trim(top), dir, ec) && !ec &&
      run_command(git + "rev-parse HEAD 2>/dev/null", &sha) && !trim(sha).empty()) {
    t["git_sha"] = trim(sha);
    t["git_source"] = "git";
    if (!env_dirty && run_command(git + "status --porcelain 2>/dev/null", &status))
      t["git_dirty"] = !trim(status).empty();
    return t;
  }
  // A source archive (`git archive`, "download ZIP") names its commit in .repix-source, read at
  // configure time; whether its files were edited after unpacking is unknown (git_dirty null).
  if (*REPIX_ARCHIVE_SHA) {
    t["git_sha"] = REPIX_ARCHIVE_SHA;
    t["git_source"] = "archive";
    t["archive_date"] = REPIX_ARCHIVE_DATE;
    return t;
  }
  t["git_sha"] = "unknown";
  t["git_source"] = "unknown";
  return t;
}

std::string describe_source(const json& tool) {
  using json_fields::field_or;
  const std::string sha = field_or(tool, "git_sha", "unknown");
  const std::string source = field_or(tool, "git_source", "");
  std::string s = sha == "unknown" || sha.empty() ? "unversioned source" : sha.substr(0, 12);
  const json dirty = tool.is_object() && tool.contains("git_dirty") ? tool["git_dirty"] : json();
  if (dirty.is_boolean() && dirty.get<bool>()) s += " (dirty)";
  else if (source == "archive") s += " (source archive)";
  return s;
}

json test_hooks() {
  json hooks = json::object();
  for (char** v = environ; v && *v; ++v) {
    const std::string kv = *v;
    const std::size_t eq = kv.find('=');
    if (kv.rfind(kTestHookPrefix, 0) == 0 && eq != std::string::npos) hooks[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return hooks;
}

json capture_environment() {
  json e = json::object();
  e["test_hooks"] = test_hooks();
  e["gpu"] = describe_gpu();
  e["cpu"] = describe_cpu();
  e["os"] = describe_os();
  e["memory"] = describe_memory();
  e["build"] = describe_build();
  e["hostname"] = hostname();
  e["timestamp"] = utc_timestamp();
  return e;
}

json decode_clock_reasons(unsigned long long mask) {
  json names = json::array();
  unsigned long long known = 0;
  for (const auto& [bit, name] : reason_names()) {
    known |= bit;
    if (mask & bit) names.push_back(name);
  }
  for (int b = 0; b < 64; ++b) {
    const unsigned long long bit = 1ULL << b;
    if ((mask & bit) && !(known & bit)) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "unknown_0x%llx", bit);
      names.push_back(buf);
    }
  }
  return names;
}

json gpu_clock_snapshot() { return gpu_clock_snapshot(-1, nullptr); }

json gpu_clock_snapshot(int cuda_device, const char* nvml_library) {
  try {
    std::string lib = "libnvidia-ml.so.1";
    if (nvml_library && *nvml_library) {
      lib = nvml_library;
    } else if (const char* e = std::getenv("REPIX_NVML_LIBRARY"); e && *e) {
      lib = e;
    }
    std::string why;
    const Nvml* n = nvml_for(lib, &why);
    if (!n) return unavailable(why);

    // Map the CUDA device to NVML through its PCI bus id (CUDA and NVML order devices
    // differently, and CUDA_VISIBLE_DEVICES renumbers them).
    nvmlDevice_t dev = nullptr;
    json pci = nullptr;
    if (gpu_available()) {
      int d = cuda_device;
      if (d < 0 && cudaGetDevice(&d) != cudaSuccess) {
        cudaGetLastError();
        d = 0;
      }
      char bus[64] = {0};
      if (cudaDeviceGetPCIBusId(bus, sizeof bus, d) == cudaSuccess) {
        pci = std::string(bus);
        if (n->by_pci && n->by_pci(bus, &dev) != kNvmlSuccess) dev = nullptr;
      } else {
        cudaGetLastError();
      }
    }
    if (!dev) {
      const unsigned idx = cuda_device >= 0 ? static_cast<unsigned>(cuda_device) : 0u;
      const nvmlReturn_t r = n->by_index(idx, &dev);
      if (r != kNvmlSuccess) return unavailable("NVML has no device " + std::to_string(idx) + ": " + n->err(r));
    }

    json s = json::object();
    s["available"] = true;
    char name[128] = {0};
    s["name"] = (n->name && n->name(dev, name, sizeof name) == kNvmlSuccess) ? json(std::string(name))
                                                                              : json(nullptr);
    s["pci_bus_id"] = pci;
    // Each reading is null where NVML refuses it (not supported on this board, no permission).
    auto read_u32 = [&](auto fn, auto... args) -> json {
      unsigned v = 0;
      if (!fn || fn(dev, args..., &v) != kNvmlSuccess) return nullptr;
      return v;
    };
    auto milli_to_unit = [](const json& mv) { return mv.is_number() ? json(mv.get<double>() / 1000.0) : mv; };
    s["sm_clock_mhz"] = read_u32(n->clock, kNvmlClockSm);
    s["mem_clock_mhz"] = read_u32(n->clock, kNvmlClockMem);
    s["max_sm_clock_mhz"] = read_u32(n->max_clock, kNvmlClockSm);
    s["max_mem_clock_mhz"] = read_u32(n->max_clock, kNvmlClockMem);
    s["temperature_c"] = read_u32(n->temperature, kNvmlTemperatureGpu);
    s["power_w"] = milli_to_unit(read_u32(n->power));
    s["power_limit_w"] = milli_to_unit(read_u32(n->power_limit));
    unsigned long long mask = 0;
    if (n->reasons && n->reasons(dev, &mask) == kNvmlSuccess) {
      s["reasons_mask"] = mask;
      s["reasons"] = decode_clock_reasons(mask);
    } else {
      s["reasons_mask"] = nullptr;
      s["reasons"] = nullptr;
    }
    s["timestamp"] = utc_timestamp();
    return s;
  } catch (const std::exception& e) {
    return unavailable(std::string("clock snapshot failed: ") + e.what());
  }
}

bool clocks_sagged(const json& before, const json& after, std::string* why) {
  if (why) why->clear();
  auto available = [](const json& s) {
    return s.is_object() && field_or(s, "available", false) == true;
  };
  if (!available(before) || !available(after)) return false;
  std::vector<std::string> parts;
  const auto b = before.find("sm_clock_mhz");
  const auto a = after.find("sm_clock_mhz");
  if (b != before.end() && a != after.end() && b->is_number() && a->is_number()) {
    const double bv = b->get<double>(), av = a->get<double>();
    if (bv > 0 && av < 0.9 * bv) {
      std::ostringstream o;
      o << "SM clock fell from " << bv << " MHz to " << av << " MHz";
      parts.push_back(o.str());
    }
  }
  unsigned long long mask = 0;
  if (const auto m = after.find("reasons_mask"); m != after.end() && m->is_number_unsigned()) {
    mask = m->get<unsigned long long>();
  } else if (const auto r = after.find("reasons"); r != after.end() && r->is_array()) {
    for (const auto& name : *r)
      for (const auto& [bit, n] : reason_names())
        if (name.is_string() && name.get<std::string>() == n) mask |= bit;
  }
  if (mask & kSagReasons) {
    std::string names;
    for (const auto& [bit, n] : reason_names()) {
      if (!(mask & kSagReasons & bit)) continue;
      if (!names.empty()) names += ", ";
      names += n;
    }
    parts.push_back("clock limiter active after the run: " + names);
  }
  if (parts.empty()) return false;
  if (why) {
    for (std::size_t i = 0; i < parts.size(); ++i) *why += (i ? "; " : "") + parts[i];
  }
  return true;
}

bool record_clocks(json& env, const json& before, const json& after) {
  if (!env.is_object()) env = json::object();
  json& g = env["gpu"];
  if (!g.is_object()) g = json::object();
  std::string why;
  const bool sagged = clocks_sagged(before, after, &why);
  g["clocks_before"] = before;
  g["clocks_after"] = after;
  g["clocks_sagged"] = sagged;
  g["clocks_sagged_why"] = why;
  return sagged;
}

std::string machine_slug() {
  std::string name = "cpu-only";
  if (gpu_available()) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, 0) == cudaSuccess) name = p.name;
  }
  std::string slug;
  for (char ch : name) {
    if (std::isalnum(static_cast<unsigned char>(ch))) slug += static_cast<char>(std::tolower(ch));
    else if (!slug.empty() && slug.back() != '-') slug += '-';
  }
  while (!slug.empty() && slug.back() == '-') slug.pop_back();
  return slug;
}

}  // namespace repix::env
