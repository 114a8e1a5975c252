#include "harness/ncu.hpp"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "baselines/peers.hpp"
#include "harness/family.hpp"
#include "harness/json_text.hpp"
#include "harness/outputs.hpp"

namespace repix::ncu {

namespace {

bool executable(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Microseconds per unit of a duration column (ncu prints nsecond, usecond, msecond, second).
double to_us(const std::string& unit) {
  if (unit == "nsecond" || unit == "ns") return 1e-3;
  if (unit == "msecond" || unit == "ms") return 1e3;
  if (unit == "second" || unit == "s") return 1e6;
  return 1;  // usecond, us
}

bool starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }
bool ends_with(const std::string& s, const std::string& e) {
  return s.size() >= e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0;
}

// A stall reason from a warp-state metric name, or "" for another metric. The WarpStateStats
// section reports smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio (older
// versions smsp__average_warp_latency_issue_stalled_<reason>...); PC sampling
// smsp__pcsamp_warps_issue_stalled_<reason> (its _not_issued twins are left out).
std::string stall_reason(const std::string& metric) {
  for (const char* prefix : {"smsp__average_warps_issue_stalled_", "smsp__average_warp_latency_issue_stalled_"}) {
    const std::string suffix = "_per_issue_active.ratio";
    if (starts_with(metric, prefix) && ends_with(metric, suffix))
      return metric.substr(std::strlen(prefix), metric.size() - std::strlen(prefix) - suffix.size());
  }
  const std::string pc = "smsp__pcsamp_warps_issue_stalled_";
  if (starts_with(metric, pc) && !ends_with(metric, "_not_issued")) return metric.substr(pc.size());
  return "";
}

// Atomic and reduction operations counted once each: L1 requests (global atom/red) and executed
// instructions (shared atomics); their sectors and wavefronts would count the same operations again.
bool is_atomic_metric(const std::string& m) {
  const bool atomic = m.find("atom") != std::string::npos || m.find("_op_red") != std::string::npos;
  const bool counted_once = starts_with(m, "l1tex__t_requests_") || m.find("inst_executed") != std::string::npos;
  return atomic && counted_once && ends_with(m, ".sum");
}

std::optional<double> mean(const std::vector<double>& v) {
  if (v.empty()) return std::nullopt;
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

nlohmann::json opt_json(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

std::string cell(const nlohmann::json& v, const char* f) {
  if (!v.is_number()) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v.get<double>());
  return buf;
}

}  // namespace

int spawn(const std::vector<std::string>& argv, std::string* out) {
  int fds[2] = {-1, -1};
  if (out && ::pipe(fds) != 0) throw Error(std::string("cannot create a pipe: ") + std::strerror(errno));
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw Error(std::string("cannot fork: ") + std::strerror(errno));
  if (pid == 0) {
    if (out) {
      ::dup2(fds[1], 1);
      ::close(fds[0]);
      ::close(fds[1]);
    }
    std::vector<char*> args;
    for (const std::string& s : argv) args.push_back(const_cast<char*>(s.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    std::fprintf(stderr, "repix: error: cannot run %s: %s\n", argv[0].c_str(), std::strerror(errno));
    ::_exit(127);
  }
  if (out) {
    ::close(fds[1]);
    char buf[65536];
    ssize_t n;
    while ((n = ::read(fds[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
      if (n > 0) out->append(buf, static_cast<std::size_t>(n));
    ::close(fds[0]);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

std::string self_exe() {
  std::error_code ec;
  const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error("cannot find this program's path (/proc/self/exe): " + ec.message());
  return p.string();
}


std::string find_cuda_tool(const std::string& name, const std::string& advice, const std::string& path_env,
                           const std::string& cuda_home, const std::string& fallback) {
  std::vector<std::string> tried;
  for (const std::string& dir : cli::split(path_env, ':')) {
    if (executable(dir + "/" + name)) return dir + "/" + name;
  }
  tried.push_back("PATH");
  if (!cuda_home.empty()) {
    if (executable(cuda_home + "/bin/" + name)) return cuda_home + "/bin/" + name;
    tried.push_back(cuda_home + "/bin ($CUDA_HOME)");
  }
  if (fallback != cuda_home) {
    if (executable(fallback + "/bin/" + name)) return fallback + "/bin/" + name;
    tried.push_back(fallback + "/bin");
  }
  std::string where;
  for (const auto& t : tried) where += (where.empty() ? "" : ", ") + t;
  throw Error(name + " not found (looked on " + where + "): " + advice);
}

std::string find_ncu(const std::string& path_env, const std::string& cuda_home, const std::string& fallback) {
  return find_cuda_tool("ncu",
                        "install Nsight Compute or put its ncu on PATH; without it, profile with "
                        "`repix profile` under another tool (docs/profiling.md)",
                        path_env, cuda_home, fallback);
}

std::string find_ncu() {
  const char* path = std::getenv("PATH");
  const char* home = std::getenv("CUDA_HOME");
  return find_ncu(path ? path : "", home ? home : "");
}

std::string include_filter(const std::string& family, const std::string& variant) {
  return "repix@" + family + "/" + variant + "/";
}

std::vector<std::string> default_sections() {
  // InstructionStats and ComputeWorkloadAnalysis: the executed warp instructions and IPC that an
  // issue-rate (compute) bound is derived from (issue 15: uint8/uint16 ECC).
  return {"SpeedOfLight", "LaunchStats", "Occupancy", "WarpStateStats", "MemoryWorkloadAnalysis_Tables",
          "InstructionStats", "ComputeWorkloadAnalysis"};
}

bool is_peer(const std::string& variant) { return variant.rfind("peer:", 0) == 0; }

std::string report_stem(const Target& t) {
  std::string v = t.variant;
  std::replace(v.begin(), v.end(), ':', '_');
  return t.family + "-" + v;
}

std::vector<std::string> bench_extra(std::vector<std::string> extra) {
  auto given = [&](const std::string& name) {
    return std::any_of(extra.begin(), extra.end(), [&](const std::string& s) {
      return s == "--" + name || starts_with(s, "--" + name + "=");
    });
  };
  if (given("iterations"))
    throw cli::UsageError("a peer is profiled through `repix bench`: give --samples N, not --iterations");
  if (!given("scopes")) extra.push_back("--scopes=kernel");
  if (!given("samples")) extra.push_back("--samples=1");
  if (!given("warmup")) extra.push_back("--warmup=0");
  return extra;
}

std::vector<std::string> profile_command(const std::string& ncu, const std::string& repix, const Target& t,
                                         const std::vector<std::string>& sections, const std::string& report_base) {
  // --clock-control none: the GPU hosts we measured on refuse to let ncu lock clocks (and the design forbids
  // changing them); the kernels run at the clocks the bench measures them at.
  std::vector<std::string> c = {ncu, "--clock-control", "none"};
  if (!is_peer(t.variant) && !t.all_launches)
    c.insert(c.end(), {"--nvtx", "--nvtx-include", include_filter(t.family, t.variant), "--nvtx-exclude", kWarmupExclude});
  if (!t.kernels.empty()) c.insert(c.end(), {"-k", "regex:" + t.kernels});
  for (const std::string& s : sections) {
    c.push_back("--section");
    c.push_back(s);
  }
  for (const char* s : {"-f", "-o"}) c.push_back(s);
  c.push_back(report_base);
  if (is_peer(t.variant))
    c.insert(c.end(), {repix, "bench", "--family", t.family, "--variants", t.variant, "--dataset", t.dataset, "--out",
                       report_base + ".bench.json"});
  else
    c.insert(c.end(), {repix, "profile", t.family, "--variant", t.variant, "--dataset", t.dataset});
  for (const std::string& s : t.extra) c.push_back(s);
  return c;
}

std::vector<std::string> import_command(const std::string& ncu, const std::string& report) {
  // --print-units base: durations in one unit whatever their size (the units row says which).
  return {ncu, "--import", report, "--csv", "--page", "raw", "--print-units", "base"};
}

std::string shell_line(const std::vector<std::string>& argv) {
  std::string s;
  for (const std::string& a : argv) {
    const bool plain = !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                          "0123456789-_./=:,@+") == std::string::npos;
    std::string q = a;
    if (!plain) {
      q = "'";
      for (char ch : a) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
      q += "'";
    }
    s += (s.empty() ? "" : " ") + q;
  }
  return s;
}

Csv parse_csv(const std::string& text) {
  Csv csv;
  std::vector<std::vector<std::string>> lines;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false, line_start = true, ncu_line = false;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    const bool end = i == text.size();
    const char c = end ? '\n' : text[i];
    if (line_start) {  // ncu's own messages are not CSV
      ncu_line = text.compare(i, 2, "==") == 0;
      line_start = false;
    }
    if (ncu_line) {
      if (c == '\n') line_start = true;
      continue;
    }
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else if (!end) {
        field += c;
      }
      if (!end) continue;
    }
    if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      row.push_back(field);
      field.clear();
    } else if (c == '\n') {
      if (!field.empty() && field.back() == '\r') field.pop_back();
      row.push_back(field);
      field.clear();
      if (!(row.size() == 1 && row[0].empty())) lines.push_back(row);
      row.clear();
      line_start = true;
    } else {
      field += c;
    }
  }
  if (lines.empty()) throw Error("ncu printed no CSV (expected a header row of metric names)");
  csv.names = lines[0];
  if (lines.size() > 1) csv.units = lines[1];
  for (std::size_t i = 2; i < lines.size(); ++i) {
    if (lines[i].size() != csv.names.size())
      throw Error("ncu CSV row " + std::to_string(i + 1) + " has " + std::to_string(lines[i].size()) +
                  " fields, the header " + std::to_string(csv.names.size()));
    csv.rows.push_back(lines[i]);
  }
  csv.units.resize(csv.names.size());
  return csv;
}

std::optional<double> number(const std::string& field) {
  std::string s;
  for (char c : field)
    if (c != ',' && c != ' ') s += c;
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return v;
}

std::vector<Kernel> summarise(const Csv& csv) {
  auto column = [&](std::initializer_list<const char*> names) -> int {
    for (const char* n : names)
      for (std::size_t i = 0; i < csv.names.size(); ++i)
        if (csv.names[i] == n) return static_cast<int>(i);
    return -1;
  };
  const int name_col = column({"Kernel Name", "Function Name", "Demangled Name", "Name"});
  if (name_col < 0) throw Error("ncu CSV has no kernel name column (Kernel Name)");
  const int duration = column({"gpu__time_duration.sum"});
  const int occupancy = column({"sm__warps_active.avg.pct_of_peak_sustained_active"});
  const int registers = column({"launch__registers_per_thread"});
  const int dram = column({"dram__throughput.avg.pct_of_peak_sustained_elapsed",
                           "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"});
  const int l2 = column({"lts__throughput.avg.pct_of_peak_sustained_elapsed",
                         "lts__t_sectors.avg.pct_of_peak_sustained_elapsed"});
  const int instructions = column({"smsp__inst_executed.sum", "sm__inst_executed.sum"});  // warp instructions
  const int ipc = column({"sm__inst_executed.avg.per_cycle_active"});  // per SM; 4 issue slots a cycle
  std::vector<int> conflicts;  // loads and stores, or the total where only it is reported
  for (const char* m : {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"})
    if (column({m}) >= 0) conflicts.push_back(column({m}));
  if (conflicts.empty() && column({"l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"}) >= 0)
    conflicts.push_back(column({"l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"}));
  std::vector<std::pair<int, std::string>> stalls, atomics;
  for (std::size_t i = 0; i < csv.names.size(); ++i) {
    const std::string r = stall_reason(csv.names[i]);
    if (!r.empty()) stalls.emplace_back(static_cast<int>(i), r);
    if (is_atomic_metric(csv.names[i])) atomics.emplace_back(static_cast<int>(i), csv.names[i]);
  }

  struct Acc {
    std::vector<double> us, occ, regs, dram, l2, conflicts, instructions, ipc;
    std::map<std::string, std::vector<double>> stalls, atomics;
  };
  std::vector<std::string> order;
  std::map<std::string, Acc> acc;
  auto add = [](std::vector<double>& to, const std::vector<std::string>& row, int col) {
    if (col < 0) return;
    if (const auto v = number(row[static_cast<std::size_t>(col)])) to.push_back(*v);
  };
  for (const auto& row : csv.rows) {
    const std::string& name = row[static_cast<std::size_t>(name_col)];
    if (!acc.count(name)) order.push_back(name);
    Acc& a = acc[name];
    if (duration >= 0)
      if (const auto v = number(row[static_cast<std::size_t>(duration)]))
        a.us.push_back(*v * to_us(csv.units[static_cast<std::size_t>(duration)]));
    add(a.occ, row, occupancy);
    add(a.regs, row, registers);
    add(a.dram, row, dram);
    add(a.l2, row, l2);
    add(a.instructions, row, instructions);
    add(a.ipc, row, ipc);
    if (!conflicts.empty()) {
      double sum = 0;
      bool any = false;
      for (int c : conflicts)
        if (const auto v = number(row[static_cast<std::size_t>(c)])) sum += *v, any = true;
      if (any) a.conflicts.push_back(sum);
    }
    for (const auto& [c, reason] : stalls) add(a.stalls[reason], row, c);
    for (const auto& [c, metric] : atomics) add(a.atomics[metric], row, c);
  }

  std::vector<Kernel> out;
  for (const std::string& name : order) {
    const Acc& a = acc[name];
    Kernel k;
    k.name = name;
    k.launches = static_cast<int>(std::count_if(csv.rows.begin(), csv.rows.end(), [&](const auto& row) {
      return row[static_cast<std::size_t>(name_col)] == name;
    }));
    for (double us : a.us) k.total_us += us;
    k.median_us = median(a.us);
    k.occupancy_pct = mean(a.occ);
    k.registers = mean(a.regs);
    k.dram_pct = mean(a.dram);
    k.l2_pct = mean(a.l2);
    k.bank_conflicts = mean(a.conflicts);
    k.warp_instructions = mean(a.instructions);
    k.executed_ipc = mean(a.ipc);
    for (const auto& [reason, v] : a.stalls)
      if (const auto m = mean(v); m && *m > 0) k.top_stalls.emplace_back(reason, *m);
    std::sort(k.top_stalls.begin(), k.top_stalls.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
    if (k.top_stalls.size() > 3) k.top_stalls.resize(3);
    for (const auto& [metric, v] : a.atomics)
      if (const auto m = mean(v)) k.atomics[metric] = *m;
    out.push_back(std::move(k));
  }
  return out;
}

nlohmann::json to_json(const std::vector<Kernel>& kernels) {
  nlohmann::json a = nlohmann::json::array();
  for (const Kernel& k : kernels) {
    nlohmann::json stalls = nlohmann::json::array();
    for (const auto& [reason, v] : k.top_stalls) stalls.push_back({{"reason", reason}, {"warps_per_issue", v}});
    a.push_back({{"name", k.name},
                 {"launches", k.launches},
                 {"duration_us_total", k.total_us},
                 {"duration_us_median", k.median_us},
                 {"achieved_occupancy_pct", opt_json(k.occupancy_pct)},
                 {"registers_per_thread", opt_json(k.registers)},
                 {"dram_throughput_pct_of_peak", opt_json(k.dram_pct)},
                 {"l2_throughput_pct_of_peak", opt_json(k.l2_pct)},
                 {"top_stalls", stalls},
                 {"shared_bank_conflicts", opt_json(k.bank_conflicts)},
                 {"atomics", k.atomics.empty() ? nlohmann::json() : nlohmann::json(k.atomics)},
                 {"warp_instructions", opt_json(k.warp_instructions)},
                 {"executed_ipc", opt_json(k.executed_ipc)}});
  }
  return a;
}

std::string to_markdown(const nlohmann::json& kernels) {
  std::ostringstream md;
  md << "| kernel | launches | median µs | total µs | occupancy % | regs/thread | DRAM % peak | L2 % peak "
        "| top stalls (warps per issue) | smem bank conflicts | atomics | warp instructions | IPC (of 4) |\n"
     << "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |\n";
  for (const auto& k : kernels) {
    std::string stalls;
    for (const auto& s : k["top_stalls"])
      stalls += (stalls.empty() ? "" : ", ") + s["reason"].get<std::string>() + " " + cell(s["warps_per_issue"], "%.2f");
    double atomics = 0;
    if (k["atomics"].is_object())
      for (const auto& [m, v] : k["atomics"].items()) atomics += v.get<double>();
    md << "| `" << k["name"].get<std::string>() << "` | " << k["launches"].get<int>() << " | "
       << cell(k["duration_us_median"], "%.2f") << " | " << cell(k["duration_us_total"], "%.2f") << " | "
       << cell(k["achieved_occupancy_pct"], "%.1f") << " | " << cell(k["registers_per_thread"], "%.0f") << " | "
       << cell(k["dram_throughput_pct_of_peak"], "%.1f") << " | " << cell(k["l2_throughput_pct_of_peak"], "%.1f")
       << " | " << (stalls.empty() ? "-" : stalls) << " | " << cell(k["shared_bank_conflicts"], "%.0f") << " | "
       << (k["atomics"].is_object() ? cell(atomics, "%.0f") : "-") << " | " << cell(k.value("warp_instructions", nlohmann::json()), "%.0f")
       << " | " << cell(k.value("executed_ipc", nlohmann::json()), "%.2f") << " |\n";
  }
  return md.str();
}

nlohmann::json profile(const Target& t, const std::vector<std::string>& sections, const std::string& out_dir) {
  const std::string ncu = find_ncu();
  cli::make_output_folder(out_dir, "out");
  const std::string base = out_dir + "/" + report_stem(t);
  const std::string report = base + ".ncu-rep";
  std::error_code ec;
  std::filesystem::remove(report, ec);  // a stale report must not pass for this run's

  const std::vector<std::string> run = profile_command(ncu, self_exe(), t, sections, base);
  std::fprintf(stderr, "repix profile: running %s\n", shell_line(run).c_str());
  const int rc = spawn(run, nullptr);
  if (rc != 0) throw Error("ncu exited with status " + std::to_string(rc) + " (its messages are above)");
  const std::string filter = is_peer(t.variant) ? (t.kernels.empty() ? std::string("(none)") : "-k regex:" + t.kernels)
                                                 : "the NVTX filter " + include_filter(t.family, t.variant);
  if (!std::filesystem::exists(report))
    throw Error("ncu wrote no report " + report + ": " + filter + " matched no kernel launch");

  const std::vector<std::string> import = import_command(ncu, report);
  std::fprintf(stderr, "repix profile: running %s\n", shell_line(import).c_str());
  std::string text;
  const int irc = spawn(import, &text);
  if (irc != 0) throw Error("ncu --import exited with status " + std::to_string(irc));
  const std::vector<Kernel> kernels = summarise(parse_csv(text));
  if (kernels.empty()) throw Error("the report " + report + " holds no kernel");

  nlohmann::json j = {{"family", t.family}, {"variant", t.variant}, {"dataset", t.dataset}, {"report", report}};
  if (is_peer(t.variant)) {
    j["target"] = "bench";
    j["bench_report"] = base + ".bench.json";
  } else {
    j["target"] = "profile";
    j["nvtx_include"] = include_filter(t.family, t.variant);
    j["nvtx_exclude"] = kWarmupExclude;
  }
  j["kernel_filter"] = t.kernels.empty() ? nlohmann::json() : nlohmann::json(t.kernels);
  j["command"] = shell_line(run);
  j["import"] = shell_line(import);
  j["kernels"] = to_json(kernels);
  write_file_atomic(base + ".raw.csv", text);
  std::ostringstream md;
  md << "# " << t.family << " / " << t.variant << " on " << t.dataset << " (Nsight Compute)\n\n";
  if (is_peer(t.variant))
    md << "Kernels of one `repix bench` run of the peer" << (t.kernels.empty() ? "" : " named like `" + t.kernels + "`")
       << " (a peer opens no NVTX range), report `" << report << "`.\n\n";
  else if (t.all_launches)
    md << "Every kernel the process launched (no NVTX filter: set-up, warm-up and timed runs)"
       << (t.kernels.empty() ? "" : ", named like `" + t.kernels + "`") << ", report `" << report << "`.\n\n";
  else
    md << "Kernels of the variant's timed ranges (`--nvtx-include \"" << include_filter(t.family, t.variant)
       << "\" --nvtx-exclude \"" << kWarmupExclude << "\"`"
       << (t.kernels.empty() ? "" : ", named like `" + t.kernels + "`") << "), report `" << report << "`.\n\n";
  md << to_markdown(j["kernels"]) << "\nCommand: `" << shell_line(run) << "`\n";
  write_file_atomic(base + ".summary.md", md.str());
  write_file_atomic(base + ".summary.json", json_text::dump(j, 1) + "\n");
  std::fprintf(stderr, "repix profile: %zu kernel(s); summary in %s.summary.{json,md}\n", kernels.size(), base.c_str());
  return j;
}

int command(const cli::Args& a) {
  if (a.positional.size() != 1) throw cli::UsageError("profile takes the family name");
  const family::Family& f = family::find(a.positional[0]);
  Target t{f.name(), a.need("variant"), a.need("dataset"), {}, a.get("kernels"), a.has("all-launches")};
  if (a.has("all-launches") && a.get("all-launches") != "1") throw cli::UsageError("--all-launches takes no value");
  if (a.has("kernels") && t.kernels.empty()) throw cli::UsageError("--kernels needs a regular expression");
  const bool peer = is_peer(t.variant);
  if (peer) {  // a peer this machine has, profiled through a bench run
    const std::vector<peers::Peer> here = peers::available(f.name());
    if (std::none_of(here.begin(), here.end(), [&](const peers::Peer& p) { return "peer:" + p.id == t.variant; }))
      throw Error(t.variant + " is not available on this machine (`repix list variants` lists the peers it has)");
  } else {
    bool gpu = false, known = false;
    for (const auto& v : f.variants())
      if (v.id == t.variant) known = true, gpu = v.gpu;
    if (!known) throw cli::UsageError("unknown " + f.name() + " variant '" + t.variant + "'");
    if (!gpu) throw Error(f.name() + "/" + t.variant + " runs on the CPU: Nsight Compute has no kernel of it to profile");
  }
  // Every other option goes to the profiled `repix profile` or `repix bench` (the family's checks
  // it there; --scope is bench's --scopes); one iteration (a peer: one sample) by default, so the
  // report's kernels are one timed compute's.
  bool iterations = false;
  for (const auto& [k, v] : a.options) {
    if (k == "ncu" || k == "sections" || k == "out" || k == "variant" || k == "dataset" || k == "kernels" ||
        k == "all-launches")
      continue;
    iterations = iterations || k == "iterations";
    t.extra.push_back("--" + std::string(peer && k == "scope" ? "scopes" : k) + "=" + v);
  }
  if (peer) t.extra = bench_extra(t.extra);
  else if (!iterations) t.extra.push_back("--iterations=1");
  const std::vector<std::string> sections = a.has("sections") ? cli::split(a.get("sections"), ',') : default_sections();
  if (sections.empty()) throw cli::UsageError("--sections names no section");
  const nlohmann::json j = profile(t, sections, a.get("out", "."));
  std::cout << to_markdown(j["kernels"]);
  return 0;
}

nlohmann::json step_counters(const nlohmann::json& summary) {
  double total = 0, occ = 0, dram = 0, l2 = 0, occ_w = 0, dram_w = 0, l2_w = 0, conflicts = 0, atomics = 0;
  double instructions = 0, ipc = 0, ipc_w = 0;
  bool any_conflicts = false, any_atomics = false, any_instructions = false;
  std::map<std::string, double> stalls;  // reason -> duration-weighted warps per issue
  const nlohmann::json& ks = summary.at("kernels");
  for (const auto& k : ks) {
    const double us = k.value("duration_us_total", 0.0);
    total += us;
    auto weigh = [&](const char* key, double& sum, double& w) {
      if (k.contains(key) && k[key].is_number()) sum += k[key].get<double>() * us, w += us;
    };
    weigh("achieved_occupancy_pct", occ, occ_w);
    weigh("dram_throughput_pct_of_peak", dram, dram_w);
    weigh("l2_throughput_pct_of_peak", l2, l2_w);
    weigh("executed_ipc", ipc, ipc_w);
    const double launches = k.value("launches", 1);
    if (k.contains("warp_instructions") && k["warp_instructions"].is_number())
      instructions += k["warp_instructions"].get<double>() * launches, any_instructions = true;
    if (k.contains("shared_bank_conflicts") && k["shared_bank_conflicts"].is_number())
      conflicts += k["shared_bank_conflicts"].get<double>() * launches, any_conflicts = true;
    if (k.contains("atomics") && k["atomics"].is_object())
      for (const auto& [m, v] : k["atomics"].items()) atomics += v.get<double>() * launches, any_atomics = true;
    for (const auto& s : k.value("top_stalls", nlohmann::json::array()))
      stalls[s["reason"].get<std::string>()] += s["warps_per_issue"].get<double>() * us;
  }
  std::string top;
  double best = 0;
  for (const auto& [r, v] : stalls)
    if (v > best) best = v, top = r;
  auto avg = [](double s, double w) { return w > 0 ? nlohmann::json(s / w) : nlohmann::json(); };
  return {{"kernels", ks.size()},
          {"duration_us_total", total},
          {"achieved_occupancy_pct", avg(occ, occ_w)},
          {"dram_throughput_pct_of_peak", avg(dram, dram_w)},
          {"l2_throughput_pct_of_peak", avg(l2, l2_w)},
          {"top_stall", top.empty() ? nlohmann::json() : nlohmann::json(top)},
          {"shared_bank_conflicts", any_conflicts ? nlohmann::json(conflicts) : nlohmann::json()},
          {"atomics", any_atomics ? nlohmann::json(atomics) : nlohmann::json()},
          {"warp_instructions", any_instructions ? nlohmann::json(instructions) : nlohmann::json()},
          {"executed_ipc", avg(ipc, ipc_w)}};
}

std::string counters_header() {
  return " kernels | ncu µs | occupancy % | DRAM % | L2 % | top stall | smem conflicts | atomics | warp instr | IPC |";
}
std::string counters_separator() { return " ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |"; }

std::string counters_cells(const nlohmann::json& s) {
  if (!s.is_object() || !s.contains("kernels"))
    return " - | - | - | - | - | " + std::string(s.is_object() && s.contains("error") ? "not profiled" : "-") +
           " | - | - | - | - |";
  return " " + s["kernels"].dump() + " | " + cell(s["duration_us_total"], "%.1f") + " | " +
         cell(s["achieved_occupancy_pct"], "%.1f") + " | " + cell(s["dram_throughput_pct_of_peak"], "%.1f") + " | " +
         cell(s["l2_throughput_pct_of_peak"], "%.1f") + " | " +
         (s["top_stall"].is_string() ? s["top_stall"].get<std::string>() : "-") + " | " +
         cell(s["shared_bank_conflicts"], "%.0f") + " | " + cell(s["atomics"], "%.0f") + " | " +
         cell(s.value("warp_instructions", nlohmann::json()), "%.0f") + " | " +
         cell(s.value("executed_ipc", nlohmann::json()), "%.2f") + " |";
}

nlohmann::json ladder_step(const Target& t, const std::string& out_dir) {
  // The dataset spec names the folder, every character but letters, digits, '.' and '-' written '_'
  // (grf:1024x1024:alpha=3 -> grf_1024x1024_alpha_3): names every file system and archive takes.
  std::string ds = t.dataset;
  for (char& ch : ds)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '.' && ch != '-') ch = '_';
  const std::string dir = out_dir + "/ncu/" + ds;
  Target one = t;
  if (std::none_of(one.extra.begin(), one.extra.end(), [](const std::string& s) { return starts_with(s, "--iterations"); }))
    one.extra.push_back("--iterations=1");
  try {
    nlohmann::json s = step_counters(profile(one, default_sections(), dir));
    s["summary"] = dir + "/" + t.family + "-" + t.variant + ".summary.json";
    return s;
  } catch (const Error& e) {
    std::fprintf(stderr, "repix table: ncu on %s/%s (%s) failed: %s\n", t.family.c_str(), t.variant.c_str(),
                 t.dataset.c_str(), e.what());
    return {{"error", e.what()}};
  }
}

StepCounters ladder_counters(const cli::Args& a, const std::string& out_dir) {
  if (!a.has("ncu")) return {};
  find_ncu();  // absent: one clear error before anything runs
  const std::string dir = out_dir.empty() ? "." : out_dir;
  return [dir](const std::string& family, const std::string& variant, const std::string& dataset) {
    return ladder_step(Target{family, variant, dataset, {}, ""}, dir);
  };
}

}  // namespace repix::ncu
