// A family's command-line options, declared once (harness/families/<family>/adapter.cpp): each
// declaration gives the option's name, what it accepts, its default, its help and the commands it
// belongs to, and binds it to a field of the family's Options. Parsing, validation, the usage
// lines of `repix help` and `repix list options`, and the JSON a run records all follow from it.
#pragma once
#include <nlohmann/json.hpp>

#include <algorithm>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "harness/args.hpp"

namespace repix::options {

// The commands an option belongs to.
enum Command : unsigned { kRun = 1u, kProfile = 2u, kBench = 4u };

// What an option accepts.
struct Spec {
  std::string name;          // "connectivity" -> --connectivity
  std::string placeholder;   // "4|8", "N"
  std::string help;          // one line
  std::string default_text;  // the default as written on the command line ("8"); "" for flags
  std::vector<std::string> choices;  // the accepted values; empty: an integer in [min, max], or a flag
  long long min = 0;
  long long max = std::numeric_limits<int>::max();
  bool flag = false;         // takes no value (--clip); --clip=1/0/true/false also accepted
  bool thread_count = false; // a number of threads: capped at max_threads() (core/host_limits.hpp)
  unsigned commands = kRun | kProfile;
  // The ids of the variants that read it; empty: every variant of the family. A report row
  // records the options its variant reads (FamilyOf::row_options_json), defaults included.
  std::vector<std::string> variants;
  bool read_by(const std::string& variant) const {
    return variants.empty() || std::find(variants.begin(), variants.end(), variant) != variants.end();
  }
  // An option of its own kind (a list, e.g. --windows 4,8,16,32): checks the value and returns
  // its canonical text, throwing cli::UsageError (naming the option) when it is not accepted.
  // Empty: a choice, an integer or a flag as above.
  std::function<std::string(const std::string& value)> check_value;

  // The value given on a command line, checked: a UsageError naming the option when it is not
  // accepted. Flags return "1" or "0".
  std::string check(const std::string& value) const;
  // "[--connectivity 4|8]", "[--clip]".
  std::string usage() const;
};

// An option given that none of the `selected` variants reads (peers, `peer:<id>`, read none):
// "note: --min-chunk-2d is read by none of the selected variants (read by gpu-opt, ...)"; "" when
// one of them reads it, or when `selected` is empty (every variant). The run goes on: the option
// is only recorded where it is read.
std::string unread_note(const Spec& s, const std::vector<std::string>& selected);

// The three kinds of option, as a declaration reads best.
inline Spec integer(std::string name, std::string placeholder, std::string help, std::string default_text,
                    unsigned commands = kRun | kProfile) {
  Spec s;
  s.name = std::move(name);
  s.placeholder = std::move(placeholder);
  s.help = std::move(help);
  s.default_text = std::move(default_text);
  s.commands = commands;
  return s;
}
inline Spec choice(std::string name, std::vector<std::string> choices, std::string help, std::string default_text,
                   unsigned commands = kRun | kProfile) {
  Spec s = integer(std::move(name), "", std::move(help), std::move(default_text), commands);
  for (std::size_t i = 0; i < choices.size(); ++i) s.placeholder += (i ? "|" : "") + choices[i];
  s.choices = std::move(choices);
  return s;
}
// A number of threads (or of workers that are threads): an integer from 0 to max_threads(),
// refused above it with the reason (libgomp fails or crashes on tens of thousands of threads).
Spec threads(std::string name, std::string help, std::string default_text, unsigned commands = kRun | kProfile);
// The same check for counts read elsewhere (a table's thread lists): a UsageError naming
// --`name` when `count` is above max_threads().
void check_thread_count(const std::string& name, long long count);
inline Spec flag(std::string name, std::string help, unsigned commands = kRun) {
  Spec s = integer(std::move(name), "", std::move(help), "", commands);
  s.flag = true;
  return s;
}

// A Spec bound to a field of the family's Options.
template <class Options>
struct Option {
  Spec spec;
  std::function<void(Options&, const std::string& checked_value)> set;
  std::function<nlohmann::json(const Options&)> get;  // for the JSON a run records
};

// An integer option bound to a member (int, std::int64_t): `bind_int(&Options::threads, spec)`.
template <class Options, class Field>
Option<Options> bind_int(Field Options::*member, Spec spec) {
  return {std::move(spec), [member](Options& o, const std::string& v) { o.*member = static_cast<Field>(std::stoll(v)); },
          [member](const Options& o) { return nlohmann::json(o.*member); }};
}
// A flag bound to a bool member.
template <class Options>
Option<Options> bind_flag(bool Options::*member, Spec spec) {
  spec.flag = true;
  return {std::move(spec), [member](Options& o, const std::string& v) { o.*member = v == "1"; },
          [member](const Options& o) { return nlohmann::json(o.*member); }};
}

// `s` read by the variants `ids` only (Spec::variants): a family names an option's readers where
// it declares the option, e.g. read_only_by(kQueueVariants, integer("queue-capacity", ...)).
inline Spec read_only_by(std::vector<std::string> ids, Spec s) {
  s.variants = std::move(ids);
  return s;
}

// --gpus, --cpu-groups, --cpu-group-threads: the workers of a family's multi-device variant (the
// tiled engine of algorithms/core/tiling/), for Options with the fields gpus, cpu_groups and
// cpu_group_threads; run, profile and bench take them. `readers`: the variants that run the
// engine (the family's multi-device), the only ones that read them.
template <class Options>
std::vector<Option<Options>> tiling_worker_options(const std::vector<std::string>& readers) {
  const unsigned all = kRun | kProfile | kBench;
  const auto engine = [&readers](Spec s) { return read_only_by(readers, std::move(s)); };
  return {bind_int(&Options::gpus, engine(integer("gpus", "N", "multi-device: GPU workers (0: every visible GPU)", "0", all))),
          bind_int(&Options::cpu_groups, engine(threads("cpu-groups", "multi-device: CPU workers", "0", all))),
          bind_int(&Options::cpu_group_threads,
                   engine(threads("cpu-group-threads", "multi-device: OpenMP threads per CPU group (0: share the cores out)",
                                  "0", all)))};
}

// `first` followed by `rest`: a family's table built from shared groups and its own options.
template <class Options>
std::vector<Option<Options>> with(std::vector<Option<Options>> first, std::vector<Option<Options>> rest) {
  first.insert(first.end(), rest.begin(), rest.end());
  return first;
}

// Applies every option of `table` given in `a` (and, for those not given, nothing: the Options'
// own defaults stand) for `command` (one Command, or several or'ed). An option of the table that
// belongs to none of them is a usage error.
template <class Options>
Options parse(const std::vector<Option<Options>>& table, const cli::Args& a, unsigned command) {
  Options o;
  for (const Option<Options>& opt : table) {
    if (!a.has(opt.spec.name)) continue;
    if (!(opt.spec.commands & command))
      throw cli::UsageError("--" + opt.spec.name + " does not apply to this command");
    opt.set(o, opt.spec.check(a.get(opt.spec.name)));
  }
  return o;
}

// The names of the options of `table` that belong to `command` (for Args::only).
template <class Options>
std::vector<std::string> names(const std::vector<Option<Options>>& table, unsigned command) {
  std::vector<std::string> out;
  for (const auto& o : table)
    if (o.spec.commands & command) out.push_back(o.spec.name);
  return out;
}

}  // namespace repix::options
