// What the IWPP paper's tables share while measuring (measure.cpp): a table run (its sizes, runs,
// journal), a row's input with its single-core baseline, a journalled cell, the inputs' specs and
// the speedup tables' rows. Each table's own measurement is in table1.cpp, speedup.cpp (Table 2,
// Figures 10, 11, 13, 14) and multi_device.cpp (Figures 15, 16); register.cpp lists them.
#pragma once
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "harness/args.hpp"
#include "harness/bench.hpp"
#include "harness/family.hpp"
#include "harness/papers/iwpp/tables.hpp"
#include "harness/tables.hpp"

namespace repix::tables::iwpp_paper {

// Samples by bench::table_reps(--reps): GPU variants at least --reps after one warm-up, CPU
// variants (seq included) at most min(--reps, 3) runs within a second (one run at least): seq takes
// seconds to a minute at 8192^2-32768^2, omp-nontiled ~10x seq, and the device round is short. The
// tables show how many runs each median has.

int visible_gpus();  // 0 without a GPU


// A family's options as on a command line ({"connectivity", "4"}, ...), for Family::problem/measure.
cli::Args family_options(std::initializer_list<std::pair<const char*, std::string>> kv);

// One table run: what it measures (from its options) and where the measurements go (its Session:
// measured and journalled, or read back from a journal with --from).
struct Run {
  std::string id;
  Meta meta;
  nlohmann::json paper;
  std::string out_dir;
  bool small = false;
  std::vector<std::int64_t> sizes;  // --sizes N,N,... (empty: the table's own)
  bench::Reps reps;
  const cli::Args* args = nullptr;
  Session* session = nullptr;

  // The table's sizes: --sizes N,... when given, else its small or paper list.
  std::vector<std::int64_t> pick(std::vector<std::int64_t> small_list, std::vector<std::int64_t> paper_list) const {
    if (!sizes.empty()) return sizes;
    return small ? small_list : paper_list;
  }
  std::int64_t pick_one(std::int64_t small_size, std::int64_t paper_size) const {
    const auto v = pick({small_size}, {paper_size});
    if (v.size() != 1) throw cli::UsageError(id + " runs at one size; give one number in --sizes");
    return v[0];
  }
  bool replaying() const { return session->replaying(); }
  double wall_s() const { return session->wall_s(); }
  // The timing `key` of the table: measure() now (journalled), or the journal's; when replaying a
  // journal that lacks it, a Timing of `variant` in `scope` that says so.
  template <class Measure>
  Timing timing(const std::string& key, const std::string& variant, const std::string& scope, Measure measure) const {
    if (auto t = session->take<Timing>(key, measure)) return *t;
    Timing t;
    t.variant = variant;
    t.scope = scope;
    t.not_run = "missing: not in the journal (the run stopped before this measurement)";
    return t;
  }
};

// ---- a row's input: the family's problem (inputs, reference) and the single-core baseline ----

struct Input {
  std::string spec;  // canonical
  std::unique_ptr<family::Family::Problem> problem;  // measuring only (replaying: nothing generated)
  Timing seq;
};

// Generates the inputs of `spec` for `family` with its options `base` and times `seq`, the
// paper's single-core baseline (reconstruct: also the reference, from its first run; edt: checked
// against seq-exact, computed first). Replaying, only seq's timing from the journal.
Input input(const Run& run, const std::string& family, const std::string& spec, const cli::Args& base,
            const bench::Reps& reps);

// `variant` on the row's input in `scope` (a journalled cell).
Timing cell(const Run& run, const std::string& family, Input& in, const std::string& key, const std::string& variant,
            const std::string& scope, const cli::Args& options = {}, const bench::Reps* reps = nullptr);

// ---- the inputs and the words under the tables ----------------------------------------------------

std::string size_label(std::int64_t n);  // "4096^2"
std::string tissue_spec(std::int64_t n, int coverage, const std::string& marker);
// The EDT input for a tissue coverage: blobs (255) on background (0) covering `coverage` %. The
// tissue masks have no zero background at 100 % coverage (every distance would be infinite), so
// 100 % becomes the generator's maximum fill, 0.99. Ball radius 24 like the bench suites (4 on the
// small test inputs).
std::string edt_spec(std::int64_t n, int coverage);
extern const char* const kReconTimed;  // what the reconstruct speedup tables time, and how
extern const char* const kEdtTimed;    // the same for the EDT tables
std::string seq_runs_text(const bench::Reps& r);  // how many runs the medians have

// ---- the speedup tables ---------------------------------------------------------------------------

// Writes and prints the table; 1 when something that ran was not verified or a measurement
// stopped with an error.
int finish(Run& run, SpeedupTable& t);
// A speedup row: `family`'s input of `spec` and each variant of `ids` in both scopes.
SpeedupRow speedup_row(const Run& run, const std::string& family, const std::string& label, const std::string& spec,
                       const cli::Args& base, const std::vector<std::string>& ids);
// The paper's row whose `key` equals `value_of(row)`, or {}.
std::function<nlohmann::json(const SpeedupRow&)> paper_by(const nlohmann::json& paper, const std::string& key,
                                                          std::function<nlohmann::json(const SpeedupRow&)> value_of);
SpeedupTable titled(const std::string& title, const std::string& x_label);

// ---- the tables ---------------------------------------------------------------------------------

int table1(Run& run);  // table1.cpp
int table2(Run& run);  // speedup.cpp
int fig10(Run& run);
int fig11(Run& run);
int fig13(Run& run);
int fig14(Run& run);
int fig15(Run& run);  // multi_device.cpp
int fig16(Run& run);

// A table of the paper: its id, one line for `repix list tables`, the options it adds to the
// common ones (usage text and names) and its measurement.
struct TableDef {
  const char* id;
  const char* description;
  const char* extra_usage;
  std::vector<std::string> extra_options;
  int (*measure)(Run&);
};
// `repix table <id>`: the common options (--sizes, --reps, --out, --paper, --from) and the
// table's own, then its measurement; writes <out>/<id>.{md,json} and prints the md.
TableInfo table_info(const TableDef& def);

}  // namespace repix::tables::iwpp_paper
