// Experiments: named studies as data (`repix list experiments`, `repix experiment NAME`). An
// experiment is a name, a group (the results folder: the paper it belongs to, or `suites` for the
// cross-family suites), a one-line description and its steps: bench runs, paper tables, Nsight
// Compute profiles and static SASS brackets (harness/sass.hpp), each with what it needs of the
// machine (GPUs, peers, ncu). Each paper declares
// its own experiments in harness/papers/<paper>/experiments.cpp (one line per paper in
// experiments.cpp, as the tables); every paper table is also an experiment of the same name.
//
// `repix experiment NAME [--out DIR]` runs each step as a child `repix bench|table|profile`
// process into a staging folder, then writes, together and atomically,
//   DIR/<gpu>/<group>/NAME.json  a repix report (schema of `repix bench`): the bench steps' rows
//                                merged, with "command" (`repix experiment NAME ...`), "tool" (the
//                                commit), "env", "experiment" (the definition) and "steps" (each
//                                step's command, status and outputs; a table step's JSON and a
//                                profile or SASS step's kernel summary are kept inside its entry)
//   DIR/<gpu>/<group>/NAME.md    the human page: each bench step's summary table, each table's
//                                markdown, each profile's kernel table
// An experiment of one table step writes that table's own .md/.json instead, with the command,
// "experiment" and "steps" added. A profile step's .ncu-rep files (a SASS step's .sass)
// go to NAME.ncu/ beside them.
// <gpu> is env::machine_slug(); DIR defaults to results.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

#include "harness/args.hpp"

namespace repix::experiments {

// What a step (or an experiment: the most of its steps') needs of the machine.
struct Needs {
  int gpus = 0;                     // at least this many CUDA devices
  std::vector<std::string> peers;   // peer ids (`peer:<id>`) the step cannot do without
  bool ncu = false;                 // Nsight Compute on PATH (or CUDA_HOME)
};

enum class Kind { bench, table, profile, sass };

struct Step {
  Kind kind = Kind::bench;
  std::string label;                 // names the step in the outputs; unique in its experiment
  std::string family;                // bench: "" = every family of the suite; profile: the family
  std::string suite;                 // bench: a suite (`repix list datasets`), or datasets below
  std::vector<std::string> datasets; // bench: dataset specs; profile: exactly one
  std::vector<std::string> variants; // bench: ids (`peer:<id>` for peers; empty: all); profile: one
  std::vector<std::string> exclude;  // bench
  std::vector<std::string> scopes;   // bench (empty: bench's default)
  // Further options of the command, in order: protocol and sample overrides (samples, cpu-samples,
  // warmup, ...), family options (connectivity, gpus, the ECC tuning options, timeline: a flag
  // has the value ""), a table's options (sizes, ...), profile's (sections, iterations, scope).
  std::vector<std::pair<std::string, std::string>> options;
  std::string table;                 // table: its id
  std::vector<std::string> reports;  // table: labels of earlier bench steps whose reports it reads (--report)
  Needs needs;
};

struct Experiment {
  std::string name;
  std::string group;        // results/<gpu>/<group>/: ecc, iwpp, ami, maxtree, suites
  std::string description;  // one line
  std::vector<Step> steps;
  Needs needs() const;      // the most of its steps' needs
};

// Step builders, as the declarations read best.
Step bench(std::string label, std::string family);
Step table(std::string id, std::vector<std::pair<std::string, std::string>> options = {});
Step profile(std::string label, std::string family, std::string variant, std::string dataset,
             std::vector<std::pair<std::string, std::string>> options = {});
// `repix profile FAMILY --sass REGEX --items-per-iteration N`: the kernels' static issue bound.
Step sass_bracket(std::string label, std::string family, std::string kernels_regex, std::string items_per_iteration);

// Every experiment: one per paper table (same name, group and description), then each paper's
// own (harness/papers/<paper>/experiments.cpp) and the cross-family suites' (suites_experiments.cpp).
const std::vector<Experiment>& all();
std::vector<Experiment> ecc_paper_experiments();
std::vector<Experiment> iwpp_paper_experiments();
std::vector<Experiment> ami_paper_experiments();
std::vector<Experiment> maxtree_paper_experiments();
std::vector<Experiment> suite_experiments();
const Experiment& find(const std::string& name);  // repix::UnknownName listing the known ones

// "2 GPUs, ncu, peer:blin-maxtree", or "CPU" when it needs nothing.
std::string needs_text(const Needs& n);
// The `repix ...` arguments (after the program name) of a step; `staging` is where its outputs
// go ("" in plans: placeholders).
std::vector<std::string> step_command(const Step& s, const std::string& staging);
nlohmann::json to_json(const Experiment& e);
nlohmann::json to_json(const Step& s);
// Everything a step names exists and parses (families, variants, suites, datasets, scopes,
// options, tables, earlier steps): repix::Error naming the experiment, the step and the problem.
void validate(const Experiment& e);

// `repix experiment NAME [--out DIR] [--plan] [--no-peers]`; `command` is the command line.
int command(const cli::Args& a, const std::string& command_line);

}  // namespace repix::experiments
