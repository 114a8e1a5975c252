// Building the IWPP paper tables from measurements (see tables.hpp): markdown beside the
// paper's numbers, and the JSON with every raw sample. No measuring here.
#include "harness/papers/iwpp/tables.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "harness/json_fields.hpp"

namespace repix::tables {

using json_fields::field_or;

using nlohmann::json;

double median_ms(const Timing& t) { return t.ran() ? median_of(t.samples_ms) : 0; }

std::vector<double> wavefront_ms(const Timing& t) {
  std::vector<double> v;
  for (const json& s : field_or(t.extra, "sample_stats", json::array())) {
    const json w = field_or(s, "wavefront_ms", json());
    if (w.is_number()) v.push_back(w.get<double>());
  }
  return v;
}

double wavefront_median_ms(const Timing& t) {
  const std::vector<double> w = wavefront_ms(t);
  return t.ran() && !w.empty() ? median_of(w) : 0;
}

const char* const kQueueLadder[4] = {"gpu-queue-atomic", "gpu-queue-warp-atomic", "gpu-queue-scan", "gpu-queue-tq"};

json cell_json(const Timing& t) {
  const std::vector<double> w = wavefront_ms(t);
  json stats = t.extra.is_object() ? t.extra : json::object();
  stats.erase("sample_stats");
  if (t.errors.is_object() && !t.errors.empty()) stats["errors"] = t.errors;
  return {{"variant", t.variant}, {"scope", t.scope}, {"samples_ms", t.samples_ms},
          {"median_ms", num_or_null(median_ms(t), t.ran())}, {"wavefront_ms", w},
          {"wavefront_median_ms", num_or_null(wavefront_median_ms(t), t.ran() && !w.empty())},
          {"not_run", t.not_run},
          {"verified", t.verified}, {"verification", t.verification}, {"stats", stats}};
}


namespace {

json median_or_null(const Timing& t) { return num_or_null(median_ms(t), t.ran()); }

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

std::string ms_or_tag(const Timing& t, const char* f) { return t.ran() ? fmt(f, median_ms(t)) : not_run_tag(t); }

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
  for (const auto& c : field_or(paper, "claims", json::array())) s += "- Paper: " + field_or(c, "text", std::string()) + "\n";
  for (const auto& n : field_or(paper, "notes", json::array())) s += "- Note: " + (n.is_string() ? n.get<std::string>() : n.dump()) + "\n";
  return s.empty() ? s : "\n" + s;
}

std::string wall_md(double wall_s, const Meta& meta) {
  if (wall_s < 0) return "";
  if (!meta.provenance.is_null())  // built from a journal: the measuring run's time until it stopped
    return "\nThe measuring run had taken " + fmt("%.1f", wall_s) + " s when it stopped, input generation and "
           "references included.\n";
  return "\nThis table took " + fmt("%.1f", wall_s) + " s on this machine, input generation and references included.\n";
}

}  // namespace

// ---- iwpp-table1 -------------------------------------------------------------------------------

namespace {
std::string launch_label(int blocks_per_sm) {
  if (blocks_per_sm == 0) return "as many blocks as fit on each SM (repix's default launch)";
  if (blocks_per_sm == 1) return "1 block per SM (the paper's launch)";
  return std::to_string(blocks_per_sm) + " blocks per SM";
}
}  // namespace

