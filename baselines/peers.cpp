// Peers: Python ones through `python3 baselines/peers.py` (see its docstring for the protocol),
// native ones in process (native_peers(), baselines/register.cpp).
#include "baselines/peers.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "core/error.hpp"
#include "core/gpu.hpp"
#include "datasets/io.hpp"
#include "harness/json_fields.hpp"

namespace repix::peers {

namespace fs = std::filesystem;

namespace {

std::string python() {
  const char* p = std::getenv("REPIX_PYTHON");
  return p && *p ? p : "python3";
}

std::string script() {
  const char* d = std::getenv("REPIX_BASELINES_DIR");
  return (d && *d ? std::string(d) : std::string(REPIX_SOURCE_DIR) + "/baselines") + "/peers.py";
}

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A scratch folder for one peer call, removed with everything in it when done.
struct ScratchDir {
  fs::path path;
  ScratchDir() {
    static std::atomic<int> counter{0};
    path = fs::temp_directory_path() /
           ("repix-peer-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// Runs `cmd` with stdout and stderr to files in `dir`; returns (exit status, stdout, stderr).
struct Proc {
  int status;
  std::string out, err;
};
Proc run_command(const std::string& cmd, const fs::path& dir) {
  const fs::path out = dir / "stdout", err = dir / "stderr";
  const int rc = std::system((cmd + " >" + quote(out.string()) + " 2>" + quote(err.string())).c_str());
  return {rc, slurp(out), slurp(err)};
}

std::string last_line(const std::string& s) {
  std::string t = s;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
  const auto nl = t.rfind('\n');
  return nl == std::string::npos ? t : t.substr(nl + 1);
}

std::vector<Peer> python_peers() {
  ScratchDir dir;
  const Proc p = run_command(python() + " " + quote(script()) + " list", dir.path);
  if (p.status != 0) {
    std::fprintf(stderr, "repix: note: Python peers unavailable (%s)\n",
                 last_line(p.err.empty() ? "python3 failed" : p.err).c_str());
    return {};
  }
  std::vector<Peer> out;
  try {
    for (const auto& j : nlohmann::json::parse(last_line(p.out)))
      out.push_back({j.at("family"), j.at("id"), j.at("description"), j.at("gpu"), j.at("exact")});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "repix: note: Python peers unavailable (bad list output: %s)\n", e.what());
  }
  return out;
}

PeerRun run_python(const Peer& peer, const std::vector<const HostImage*>& inputs,
                   const nlohmann::json& params, const protocol::Rule& rule, int warmup) {
  ScratchDir dir;
  std::string cmd = python() + " " + quote(script()) + " run --peer " + quote(peer.id) + " --inputs";
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const fs::path p = dir.path / ("input" + std::to_string(i) + ".npy");
    datasets::write_npy(*inputs[i], p.string());
    cmd += " " + quote(p.string());
  }
  const fs::path output = dir.path / "output.npy";
  char rule_args[256];
  std::snprintf(rule_args, sizeof rule_args,
                " --min-samples %d --max-samples %d --min-time %.17g --max-noise %.17g --max-time %.17g --warmup %d",
                rule.min_samples, rule.max_samples, rule.min_time_s, rule.max_noise_pct, rule.max_time_s, warmup);
  cmd += " --params " + quote(params.dump()) + rule_args + " --output " + quote(output.string());
  const Proc p = run_command(cmd, dir.path);
  if (p.status != 0)
    throw Error("peer " + peer.id + ": " + last_line(p.err.empty() ? "exit status " + std::to_string(p.status) : p.err));
  PeerRun r;
  try {
    const auto j = nlohmann::json::parse(last_line(p.out));
    r.samples_ms = j.at("samples_ms").get<std::vector<double>>();
    const std::string stop = json_fields::field_or(j, "stopped_by", "");
    for (protocol::Stop s : {protocol::Stop::kNoise, protocol::Stop::kMaxTime, protocol::Stop::kMaxSamples})
      if (stop == protocol::stop_name(s)) r.stopped_by = s;
    r.sampling_s = json_fields::field_or(j, "sampling_s", 0.0);
    r.scope = j.at("scope");
    r.version = json_fields::field_or(j, "version", "");
  } catch (const std::exception& e) {
    throw Error("peer " + peer.id + ": unreadable result line: " + e.what());
  }
  r.output = datasets::read_npy(output.string());
  return r;
}

}  // namespace

std::vector<Peer> available(const std::string& family) {
  static std::once_flag once;
  static std::vector<Peer> all;
  std::call_once(once, [] {
    all = python_peers();
    for (const NativePeer& n : native_peers())
      if (!n.peer.gpu || gpu_available()) all.push_back(n.peer);
  });
  std::vector<Peer> out;
  for (const auto& p : all)
    if (p.family == family) out.push_back(p);
  return out;
}

PeerRun run(const Peer& peer, const std::vector<const HostImage*>& inputs, const nlohmann::json& params,
            const protocol::Rule& rule) {
  if (inputs.empty()) throw Error("peer " + peer.id + ": no input");
  for (const NativePeer& n : native_peers())
    if (n.peer.id == peer.id) return n.run(inputs, params, rule);
  return run_python(peer, inputs, params, rule, peer.gpu ? rule.warmup : 0);
}

PeerRun sample_native(const protocol::Rule& rule, const std::function<double()>& call) {
  for (int k = 0; k < rule.warmup; ++k) call();
  const protocol::Outcome o = protocol::sample_until(rule, call);
  PeerRun r;
  r.samples_ms = o.samples_ms;
  r.stopped_by = o.stopped_by;
  r.sampling_s = o.sampling_s;
  return r;
}

}  // namespace repix::peers
