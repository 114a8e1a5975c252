#include "harness/experiments.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <cstring>

#include "baselines/peers.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/find_by_name.hpp"
#include "core/gpu.hpp"
#include "datasets/spec.hpp"
#include "harness/env.hpp"
#include "harness/family.hpp"
#include "harness/json_text.hpp"
#include "harness/ncu.hpp"
#include "harness/sass.hpp"
#include "harness/figures.hpp"
#include "harness/options.hpp"
#include "harness/outputs.hpp"
#include "harness/protocol.hpp"
#include "harness/registry.hpp"
#include "harness/report.hpp"
#include "harness/suites.hpp"
#include "harness/tables.hpp"

extern char** environ;

namespace repix::experiments {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

void merge_needs(Needs& into, const Needs& n) {
  into.gpus = std::max(into.gpus, n.gpus);
  into.ncu = into.ncu || n.ncu;
  for (const auto& p : n.peers)
    if (std::find(into.peers.begin(), into.peers.end(), p) == into.peers.end()) into.peers.push_back(p);
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

const char* kind_name(Kind k) {
  return k == Kind::bench ? "bench" : k == Kind::table ? "table" : k == Kind::profile ? "profile" : "sass";
}

// The experiment a paper table is when nothing else declares it: that table alone.
Experiment table_experiment(const tables::TableInfo& t) {
  Experiment e{t.id, t.group, t.description, {table(t.id)}};
  return e;
}

}  // namespace

Needs Experiment::needs() const {
  Needs n;
  for (const Step& s : steps) merge_needs(n, s.needs);
  return n;
}

Step bench(std::string label, std::string family) {
  Step s;
  s.kind = Kind::bench;
  s.label = std::move(label);
  s.family = std::move(family);
  return s;
}

Step table(std::string id, std::vector<std::pair<std::string, std::string>> options) {
  Step s;
  s.kind = Kind::table;
  s.label = id;
  s.table = std::move(id);
  s.options = std::move(options);
  return s;
}

Step profile(std::string label, std::string family, std::string variant, std::string dataset,
             std::vector<std::pair<std::string, std::string>> options) {
  Step s;
  s.kind = Kind::profile;
  s.label = std::move(label);
  s.family = std::move(family);
  s.variants = {std::move(variant)};
  s.datasets = {std::move(dataset)};
  s.options = std::move(options);
  s.needs.gpus = 1;
  s.needs.ncu = true;
  if (ncu::is_peer(s.variants[0])) s.needs.peers = {s.variants[0]};  // profiled through a bench run
  return s;
}

Step sass_bracket(std::string label, std::string family, std::string kernels_regex, std::string items_per_iteration) {
  Step s;
  s.kind = Kind::sass;
  s.label = std::move(label);
  s.family = std::move(family);
  s.options = {{"sass", std::move(kernels_regex)}, {"items-per-iteration", std::move(items_per_iteration)}};
  return s;
}

const std::vector<Experiment>& all() {
  static const std::vector<Experiment> all_experiments = [] {
    std::vector<Experiment> v;
    for (const tables::TableInfo& t : tables::all()) v.push_back(table_experiment(t));
    // One line per paper (harness/papers/<paper>/experiments.cpp) and the suites'; an experiment
    // named as a table replaces that table's own (a table built from bench reports runs them first).
    for (auto declare : {ecc_paper_experiments, iwpp_paper_experiments, ami_paper_experiments,
                         maxtree_paper_experiments, suite_experiments})
      for (Experiment& e : declare()) {
        auto same = std::find_if(v.begin(), v.end(), [&](const Experiment& x) { return x.name == e.name; });
        if (same != v.end()) *same = std::move(e);
        else v.push_back(std::move(e));
      }
    return v;
  }();
  return all_experiments;
}

const Experiment& find(const std::string& name) {
  return find_by_name(all(), name, "experiment", [](const Experiment& e) { return e.name; });
}

std::string needs_text(const Needs& n) {
  std::vector<std::string> parts;
  if (n.gpus == 1) parts.push_back("GPU");
  if (n.gpus > 1) parts.push_back(std::to_string(n.gpus) + " GPUs");
  if (n.ncu) parts.push_back("ncu");
  for (const auto& p : n.peers) parts.push_back(p);
  return parts.empty() ? "CPU" : join(parts, ", ");
}

std::vector<std::string> step_command(const Step& s, const std::string& staging) {
  const std::string dir = staging.empty() ? "<staging>" : staging;
  std::vector<std::string> c;
  auto add_options = [&] {
    for (const auto& [k, v] : s.options) {
      c.push_back("--" + k);
      if (!v.empty()) c.push_back(v);
    }
  };
  if (s.kind == Kind::bench) {
    c.push_back("bench");
    if (!s.family.empty()) c.insert(c.end(), {"--family", s.family});
    if (!s.suite.empty()) c.insert(c.end(), {"--suite", s.suite});
    for (const auto& d : s.datasets) c.insert(c.end(), {"--dataset", d});
    if (!s.variants.empty()) c.insert(c.end(), {"--variants", join(s.variants, ",")});
    if (!s.exclude.empty()) c.insert(c.end(), {"--exclude", join(s.exclude, ",")});
    if (!s.scopes.empty()) c.insert(c.end(), {"--scopes", join(s.scopes, ",")});
    add_options();
    c.insert(c.end(), {"--out", dir + "/" + s.label + ".json"});
  } else if (s.kind == Kind::table) {
    c.insert(c.end(), {"table", s.table});
    add_options();
    if (!s.reports.empty()) {
      std::vector<std::string> paths;
      for (const auto& r : s.reports) paths.push_back(dir + "/" + r + ".json");
      c.insert(c.end(), {"--report", join(paths, ",")});
    }
    c.insert(c.end(), {"--out-dir", dir + "/" + s.label, "--no-figures"});
  } else if (s.kind == Kind::profile) {
    c.insert(c.end(), {"profile", s.family, "--variant", s.variants.at(0), "--dataset", s.datasets.at(0), "--ncu"});
    add_options();
    c.insert(c.end(), {"--out", dir + "/" + s.label});
  } else {
    c.insert(c.end(), {"profile", s.family});
    add_options();
    c.insert(c.end(), {"--out", dir + "/" + s.label});
  }
  return c;
}

json to_json(const Step& s) {
  json j = {{"kind", kind_name(s.kind)}, {"label", s.label}};
  if (!s.family.empty()) j["family"] = s.family;
  if (!s.suite.empty()) j["suite"] = s.suite;
  if (!s.datasets.empty()) j["datasets"] = s.datasets;
  if (!s.variants.empty()) j["variants"] = s.variants;
  if (!s.exclude.empty()) j["exclude"] = s.exclude;
  if (!s.scopes.empty()) j["scopes"] = s.scopes;
  if (!s.table.empty()) j["table"] = s.table;
  if (!s.reports.empty()) j["reports"] = s.reports;
  json o = json::array();
  for (const auto& [k, v] : s.options) o.push_back({k, v});
  j["options"] = o;
  j["needs"] = {{"gpus", s.needs.gpus}, {"peers", s.needs.peers}, {"ncu", s.needs.ncu}};
  return j;
}

json to_json(const Experiment& e) {
  json steps = json::array();
  for (const Step& s : e.steps) steps.push_back(to_json(s));
  return {{"name", e.name}, {"group", e.group}, {"description", e.description}, {"needs", needs_text(e.needs())},
          {"steps", steps}};
}

// ---- validation ---------------------------------------------------------------------------------

namespace {

// The family option `name` as declared by `family` for `command`; nullptr when it declares none.
const options::Spec* family_option(const std::string& family, const std::string& name, options::Command command) {
  for (const auto& f : family::all())
    if (f->name() == family)
      for (const options::Spec& o : f->option_specs())
        if (o.name == name && (o.commands & command)) return &o;
  return nullptr;
}

void check_variant(const std::string& family, const std::string& id, bool gpu_only) {
  if (id.rfind("peer:", 0) == 0) {
    if (id.size() == 5) throw Error("'peer:' names no peer");
    return;  // peers are listed by the machine that has them (baselines/peers.py)
  }
  for (const auto& v : registry::variants(family))
    if (v.id == id) {
      if (gpu_only && !v.gpu) throw Error(family + "/" + id + " runs on the CPU: Nsight Compute has nothing to profile");
      return;
    }
  throw Error("no variant '" + id + "' in " + (family.empty() ? std::string("any family") : "family " + family));
}

void validate_step(const Step& s, const std::set<std::string>& earlier_benches) {
  if (s.label.empty() || s.label.find_first_of("/ \t\n") != std::string::npos)
    throw Error("its label '" + s.label + "' is empty or not a file name");
  if (s.kind == Kind::bench) {
    std::vector<std::string> families;
    if (!s.family.empty()) {
      registry::check_family(s.family);
      families = {s.family};
    }
    if (!s.suite.empty() && !s.datasets.empty()) throw Error("it names a suite and datasets: one or the other");
    if (s.suite.empty() && s.datasets.empty()) throw Error("it names neither a suite nor datasets");
    if (!s.suite.empty()) {
      const suites::Suite& suite = suites::find(s.suite);
      std::vector<std::string> in_suite;
      for (const auto& [fam, specs] : suite.datasets)
        if (s.family.empty() || fam == s.family) in_suite.push_back(fam);
      if (in_suite.empty()) throw Error("suite '" + s.suite + "' has no datasets for family '" + s.family + "'");
      if (s.family.empty()) families = in_suite;
    } else if (s.family.empty()) {
      throw Error("datasets without a family");
    }
    for (const auto& d : s.datasets) datasets::Spec::parse(d);
    for (const auto& id : s.variants) {
      if (families.size() == 1) {
        check_variant(families[0], id, false);
      } else {
        bool found = id.rfind("peer:", 0) == 0;
        for (const auto& f : families)
          for (const auto& v : registry::variants(f)) found = found || v.id == id;
        if (!found) throw Error("no variant '" + id + "' in the families of suite " + s.suite);
      }
    }
    for (const auto& id : s.exclude)
      if (families.size() == 1 && id.rfind("peer:", 0) != 0) check_variant(families[0], id, false);
    for (const auto& sc : s.scopes)
      if (sc != "kernel" && sc != "end-to-end" && sc != "with-io") throw Error("unknown scope '" + sc + "'");
    const std::vector<std::string>& rule_options = protocol::option_names();
    for (const auto& [k, v] : s.options) {
      if (k == "samples" || k == "cpu-samples") {
        cli::Args a;
        a.options.emplace(k, v);
        a.get_int(k, 0, 1, 100000);
        continue;
      }
      if (std::find(rule_options.begin(), rule_options.end(), k) != rule_options.end()) {
        cli::Args a;
        a.options.emplace(k, v);
        protocol::from_args(a, protocol::Rule{});
        continue;
      }
      bool declared = false;
      for (const auto& f : families)
        if (const options::Spec* o = family_option(f, k, options::kBench)) {
          o->check(o->flag && v.empty() ? "1" : v);
          declared = true;
        }
      if (!declared) throw Error("--" + k + " is not an option of `repix bench` for " + join(families, ", "));
    }
  } else if (s.kind == Kind::table) {
    tables::find(s.table);
    for (const auto& r : s.reports)
      if (!earlier_benches.count(r)) throw Error("it reads the report of '" + r + "', which is no earlier bench step");
    for (const auto& [k, v] : s.options) {
      if (k == "out" || k == "out-dir" || k == "report" || k == "from")
        throw Error("--" + k + " is the experiment's to give");
      if (k == "sizes" && v.empty()) throw Error("--sizes needs a value");
    }
  } else if (s.kind == Kind::sass) {
    registry::check_family(s.family);
    if (!s.variants.empty() || !s.datasets.empty()) throw Error("a SASS bracket runs no variant and reads no dataset");
    bool regex = false;
    for (const auto& [k, v] : s.options) {
      if (k == "sass") {
        if (v.empty()) throw Error("--sass needs a regular expression naming kernels");
        sass::functions("", v);  // parses it
        regex = true;
      } else if (k == "items-per-iteration") {
        cli::Args a;
        a.options.emplace(k, v);
        a.get_double(k, 0, 1, 1e9);
      } else {
        throw Error("--" + k + " is not an option of `repix profile --sass`");
      }
    }
    if (!regex) throw Error("a SASS bracket names its kernels (--sass REGEX)");
  } else {
    registry::check_family(s.family);
    if (s.variants.size() != 1 || s.datasets.size() != 1) throw Error("a profile takes one variant and one dataset");
    check_variant(s.family, s.variants[0], true);
    datasets::Spec::parse(s.datasets[0]);
    // A peer is profiled through `repix bench` (ncu::Target): bench's sample counts, not iterations.
    const bool peer = ncu::is_peer(s.variants[0]);
    if (peer && std::find(s.needs.peers.begin(), s.needs.peers.end(), s.variants[0]) == s.needs.peers.end())
      throw Error("it profiles " + s.variants[0] + " but does not need it");
    for (const auto& [k, v] : s.options) {
      if (k == "sections" || k == "scope") continue;
      if (k == "all-launches") {
        if (!v.empty()) throw Error("--all-launches takes no value");
        continue;
      }
      if (k == "kernels") {
        if (v.empty()) throw Error("--kernels needs a regular expression");
        continue;
      }
      if (k == "iterations" && !peer) continue;
      if (peer && (k == "samples" || k == "warmup")) {
        cli::Args a;
        a.options.emplace(k, v);
        if (k == "samples") a.get_int("samples", 0, 1, 100000);
        else protocol::from_args(a, protocol::Rule{});
        continue;
      }
      if (k == "iterations") throw Error("a peer is profiled through `repix bench`: --samples, not --iterations");
      const options::Spec* o = family_option(s.family, k, peer ? options::kBench : options::kProfile);
      if (!o)
        throw Error("--" + k + " is not an option of `repix " + (peer ? "bench --family " : "profile ") + s.family + "`");
      o->check(o->flag && v.empty() ? "1" : v);
    }
  }
}

}  // namespace

void validate(const Experiment& e) {
  if (e.name.empty() || e.group.empty() || e.description.empty() || e.steps.empty())
    throw Error("experiment '" + e.name + "' lacks a name, group, description or step");
  std::set<std::string> labels, benches;
  for (const Step& s : e.steps) {
    try {
      if (!labels.insert(s.label).second) throw Error("its label is not unique");
      validate_step(s, benches);
    } catch (const cli::UsageError& err) {
      throw Error("experiment " + e.name + ", step " + s.label + ": " + err.what());
    } catch (const Error& err) {
      throw Error("experiment " + e.name + ", step " + s.label + ": " + err.what());
    }
    if (s.kind == Kind::bench) benches.insert(s.label);
  }
}

// ---- running ------------------------------------------------------------------------------------

namespace {

int gpu_count() {
  if (!gpu_available()) return 0;
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream o;
  o << in.rdbuf();
  return o.str();
}

// This program again, with `args`, standard output to `stdout_path`; its exit status (128 + the
// signal when one ended it).
int run_child(const std::vector<std::string>& args, const std::string& stdout_path) {
  std::string self;
  try {
    self = fs::read_symlink("/proc/self/exe").string();
  } catch (const std::exception& e) {
    throw Error(std::string("cannot find the repix program to run a step: ") + e.what());
  }
  std::vector<std::string> full = {self};
  full.insert(full.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : full) argv.push_back(s.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, self.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw Error("cannot start " + self + ": " + std::strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw Error(std::string("waiting for a step: ") + std::strerror(errno));
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

// The staging folder: removed however the run ends (but a signal).
struct Staging {
  std::string path;
  ~Staging() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
  }
};

// The options given to `repix experiment` that change its steps: --sizes (table steps), --gpus
// (every step that has a gpus option; its need follows), --steps (a subset, by label).
Experiment with_overrides(const Experiment& base, const cli::Args& a) {
  Experiment e = base;
  if (a.has("steps")) {
    const std::vector<std::string> wanted = cli::split(a.get("steps"), ',');
    for (const auto& w : wanted)
      if (std::none_of(e.steps.begin(), e.steps.end(), [&](const Step& s) { return s.label == w; })) {
        std::vector<std::string> labels;
        for (const Step& s : e.steps) labels.push_back(s.label);
        throw UnknownName("experiment " + e.name + " has no step '" + w + "' (its steps: " + join(labels, ", ") + ")");
      }
    std::vector<Step> kept;
    for (const Step& s : e.steps)
      if (std::find(wanted.begin(), wanted.end(), s.label) != wanted.end()) kept.push_back(s);
    e.steps = kept;
  }
  auto set_option = [](Step& s, const std::string& k, const std::string& v) {
    for (auto& kv : s.options)
      if (kv.first == k) return void(kv.second = v);
    s.options.push_back({k, v});
  };
  if (a.has("sizes")) {
    bool any = false;
    for (Step& s : e.steps)
      if (s.kind == Kind::table) set_option(s, "sizes", a.get("sizes")), any = true;
    if (!any) throw cli::UsageError("--sizes: experiment " + e.name + " has no table step");
  }
  if (a.has("gpus")) {
    const int g = a.get_int("gpus", 0, 1, 64);
    bool any = false;
    for (Step& s : e.steps)
      for (auto& kv : s.options)
        if (kv.first == "gpus") kv.second = std::to_string(g), s.needs.gpus = g, any = true;
    if (!any) throw cli::UsageError("--gpus: experiment " + e.name + " has no step with a GPU count");
  }
  return e;
}

}  // namespace

int command(const cli::Args& a, const std::string& command_line) {
  a.only({"out", "plan", "no-peers", "sizes", "gpus", "steps", "no-figures"});
  if (a.positional.size() != 1) throw cli::UsageError("experiment takes one experiment name (see `repix list experiments`)");
  for (const char* flag : {"plan", "no-peers", "no-figures"})
    if (a.has(flag) && a.get(flag) != "1" && a.get(flag) != "0")
      throw cli::UsageError(std::string("--") + flag + " takes no value");
  const Experiment e = with_overrides(find(a.positional[0]), a);
  const bool no_peers = a.get("no-peers") == "1";
  validate(e);
  const std::string out = a.get("out", "results");
  if (out.empty()) throw cli::UsageError("--out needs a folder");
  const std::string dir = out + "/" + env::machine_slug() + "/" + e.group;
  const Needs needs = e.needs();

  if (a.get("plan") == "1") {
    std::cout << "experiment " << e.name << " (" << e.group << "): " << e.description << "\n"
              << "needs: " << needs_text(needs) << "\n"
              << "writes: " << dir << "/" << e.name << ".json and .md\n"
              << "steps:\n";
    for (std::size_t i = 0; i < e.steps.size(); ++i) {
      const Step& s = e.steps[i];
      std::cout << "  " << i + 1 << ". " << s.label << " (" << kind_name(s.kind) << "; needs " << needs_text(s.needs)
                << "): repix " << join(step_command(s, ""), " ") << "\n";
    }
    return 0;
  }

  // What the machine lacks is said before anything runs.
  const int gpus = gpu_count();
  if (needs.gpus > gpus)
    throw Error("experiment " + e.name + " needs " + needs_text(Needs{needs.gpus, {}, false}) + "; this machine has " +
                (gpus == 0 ? "none (" + gpu_unavailable_reason() + ")" : std::to_string(gpus)));
  if (needs.ncu) {
    try {
      ncu::find_ncu();
    } catch (const Error& err) {
      throw Error("experiment " + e.name + " needs Nsight Compute: " + err.what());
    }
  }

  cli::make_output_folder(dir, "out");
  Staging staging{dir + "/." + e.name + ".staging-" + std::to_string(::getpid())};
  cli::make_output_folder(staging.path, "out");

  report::Report merged;
  merged.command = command_line;
  merged.tool = env::tool_info();
  merged.env = env::capture_environment();
  json steps = json::array();
  std::ostringstream md;
  md << "# Experiment " << e.name << "\n\n" << e.description << "\n\n"
     << "Group `" << e.group << "`; repix " << env::describe_source(merged.tool) << "; machine `" << env::machine_slug()
     << "`.\nCommand: `" << command_line << "`\n\n";
  bool failed = false;
  json single_table;  // the table's JSON when the experiment is that table alone
  std::string single_table_md;
  std::set<std::string> seen_datasets, seen_bounds;

  for (const Step& base_step : e.steps) {
    Step s = base_step;
    json entry = {{"label", s.label}, {"kind", kind_name(s.kind)}};
    std::string skip;
    // Peers: the step's own needs are required; other named peers this machine lacks are left out.
    std::set<std::string> here;  // the peers of the step's families this machine has
    if (s.kind != Kind::table) {
      std::vector<std::string> families;
      if (!s.family.empty()) families = {s.family};
      else if (!s.suite.empty())
        for (const auto& [fam, specs] : suites::find(s.suite).datasets) families.push_back(fam);
      for (const auto& f : families)
        for (const auto& p : peers::available(f)) here.insert("peer:" + p.id);
    }
    for (const auto& p : s.needs.peers) {
      if (no_peers) skip = "skipped: it needs " + p + " (--no-peers)";
      else if (!here.count(p)) skip = "skipped: it needs " + p + ", which this machine lacks";
    }
    if (s.kind == Kind::bench) {
      std::vector<std::string> kept, left_out;
      for (const auto& v : s.variants)
        if (v.rfind("peer:", 0) == 0 && (no_peers || !here.count(v))) left_out.push_back(v);
        else kept.push_back(v);
      if (!left_out.empty()) {
        entry["peers_left_out"] = left_out;
        if (kept.empty()) skip = "skipped: its only variants are peers left out (" + join(left_out, ", ") + ")";
        s.variants = kept;
      }
      if (no_peers && s.variants.empty())
        for (const auto& p : here) s.exclude.push_back(p);
    }
    const std::vector<std::string> args = step_command(s, staging.path);
    entry["command"] = "repix " + join(args, " ");
    md << "## " << s.label << "\n\n`repix " << join(step_command(s, ""), " ") << "`\n\n";
    if (!skip.empty()) {
      entry["status"] = skip;
      md << skip << "\n\n";
      steps.push_back(entry);
      std::fprintf(stderr, "repix experiment: %s: %s\n", s.label.c_str(), skip.c_str());
      continue;
    }
    std::fprintf(stderr, "repix experiment: %s: running repix %s\n", s.label.c_str(), join(args, " ").c_str());
    const std::string stdout_path = staging.path + "/" + s.label + ".stdout";
    const int rc = run_child(args, stdout_path);
    entry["exit_status"] = rc;
    entry["status"] = rc == 0 ? "ok" : "failed";
    if (rc != 0) {
      failed = true;
      md << "**Failed** (exit status " << rc << "; its error is on the experiment's standard error).\n\n";
    }
    if (s.kind == Kind::bench) {
      const std::string path = staging.path + "/" + s.label + ".json";
      if (fs::exists(path)) {
        try {
          report::Report r = report::read_report(path);
          for (const auto& d : r.datasets)
            if (seen_datasets.insert(d.spec + "|" + d.hash).second) merged.datasets.push_back(d);
          for (const auto& b : r.bounds)
            if (seen_bounds.insert(b.name).second) merged.bounds.push_back(b);
          for (auto& res : r.results) {
            res.extra["experiment_step"] = s.label;
            merged.results.push_back(res);
          }
          entry["results"] = r.results.size();
          md << report::summary_table(r) << "\n";
        } catch (const Error& err) {
          failed = true;
          entry["status"] = std::string("failed: its report: ") + err.what();
        }
      }
    } else if (s.kind == Kind::table) {
      // What the table wrote in its folder (its journal aside): its .md and its JSON, the one whose
      // "table" names it (a table may keep the bench report it was built from beside it, as
      // ecc-1 does).
      const std::string tdir = staging.path + "/" + s.label;
      std::error_code ec;
      for (const auto& f : fs::directory_iterator(tdir, ec)) {
        const std::string p = f.path().string();
        if (f.path().extension() == ".json" && p.find(".partial") == std::string::npos) {
          try {
            json t = json::parse(read_text(p));
            if (t.is_object() && t.value("table", "") == s.table) entry["table"] = std::move(t);
          } catch (const std::exception&) {
            failed = true;
            entry["status"] = "failed: its JSON does not parse";
          }
        } else if (f.path().extension() == ".md") {
          single_table_md = read_text(p);
          md << single_table_md << "\n";
        }
      }
      if (rc == 0 && !entry.contains("table")) {  // tables without an output folder print their markdown
        single_table_md = read_text(stdout_path);
        md << single_table_md << "\n";
      }
      if (entry.contains("table")) single_table = entry["table"];
    } else {
      const std::string pdir = staging.path + "/" + s.label;
      const std::string base =
          pdir + "/" +
          (s.kind == Kind::sass ? sass::report_stem(s.family)
                                : ncu::report_stem(ncu::Target{s.family, s.variants[0], s.datasets[0], {}, ""}));
      if (fs::exists(base + ".summary.json")) {
        try {
          entry["profile"] = json::parse(read_text(base + ".summary.json"));
        } catch (const std::exception&) {
        }
      }
      if (fs::exists(base + ".summary.md")) md << read_text(base + ".summary.md") << "\n";
      entry["ncu_reports"] = e.name + ".ncu/" + s.label;
    }
    steps.push_back(entry);
  }

  json j;
  std::string page = md.str();
  const bool one_table = e.steps.size() == 1 && e.steps[0].kind == Kind::table && !single_table.is_null();
  if (one_table) {
    j = single_table;
    j["command"] = command_line;
    page = single_table_md;
  } else {
    j = report::to_json(merged);
  }
  j["experiment"] = to_json(e);
  j["steps"] = steps;

  {
    OutputSet both;  // the page and the report replace their old versions together
    write_file_atomic(dir + "/" + e.name + ".md", page);
    write_file_atomic(dir + "/" + e.name + ".json", json_text::dump(j, 1) + "\n");
    both.commit();
  }
  // Nsight Compute's reports (binary, large) beside them, one folder a profile step.
  for (const Step& s : e.steps) {
    if (s.kind != Kind::profile && s.kind != Kind::sass) continue;
    const std::string from = staging.path + "/" + s.label;
    if (!fs::exists(from)) continue;
    const std::string to = dir + "/" + e.name + ".ncu/" + s.label;
    std::error_code ec;
    fs::remove_all(to, ec);
    fs::create_directories(fs::path(to).parent_path(), ec);
    fs::rename(from, to, ec);
    if (ec) std::fprintf(stderr, "repix experiment: cannot keep %s's Nsight reports: %s\n", s.label.c_str(),
                         ec.message().c_str());
  }
  std::fprintf(stderr, "repix experiment: wrote %s/%s.json and .md%s\n", dir.c_str(), e.name.c_str(),
               failed ? " (some steps failed)" : "");
  if (a.get("no-figures") != "1") {
    try {
      const std::vector<std::string> drawn = figures::draw(dir + "/" + e.name + ".json", dir, e.name, false);
      if (!drawn.empty()) std::fprintf(stderr, "repix experiment: drew %zu figure files\n", drawn.size());
    } catch (const Error& err) {  // the numbers stand without their figures
      std::fprintf(stderr, "repix experiment: figures: %s\n", err.what());
    }
  }
  return failed ? 1 : 0;
}

}  // namespace repix::experiments