std::string iwpp_table1(const json& paper, const std::vector<LadderBlock>& blocks, const Meta& meta,
                        const std::string& out_dir, double wall_s) {
  // The paper's columns for kQueueLadder: Naive, (none for the compiler's warp aggregation), PF, TQ.
  static const char* kPaperKeys[4] = {"atomic_ms", nullptr, "scan_ms", "tq_ms"};
  enum { kAtomic = 0, kWarp = 1, kScan = 2, kTq = 3 };
  std::ostringstream md;
  md << header("IWPP paper Table 1: GPU queue versions vs initial raster scans", paper, meta)
     << "Reconstruction by dilation of a tissue mask with 100 % coverage (uint8), the paper's 4-connectivity. "
        "Naive = `gpu-queue-atomic` (one hardware atomicAdd per queued element), PF = `gpu-queue-scan` (block "
        "prefix sums), TQ = `gpu-queue-tq` (per-thread queues + prefix sums); `gpu-queue-warp-atomic` is the "
        "Naive queue's source as nvcc compiles it by default: ptxas aggregates a warp-uniform atomicAdd into one "
        "atomic per warp (the paper has no such column). N = `Options::raster_scans` raster + anti-raster pairs "
        "before the queue phase (the paper's \"#Raster Scans\"; its text does not say whether it counts passes or "
        "pairs). **Times are the wavefront phase, as the paper's**: the propagation kernels alone, timed by CUDA "
        "events inside the variant (`Stats::wavefront_ms`), median over the kernel-scope samples (inputs on the "
        "GPU, L2 flushed, after a warm-up); the whole run (init, scans, seeds, wavefront, finalisation) is the "
        "last time column. Each block of rows names the propagation kernel's launch: the paper ran one block per "
        "SM; repix's default fills each SM with as many 256-thread blocks as fit. Queued counts are "
        "`gpu-queue-tq`'s (every variant's are in the JSON). Ratios per row; the **all rows** line divides "
        "column sums, which is how the paper's 2.31x and 1.24x follow from its rows. Every run is checked "
        "against `seq` pixel for pixel before it is timed and again on the timed path's output.\n";
  json jblocks = json::array();
  Notes notes;
  for (const LadderBlock& b : blocks) {
    md << "\n## Marker `" << b.marker << "`, " << launch_label(b.blocks_per_sm) << " (" << b.dataset << ", "
       << b.connectivity << "-connectivity)\n\n"
       << "| N | initially queued (paper / ours) | total queued (paper / ours) | Naive = atomic ms (paper / ours) "
          "| warp-atomic ms | PF = scan ms (paper / ours) | TQ = tq ms (paper / ours) | atomic/scan (paper / ours) "
          "| scan/tq (paper / ours) | atomic/warp-atomic | whole run ms atomic / warp / scan / tq | verified |\n"
       << "| ---: | --- | --- | --- | ---: | --- | --- | --- | --- | ---: | --- | --- |\n";
    // Column sums; a side's all-rows ratios need that side's values (the paper's three columns, our
    // four) in every row.
    double paper_sum[4] = {0, 0, 0, 0}, ours_sum[4] = {0, 0, 0, 0};
    bool paper_all = true, ours_all = true;
    json jrows = json::array();
    for (const LadderRow& r : b.rows) {
      const json* p = paper_row(paper, [&](const json& row) { return field_or(row, "raster_scans", -1) == r.raster_scans; });
      json pm[4], om[4], whole[4];
      std::vector<const Timing*> all;
      for (int i = 0; i < 4; ++i) {
        pm[i] = p && kPaperKeys[i] ? p->value(kPaperKeys[i], json()) : json();
        const Timing* q = i < static_cast<int>(r.queues.size()) ? &r.queues[i] : nullptr;
        if (q) {
          om[i] = num_or_null(wavefront_median_ms(*q), q->ran() && !wavefront_ms(*q).empty());
          whole[i] = median_or_null(*q);
          all.push_back(q);
          notes.add(b.marker + " N=" + std::to_string(r.raster_scans) + " " + launch_label(b.blocks_per_sm), *q);
        }
        if (kPaperKeys[i]) {
          paper_all = paper_all && pm[i].is_number();
          if (pm[i].is_number()) paper_sum[i] += pm[i].get<double>();
        }
        ours_all = ours_all && om[i].is_number();
        if (om[i].is_number()) ours_sum[i] += om[i].get<double>();
      }
      const json tq_stats = r.queues.size() == 4 && r.queues[kTq].ran() ? r.queues[kTq].extra : json::object();
      const json oi = field_or(tq_stats, "initially_queued", json()), ot = field_or(tq_stats, "total_queued", json());
      const std::string na = no_gpu(meta) ? "no GPU" : "-";
      auto pair = [&](const json& a, const json& o) { return cell("%.0f", a) + " / " + (o.is_null() ? na : cell("%.2f", o)); };
      auto pair_x = [&](const json& a, const json& o) { return cell("%.2fx", a) + " / " + (o.is_null() ? na : cell("%.2fx", o)); };
      auto counts = [&](const char* key, const json& o) {
        return count_cell(p ? p->value(key, json()) : json()) + " / " + (o.is_null() ? na : count_cell(o));
      };
      const json r_as_p = ratio(pm[kAtomic], pm[kScan]), r_st_p = ratio(pm[kScan], pm[kTq]);
      const json r_as = ratio(om[kAtomic], om[kScan]), r_st = ratio(om[kScan], om[kTq]);
      const json r_aw = ratio(om[kAtomic], om[kWarp]);
      std::string whole_cell;
      for (int i = 0; i < 4; ++i) whole_cell += (i ? " / " : "") + (whole[i].is_null() ? na : cell("%.2f", whole[i]));
      md << "| " << r.raster_scans << " | " << counts("initially_queued", oi) << " | " << counts("total_queued", ot)
         << " | " << pair(pm[kAtomic], om[kAtomic]) << " | " << (om[kWarp].is_null() ? na : cell("%.2f", om[kWarp]))
         << " | " << pair(pm[kScan], om[kScan]) << " | " << pair(pm[kTq], om[kTq]) << " | " << pair_x(r_as_p, r_as)
         << " | " << pair_x(r_st_p, r_st) << " | " << cell("%.2fx", r_aw) << " | " << whole_cell << " | "
         << verified_cell(all) << " |\n";
      json jq = json::array();
      for (const auto& t : r.queues) jq.push_back(cell_json(t));
      jrows.push_back({{"raster_scans", r.raster_scans}, {"paper", p ? *p : json()}, {"queues", jq},
                       {"ours", {{"wavefront_ms", {{"atomic", om[kAtomic]}, {"warp_atomic", om[kWarp]},
                                                   {"scan", om[kScan]}, {"tq", om[kTq]}}},
                                 {"whole_run_ms", {{"atomic", whole[kAtomic]}, {"warp_atomic", whole[kWarp]},
                                                   {"scan", whole[kScan]}, {"tq", whole[kTq]}}},
                                 {"initially_queued_tq", oi}, {"total_queued_tq", ot}}},
                       {"ratios", {{"atomic_over_scan_paper", r_as_p}, {"scan_over_tq_paper", r_st_p},
                                   {"atomic_over_scan", r_as}, {"scan_over_tq", r_st},
                                   {"atomic_over_warp_atomic", r_aw}}},
                       {"verified", verified_cell(all)}});
    }
    const json pa = paper_all ? ratio(paper_sum[kAtomic], paper_sum[kScan]) : json();
    const json ps = paper_all ? ratio(paper_sum[kScan], paper_sum[kTq]) : json();
    const json oa = ours_all ? ratio(ours_sum[kAtomic], ours_sum[kScan]) : json();
    const json os = ours_all ? ratio(ours_sum[kScan], ours_sum[kTq]) : json();
    const json ow = ours_all ? ratio(ours_sum[kAtomic], ours_sum[kWarp]) : json();
    md << "| all rows | | | | | | | " << cell("%.2fx", pa) << " / " << cell("%.2fx", oa) << " | " << cell("%.2fx", ps)
       << " / " << cell("%.2fx", os) << " | " << cell("%.2fx", ow) << " | | |\n";
    notes.add(b.marker, b.reference);
    md << "\n" << b.reference.variant << " (" << b.reference.scope << " scope, whole run; no raster scans, for reference): "
       << (b.reference.ran() ? fmt("%.3f ms", median_ms(b.reference)) + ", queued " +
                                   field_or(b.reference.extra, "total_queued", json()).dump() + ", verified " +
                                   (b.reference.verified ? "yes" : "NO")
                             : not_run_tag(b.reference))
       << ".\n";
    jblocks.push_back({{"marker", b.marker}, {"dataset", b.dataset}, {"connectivity", b.connectivity},
                       {"blocks_per_sm", b.blocks_per_sm}, {"launch", launch_label(b.blocks_per_sm)}, {"rows", jrows},
                       {"all_rows", {{"atomic_over_scan_paper", pa}, {"scan_over_tq_paper", ps},
                                     {"atomic_over_scan", oa}, {"scan_over_tq", os}, {"atomic_over_warp_atomic", ow}}},
                       {"reference", cell_json(b.reference)}});
  }
  md << notes.md() << paper_claims_md(paper) << wall_md(wall_s, meta);
  json j = meta_json("iwpp-table1", paper, meta);
  j["blocks"] = jblocks;
  j["wall_s"] = wall_s >= 0 ? json(wall_s) : json();
  j["paper_claims"] = field_or(paper, "claims", json::array());
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
    return c && c->ran() && r.seq.ran() ? ratio(median_ms(r.seq), median_ms(*c)) : json();
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
    const json pv = p.is_object() ? field_or(p, t.paper_key, json()) : json();
    std::vector<const Timing*> all = {&r.seq};
    notes.add(r.label, r.seq);
    md << "| " << r.label << " | " << r.dataset << " | "
       << (r.seq.ran() ? fmt("%.1f", median_ms(r.seq)) + " (" + std::to_string(r.seq.samples_ms.size()) + ")"
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
      json jc = cell_json(*c);
      jc["speedup_vs_seq"] = s;
      jcells.push_back(jc);
    }
    md << " " << cell("%.1f", pv) << " | " << verified_cell(all) << " |\n";
    jrows.push_back({{"label", r.label}, {"dataset", r.dataset}, {"paper", p}, {"seq", cell_json(r.seq)},
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
        const double x = median_ms(*tb) / median_ms(*ta);
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
      const double x = median_ms(*cb) / median_ms(ca);
      cmp << "- " << ra << " over " << rb << " (`" << ca.variant << "`, " << ca.scope << "): " << fmt("%.2fx", x) << "\n";
      jcmp.push_back({{"row_a", ra}, {"row_b", rb}, {"variant", ca.variant}, {"scope", ca.scope}, {"ratio", x}});
    }
  }
  if (!cmp.str().empty()) md << "\nOurs, how much faster (time ratio):\n\n" << cmp.str();
  md << notes.md() << paper_claims_md(paper) << wall_md(t.wall_s, meta);

  json j = meta_json(t.id, paper, meta);
  j["explanation"] = t.explanation;
  j["rows"] = jrows;
  j["comparisons"] = jcmp;
  j["paper_claims"] = field_or(paper, "claims", json::array());
  j["paper_notes"] = field_or(paper, "notes", json::array());
  j["wall_s"] = t.wall_s >= 0 ? json(t.wall_s) : json();
  write_outputs(out_dir, t.id, md.str(), j);
  return md.str();
}

}  // namespace repix::tables
