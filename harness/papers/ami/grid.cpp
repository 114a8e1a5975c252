// Measuring and rendering the thesis's grids (grid.hpp).
#include "harness/papers/ami/grid.hpp"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include "core/error.hpp"
#include "core/gpu.hpp"
#include "harness/family.hpp"
#include "harness/json_fields.hpp"
#include "harness/options.hpp"

namespace repix::tables::ami_paper {

using json_fields::field_or;
using nlohmann::json;

json seconds(const Timing& t) { return t.ran() ? json(t.median_ms / 1e3) : json(); }

namespace {

int visible_gpus() {
  if (!gpu_available()) return 0;
  int n = 0;
  REPIX_CUDA(cudaGetDeviceCount(&n));
  return n;
}

json paper_value(const json& prow, const Column& c) {
  if (c.paper_key.empty() || !prow.is_object()) return json();
  const json v = field_or(prow, c.paper_key, json());
  return v.is_number() ? json(v.get<double>() * c.paper_to_s) : json();
}

json paper_ratio(const json& prow, const Ratio& r) {
  if (!prow.is_object()) return json();
  if (!r.paper_value.empty()) {
    const json v = field_or(prow, r.paper_value, json());
    return v.is_number() ? v : json();
  }
  return ratio(field_or(prow, r.paper_den, json()), field_or(prow, r.paper_num, json()));
}

// The thesis marks some of its values as extrapolated (ami-5.1's seq from 2048^2 on).
bool predicted(const json& prow) { return prow.is_object() && field_or(prow, "seq_predicted", false); }

}  // namespace

std::string render_grid(const json& paper, const Grid& g, const Meta& meta, const std::string& out_dir) {
  std::ostringstream md;
  md << header(g.title, paper, meta) << g.explanation << "\n\n";
  md << "| " << g.x_label;
  for (const Column& c : g.columns) {
    if (!c.paper_key.empty()) md << " | thesis " << c.heading;
    md << " | ours " << c.heading;
  }
  for (const Ratio& r : g.ratios) md << " | thesis " << r.heading << " | ours " << r.heading;
  md << " |\n|---";
  for (const Column& c : g.columns) md << (c.paper_key.empty() ? "|---:" : "|---:|---:");
  for (std::size_t i = 0; i < g.ratios.size(); ++i) md << "|---:|---:";
  md << "|\n";
  json rows = json::array();
  std::vector<std::string> notes;
  bool any_predicted = false;
  for (const Row& r : g.rows) {
    const json prow = g.paper_row ? g.paper_row(r) : json();
    const bool pred = predicted(prow);
    any_predicted = any_predicted || pred;
    json jr = {{"label", r.label}, {"size", r.size}, {"paper", prow}};
    if (r.block > 0) jr["block"] = r.block;
    json cells = json::array(), ratios = json::array();
    md << "| " << r.label;
    for (std::size_t c = 0; c < g.columns.size(); ++c) {
      const Column& col = g.columns[c];
      const Timing& t = r.cells.at(c);
      const json ours = seconds(t), theirs = paper_value(prow, col);
      if (!col.paper_key.empty()) md << " | " << cell("%.4g", theirs) << (pred && col.paper_key == "seq_s" ? "*" : "");
      md << " | " << (t.ran() ? cell("%.4g", ours) + (t.verified ? "" : " (unverified)") : std::string("-"));
      if (!t.ran() && !t.not_run.empty()) notes.push_back(r.label + ", " + col.heading + ": " + t.not_run);
      json jc = report::to_json(t);
      jc["seconds"] = ours;
      jc["paper_seconds"] = theirs;
      cells.push_back(jc);
    }
    for (const Ratio& q : g.ratios) {
      const json theirs = paper_ratio(prow, q);
      const json ours = ratio(seconds(r.cells.at(q.den)), seconds(r.cells.at(q.num)));
      md << " | " << cell("%.3g", theirs) << (pred && (q.paper_den == "seq_s" || q.paper_value == "speedup") ? "*" : "")
         << " | " << cell("%.3g", ours);
      ratios.push_back({{"ratio", q.heading}, {"paper", theirs}, {"ours", ours}});
    }
    md << " |\n";
    jr["cells"] = cells;
    jr["ratios"] = ratios;
    rows.push_back(jr);
  }
  md << "\nTimes in seconds (medians); ratios are time ratios, so they compare across hardware.";
  if (any_predicted) md << " `*`: the thesis extrapolated this value (it did not run it).";
  md << "\n";
  if (!notes.empty()) {
    md << "\nNot measured:\n";
    for (const auto& n : notes) md << "- " << n << "\n";
  }
  if (g.wall_s >= 0) md << "\nThis table took " << fmt("%.0f", g.wall_s) << " s to measure.\n";
  json j = meta_json(g.id, paper, meta);
  json cols = json::array();
  for (const Column& c : g.columns)
    cols.push_back({{"heading", c.heading}, {"family", c.family}, {"variant", c.variant}, {"scope", c.scope},
                    {"paper_key", c.paper_key}, {"size", c.size}});
  j["columns"] = cols;
  j["rows"] = rows;
  j["explanation"] = g.explanation;
  j["wall_s"] = g.wall_s;
  write_outputs(out_dir, g.id, md.str(), j);
  return md.str();
}

int measure_and_write(Run& run, Grid& g) {
  std::map<std::string, std::unique_ptr<family::Family::Problem>> problems;  // family | spec | options
  for (Row& r : g.rows) {
    r.cells.clear();
    for (const Column& col : g.columns) {
      const std::int64_t n = col.size > 0 ? col.size : r.size;
      const std::string key = r.label + " | " + col.heading;
      cli::Args options = col.options;
      if (r.block > 0) {
        options.options.erase("block");
        options.options.emplace("block", std::to_string(r.block));
      }
      auto measure = [&]() -> Timing {
        Timing t;
        t.family = col.family;
        t.variant = col.variant;
        t.scope = col.scope;
        if (col.max_size > 0 && n > col.max_size) {
          t.not_run = "skipped: not run above " + std::to_string(col.max_size) + "^2 (minutes per image; see above)";
          return t;
        }
        if (col.gpus > 0 && visible_gpus() < col.gpus) {
          t.not_run = "skipped: " + std::to_string(visible_gpus()) + " GPU visible, " + std::to_string(col.gpus) + " needed";
          return t;
        }
        std::fprintf(stderr, "repix table %s: %s...\n", g.id.c_str(), key.c_str());
        try {
          if (col.custom) return col.custom(n);
          const std::string spec = g.spec(col.family, n);
          std::string pkey = col.family + " | " + spec;
          for (const auto& [k, v] : col.options.options)
            if (k != "block") pkey += " --" + k + " " + v;  // the reference follows these (not the block)
          auto& p = problems[pkey];
          if (!p) p = family::find(col.family).problem(spec, col.options);
          return family::find(col.family).measure(*p, col.variant, col.scope, run.reps, options);
        } catch (const std::exception& e) {
          t.not_run = std::string("error: ") + e.what();
          return t;
        }
      };
      if (auto t = run.session->take<Timing>(key, measure)) {
        r.cells.push_back(*t);
      } else {  // replaying a journal that lacks it
        Timing missing;
        missing.variant = col.variant;
        missing.scope = col.scope;
        missing.not_run = "missing: not in the journal (the run stopped before this measurement)";
        r.cells.push_back(missing);
      }
    }
  }
  g.wall_s = run.session->wall_s();
  run.session->stamp(run.meta);
  std::cout << render_grid(run.paper, g, run.meta, run.out_dir);
  std::fprintf(stderr, "repix table %s: %.1f s\n", g.id.c_str(), g.wall_s);
  for (const Row& r : g.rows)
    for (const Timing& t : r.cells)
      if (t.failed()) return 1;
  return 0;
}

TableInfo table_info(const char* id_text, const char* description, std::function<Grid(const Run&)> build) {
  const std::string id = id_text;
  return {id, description, "[--sizes small|paper|N,N,...] [--reps N] [--out DIR] [--paper P.json] | --from JOURNAL [--out DIR]",
          [id, build](const cli::Args& given) {
            Session session(id, given);
            const cli::Args& a = session.args();
            a.only({"sizes", "reps", "out", "out-dir", "paper"});
            if (a.has("out") && a.has("out-dir")) throw cli::UsageError("give --out or --out-dir, not both");
            Run run;
            run.session = &session;
            run.args = &a;
            const std::string sizes = a.get("sizes", "paper");
            if (sizes == "small" || sizes == "quick") {
              run.small = true;
            } else if (sizes != "paper") {
              run.sizes = parse_list(sizes, "sizes", 2, 65536);
            }
            const int reps = a.get_int("reps", run.small ? 1 : 3);
            if (reps < 1) throw cli::UsageError("--reps must be at least 1");
            run.reps = bench::table_reps(reps);
            run.paper = load_paper(id, a.get("paper"), id);
            run.meta = session.meta("repix table " + id, sizes);
            run.out_dir = a.get("out", a.get("out-dir", session.default_out_dir()));
            Grid g = build(run);
            g.id = id;
            session.start(run.out_dir, id, run.meta);
            const int code = measure_and_write(run, g);
            session.done();
            return code;
          }};
}

}  // namespace repix::tables::ami_paper
