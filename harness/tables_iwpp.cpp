// Building the IWPP paper tables from measurements (see tables_iwpp.hpp): markdown beside the
// paper's numbers, and the JSON with every raw sample. No measuring here.
#include "harness/tables_iwpp.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

namespace repix::tables {

using nlohmann::json;

double Timing::median_ms() const { return ran() ? median_of(samples_ms) : 0; }

bool Timing::failed() const {
  return (ran() && !verified) || not_run.rfind("error", 0) == 0 || not_run.rfind("wrong output", 0) == 0;
}

json to_json(const Timing& t) {
  return {{"variant", t.variant}, {"scope", t.scope}, {"samples_ms", t.samples_ms},
          {"median_ms", num_or_null(t.median_ms(), t.ran())}, {"not_run", t.not_run},
          {"verified", t.verified}, {"verification", t.verification}, {"stats", t.stats}};
}

namespace {

json median_or_null(const Timing& t) { return num_or_null(t.median_ms(), t.ran()); }

// What a cell shows instead of a time: the part of not_run before its first ':' ("no GPU",
// "absent", "error", "skipped"); the whole text goes into the notes under the table.
std::string not_run_tag(const Timing& t) {
  if (t.ran()) return "";
  if (t.not_run.empty()) return "not run";
  return t.not_run.substr(0, t.not_run.find(':'));
}

// Queue sizes as the paper prints them: 534K, 30.4M.
std::string count_cell(const json& v) {
  if (!v.is_number()) return "-";
  const double x = v.get<double>();
  return x >= 1e6 ? fmt("%.1fM", x / 1e6) : x >= 1e4 ? fmt("%.0fK", x / 1e3) : fmt("%.0f", x);
}

std::string ms_or_tag(const Timing& t, const char* f) { return t.ran() ? fmt(f, t.median_ms()) : not_run_tag(t); }

// "NO" when something failed (wrong output or an error), "yes" when something ran and everything
// that ran was verified, "-" when nothing ran.
std::string verified_cell(const std::vector<const Timing*>& ts) {
  bool any = false;
  for (const Timing* t : ts) {
    if (t->failed()) return "NO";
    any = any || t->ran();
  }
  return any ? "yes" : "-";
}

// One line per timing that did not run for a reason other than the machine having no GPU, or that
// failed verification; the machine-wide "no GPU" is said once.
struct Notes {
  std::vector<std::string> lines;
  bool no_gpu = false;
  void add(const std::string& where, const Timing& t) {
    if (!t.ran() && t.not_run.rfind("no GPU", 0) == 0) {
      no_gpu = true;
      return;
    }
    std::string line;
    if (t.not_run.rfind("absent", 0) == 0) line = "`" + t.variant + "` " + t.not_run;  // the same in every row
    else if (!t.ran()) line = where + ": " + t.variant + " (" + t.scope + ") not timed: " + t.not_run;
    else if (!t.verified) line = where + ": " + t.variant + " (" + t.scope + "): " + t.verification;
    if (!line.empty() && std::find(lines.begin(), lines.end(), line) == lines.end()) lines.push_back(line);
  }
  std::string md() const {
    std::string s;
    for (const auto& l : lines) s += "- " + l + "\n";
    if (no_gpu) s += "- No GPU on this machine: GPU cells say \"no GPU\" (the CPU parts ran and were verified).\n";
    return s.empty() ? s : "\n" + s;
  }
};

std::string paper_claims_md(const json& paper) {
  std::string s;
  for (const auto& c : paper.value("claims", json::array())) s += "- Paper: " + c.value("text", std::string()) + "\n";
  for (const auto& n : paper.value("notes", json::array())) s += "- Note: " + n.get<std::string>() + "\n";
  return s.empty() ? s : "\n" + s;
}

std::string wall_md(double wall_s) {
  return wall_s >= 0 ? "\nThis table took " + fmt("%.1f", wall_s) +
                           " s on this machine, input generation and references included.\n"
                     : "";
}

}  // namespace

// ---- iwpp-table1 -------------------------------------------------------------------------------

std::string iwpp_table1(const json& paper, const std::vector<LadderBlock>& blocks, const Meta& meta,
                        const std::string& out_dir, double wall_s) {
  static const char* kKeys[3] = {"atomic_ms", "scan_ms", "tq_ms"};
  std::ostringstream md;
  md << header("IWPP paper Table 1: GPU queue versions vs initial raster scans", paper, meta)
     << "Reconstruction by dilation of a tissue mask with 100 % coverage (uint8), the paper's 4-connectivity. "
        "atomic / scan / tq = `gpu-queue-atomic` (the paper's Naive), `gpu-queue-scan` (PF), `gpu-queue-tq` (TQ), "
        "with `Options::raster_scans` = N raster + anti-raster pairs before the queue phase (the paper's "
        "\"#Raster Scans\"; its text does not say whether it counts passes or pairs). "
        "**Timed: kernel scope** (inputs on the GPU, CUDA events, L2 flushed, median of the samples after a "
        "warm-up) = init + N scan pairs + the wavefront (queue) phase + finalisation: the variants' Stats do not "
        "separate the phases, while the paper times the wavefront phase only. **wavefront est.** = kernel "
        "minus the same variant run with the reconstruction itself as marker (the same init and scans, a seed "
        "pass that finds nothing, an empty queue): an estimate of the wavefront phase alone. Queued counts are "
        "`gpu-queue-tq`'s (every variant's are in the JSON). Ratios per row; the **all rows** line divides "
        "column sums, which is how the paper's 2.31x and 1.24x follow from its rows. Every run is checked "
        "against `seq` pixel for pixel before it is timed and again on the timed path's output.\n";
  json jblocks = json::array();
  Notes notes;
  for (const LadderBlock& b : blocks) {
    md << "\n## Marker `" << b.marker << "` (" << b.dataset << ", " << b.connectivity << "-connectivity)\n\n"
       << "| N | initially queued (paper / ours) | total queued (paper / ours) | atomic ms (paper / ours) "
          "| scan ms (paper / ours) | tq ms (paper / ours) | atomic/scan (paper / ours) | scan/tq (paper / ours) "
          "| wavefront est. ms atomic / scan / tq | est. atomic/scan | est. scan/tq | verified |\n"
       << "| ---: | --- | --- | --- | --- | --- | --- | --- | --- | ---: | ---: | --- |\n";
    // Column sums over the rows where the paper and we both have all three.
    double paper_sum[3] = {0, 0, 0}, ours_sum[3] = {0, 0, 0}, est_sum[3] = {0, 0, 0};
    bool paper_all = true, ours_all = true, est_all = true;
    json jrows = json::array();
    for (const LadderRow& r : b.rows) {
      const json* p = paper_row(paper, [&](const json& row) { return row.value("raster_scans", -1) == r.raster_scans; });
      json pm[3], om[3], est[3];
      std::vector<const Timing*> all;
      for (int i = 0; i < 3; ++i) {
        pm[i] = p ? p->value(kKeys[i], json()) : json();
        const Timing* q = i < static_cast<int>(r.queues.size()) ? &r.queues[i] : nullptr;
        const Timing* z = i < static_cast<int>(r.idle.size()) ? &r.idle[i] : nullptr;
        om[i] = q ? median_or_null(*q) : json();
        if (q && z && q->ran() && z->ran()) est[i] = q->median_ms() - z->median_ms();
        for (const Timing* t : {q, z})
          if (t) {
            all.push_back(t);
            notes.add(b.marker + " N=" + std::to_string(r.raster_scans), *t);
          }
        paper_all = paper_all && pm[i].is_number();
        ours_all = ours_all && om[i].is_number();
        est_all = est_all && est[i].is_number() && est[i].get<double>() > 0;
        if (pm[i].is_number()) paper_sum[i] += pm[i].get<double>();
        if (om[i].is_number()) ours_sum[i] += om[i].get<double>();
        if (est[i].is_number()) est_sum[i] += est[i].get<double>();
      }
      // A wavefront estimate at or below zero (noise on an empty queue) gives no ratio.
      auto positive = [](const json& v) { return v.is_number() && v.get<double>() > 0 ? v : json(); };
      const json tq_stats = r.queues.size() == 3 && r.queues[2].ran() ? r.queues[2].stats : json::object();
      const json oi = tq_stats.value("initially_queued", json()), ot = tq_stats.value("total_queued", json());
      const std::string na = no_gpu(meta) ? "no GPU" : "-";
      auto pair = [&](const char* f, const json& a, const json& o) { return cell(f, a) + " / " + (o.is_null() ? na : cell(f, o)); };
      auto counts = [&](const char* key, const json& o) {
        return count_cell(p ? p->value(key, json()) : json()) + " / " + (o.is_null() ? na : count_cell(o));
      };
      const json r_as_p = ratio(pm[0], pm[1]), r_st_p = ratio(pm[1], pm[2]);
      const json r_as = ratio(om[0], om[1]), r_st = ratio(om[1], om[2]);
      const json e_as = ratio(positive(est[0]), positive(est[1])), e_st = ratio(positive(est[1]), positive(est[2]));
      md << "| " << r.raster_scans << " | " << counts("initially_queued", oi) << " | " << counts("total_queued", ot)
         << " | " << pair("%.0f", pm[0], om[0])
         << " | " << pair("%.0f", pm[1], om[1]) << " | " << pair("%.0f", pm[2], om[2]) << " | "
         << pair("%.2fx", r_as_p, r_as) << " | " << pair("%.2fx", r_st_p, r_st) << " | "
         << (est[0].is_null() ? na : cell("%.2f", est[0]) + " / " + cell("%.2f", est[1]) + " / " + cell("%.2f", est[2]))
         << " | " << cell("%.2fx", e_as) << " | " << cell("%.2fx", e_st) << " | " << verified_cell(all) << " |\n";
      json jq = json::array(), jz = json::array();
      for (const auto& t : r.queues) jq.push_back(to_json(t));
      for (const auto& t : r.idle) jz.push_back(to_json(t));
      jrows.push_back({{"raster_scans", r.raster_scans}, {"paper", p ? *p : json()}, {"queues", jq}, {"idle", jz},
                       {"ours", {{"atomic_ms", om[0]}, {"scan_ms", om[1]}, {"tq_ms", om[2]},
                                 {"wavefront_est_ms", {est[0], est[1], est[2]}},
                                 {"initially_queued_tq", oi}, {"total_queued_tq", ot}}},
                       {"ratios", {{"atomic_over_scan_paper", r_as_p}, {"scan_over_tq_paper", r_st_p},
                                   {"atomic_over_scan", r_as}, {"scan_over_tq", r_st},
                                   {"atomic_over_scan_wavefront_est", e_as}, {"scan_over_tq_wavefront_est", e_st}}},
                       {"verified", verified_cell(all)}});
    }
    const json pa = paper_all ? ratio(paper_sum[0], paper_sum[1]) : json(), ps = paper_all ? ratio(paper_sum[1], paper_sum[2]) : json();
    const json oa = ours_all ? ratio(ours_sum[0], ours_sum[1]) : json(), os = ours_all ? ratio(ours_sum[1], ours_sum[2]) : json();
    const json ea = est_all ? ratio(est_sum[0], est_sum[1]) : json(), es = est_all ? ratio(est_sum[1], est_sum[2]) : json();
    md << "| all rows | | | | | | " << cell("%.2fx", pa) << " / " << cell("%.2fx", oa) << " | " << cell("%.2fx", ps)
       << " / " << cell("%.2fx", os) << " | | " << cell("%.2fx", ea) << " | " << cell("%.2fx", es) << " | |\n";
    notes.add(b.marker, b.reference);
    md << "\n" << b.reference.variant << " (" << b.reference.scope << " scope; no raster scans, for reference): "
       << (b.reference.ran() ? fmt("%.3f ms", b.reference.median_ms()) + ", queued " +
                                   b.reference.stats.value("total_queued", json()).dump() + ", verified " +
                                   (b.reference.verified ? "yes" : "NO")
                             : not_run_tag(b.reference))
       << ".\n";
    jblocks.push_back({{"marker", b.marker}, {"dataset", b.dataset}, {"connectivity", b.connectivity}, {"rows", jrows},
                       {"all_rows", {{"atomic_over_scan_paper", pa}, {"scan_over_tq_paper", ps},
                                     {"atomic_over_scan", oa}, {"scan_over_tq", os},
                                     {"atomic_over_scan_wavefront_est", ea}, {"scan_over_tq_wavefront_est", es}}},
                       {"reference", to_json(b.reference)}});
  }
  md << notes.md() << paper_claims_md(paper) << wall_md(wall_s);
  json j = meta_json("iwpp-table1", paper, meta);
  j["blocks"] = jblocks;
  j["wall_s"] = wall_s >= 0 ? json(wall_s) : json();
  j["paper_claims"] = paper.value("claims", json::array());
  write_outputs(out_dir, "iwpp-table1", md.str(), j);
  return md.str();
}

// ---- the speedup tables ------------------------------------------------------------------------

std::string speedup_table(const json& paper, const SpeedupTable& t, const Meta& meta, const std::string& out_dir) {
  // Columns: every (variant, scope) in order of first appearance.
  std::vector<std::pair<std::string, std::string>> cols;
  for (const auto& r : t.rows)
    for (const auto& c : r.cells)
      if (std::find(cols.begin(), cols.end(), std::make_pair(c.variant, c.scope)) == cols.end())
        cols.push_back({c.variant, c.scope});
  auto find_cell = [](const SpeedupRow& r, const std::string& v, const std::string& scope) -> const Timing* {
    for (const auto& c : r.cells)
      if (c.variant == v && c.scope == scope) return &c;
    return nullptr;
  };
  auto speedup = [](const SpeedupRow& r, const Timing* c) {
    return c && c->ran() && r.seq.ran() ? ratio(r.seq.median_ms(), c->median_ms()) : json();
  };

  std::ostringstream md;
  md << header(t.title, paper, meta) << t.explanation << "\n\n| " << t.x_label << " | input | seq ms (runs) |";
  for (const auto& [v, scope] : cols) md << " " << v << " " << scope << " ms (x seq) |";
  md << " paper x seq | verified |\n| --- | --- | ---: |";
  for (std::size_t i = 0; i < cols.size(); ++i) md << " ---: |";
  md << " ---: | --- |\n";

  json jrows = json::array();
  Notes notes;
  for (const auto& r : t.rows) {
    const json p = t.paper_row ? t.paper_row(r) : json();
    const json pv = p.is_object() ? p.value(t.paper_key, json()) : json();
    std::vector<const Timing*> all = {&r.seq};
    notes.add(r.label, r.seq);
    md << "| " << r.label << " | " << r.dataset << " | "
       << (r.seq.ran() ? fmt("%.1f", r.seq.median_ms()) + " (" + std::to_string(r.seq.samples_ms.size()) + ")"
                       : not_run_tag(r.seq))
       << " |";
    json jcells = json::array();
    for (const auto& [v, scope] : cols) {
      const Timing* c = find_cell(r, v, scope);
      if (!c) {
        md << " |";
        continue;
      }
      all.push_back(c);
      notes.add(r.label, *c);
      const json s = speedup(r, c);
      md << " " << ms_or_tag(*c, "%.2f") << (s.is_number() ? " (" + fmt("%.1fx", s.get<double>()) + ")" : "") << " |";
      json jc = to_json(*c);
      jc["speedup_vs_seq"] = s;
      jcells.push_back(jc);
    }
    md << " " << cell("%.1f", pv) << " | " << verified_cell(all) << " |\n";
    jrows.push_back({{"label", r.label}, {"dataset", r.dataset}, {"paper", p}, {"seq", to_json(r.seq)},
                     {"cells", jcells}, {"verified", verified_cell(all)}, {"note", r.note}});
    if (!r.note.empty()) notes.lines.push_back(r.label + ": " + r.note);
  }

  // Variant against variant, per row and scope.
  json jcmp = json::array();
  std::ostringstream cmp;
  for (const auto& [a, b] : t.compare) {
    std::set<std::string> scopes;
    for (const auto& [v, scope] : cols)
      if (v == a) scopes.insert(scope);
    for (const auto& scope : scopes) {
      std::vector<double> per;
      std::string per_md;
      json jper = json::array();
      for (const auto& r : t.rows) {
        const Timing *ta = find_cell(r, a, scope), *tb = find_cell(r, b, scope);
        if (!ta || !tb || !ta->ran() || !tb->ran()) continue;
        const double x = tb->median_ms() / ta->median_ms();
        per.push_back(x);
        per_md += (per_md.empty() ? "" : ", ") + r.label + ": " + fmt("%.2fx", x);
        jper.push_back({{"label", r.label}, {"ratio", x}});
      }
      if (per.empty()) continue;
      const double mean = mean_of(per), mx = *std::max_element(per.begin(), per.end());
      cmp << "- `" << a << "` over `" << b << "` (" << scope << "): " << per_md << "; mean " << fmt("%.2fx", mean)
          << ", max " << fmt("%.2fx", mx) << "\n";
      jcmp.push_back({{"a", a}, {"b", b}, {"scope", scope}, {"per_row", jper}, {"mean", mean}, {"max", mx}});
    }
  }
  // Row against row (the multi-device configurations), per cell.
  for (const auto& [ra, rb] : t.compare_rows) {
    auto row = [&](const std::string& label) -> const SpeedupRow* {
      for (const auto& r : t.rows)
        if (r.label == label) return &r;
      return nullptr;
    };
    const SpeedupRow *A = row(ra), *B = row(rb);
    if (!A || !B) continue;
    for (const auto& ca : A->cells) {
      const Timing* cb = find_cell(*B, ca.variant, ca.scope);
      if (!cb || !ca.ran() || !cb->ran()) continue;
      const double x = cb->median_ms() / ca.median_ms();
      cmp << "- " << ra << " over " << rb << " (`" << ca.variant << "`, " << ca.scope << "): " << fmt("%.2fx", x) << "\n";
      jcmp.push_back({{"row_a", ra}, {"row_b", rb}, {"variant", ca.variant}, {"scope", ca.scope}, {"ratio", x}});
    }
  }
  if (!cmp.str().empty()) md << "\nOurs, how much faster (time ratio):\n\n" << cmp.str();
  md << notes.md() << paper_claims_md(paper) << wall_md(t.wall_s);

  json j = meta_json(t.id, paper, meta);
  j["explanation"] = t.explanation;
  j["rows"] = jrows;
  j["comparisons"] = jcmp;
  j["paper_claims"] = paper.value("claims", json::array());
  j["paper_notes"] = paper.value("notes", json::array());
  j["wall_s"] = t.wall_s >= 0 ? json(t.wall_s) : json();
  write_outputs(out_dir, t.id, md.str(), j);
  return md.str();
}

}  // namespace repix::tables
