// `repix table maxtree-seminar --report R.json[,R2.json...]`: the figures of Blin's seminar
// ("Concurrent computation of the max-tree on GPU", LRDE 2021; results/paper/maxtree-seminar.json)
// beside ours, from `repix bench` reports of the maxtree family (scripts/device-check
// maxtree-seminar: the maxtree-targets suite with 4- and 8-connectivity). Like ecc-ablation it
// measures nothing itself: the bench has already timed and verified every case, and the same
// report feeds the README's numbers. Rows:
//  - each seminar figure that a bench measures (GPU over the parallel CPU algorithm, kernel and
//    end-to-end throughput, frame rates at 1920x1080) beside ours, from the 8-bit natural images
//    with 4-connectivity (the seminar's), the border max-tree's from gpu-border beside gpu-grid;
//    the figures only its bar charts show, listed with why they have no number of ours;
//  - every variant on every input of the reports (8 and 16 bits, both connectivities): kernel and
//    end-to-end times, Gpx/s, frames per second of that size, the speedup over omp, and the step
//    breakdown (tile build, border merges, flatten: the CUDA-event phase times in each result's
//    `extra`), the seminar's slide 20 as numbers.
#include <algorithm>
#include <map>
#include <optional>
#include <sstream>

#include "core/error.hpp"
#include "datasets/spec.hpp"
#include "harness/json_fields.hpp"
#include "harness/papers/maxtree/seminar.hpp"
#include "harness/tables.hpp"

namespace repix::tables {

using json_fields::field_or;
using json_fields::path_or;
using nlohmann::json;

namespace {

constexpr const char* kFamily = "maxtree";

struct Input {
  const report::DatasetInfo* info = nullptr;
  int connectivity = 4;
  bool natural() const { return info->spec.rfind("texture:", 0) == 0; }
  std::string label() const {
    return info->spec + ", " + std::to_string(connectivity) + "-conn.";
  }
};

// The cases of one input: variant -> scope -> result.
using Cases = std::map<std::string, std::map<std::string, const report::Result*>>;

double seconds(const report::Result* r) { return r->median_ms / 1000; }

bool same_spec(const std::string& a, const std::string& b) {
  try {
    return datasets::Spec::parse(a).str() == datasets::Spec::parse(b).str();
  } catch (const Error&) {
    return false;
  }
}

}  // namespace

std::string maxtree_seminar(const json& paper, const std::vector<report::Report>& reports, const std::string& out_dir) {
  if (reports.empty()) throw Error("maxtree-seminar needs at least one bench report (--report R.json)");
  // Inputs in report order, (dataset, connectivity) apart; each with its cases.
  std::vector<Input> inputs;
  std::vector<Cases> cases;
  std::vector<std::string> order;  // variant ids in the order the reports list them
  for (const report::Report& r : reports)
    for (const report::Result& res : r.results) {
      if (res.family != kFamily || !res.ran()) continue;
      // The report lists each dataset in its canonical spelling; a result keeps the one it was given.
      const auto info = std::find_if(r.datasets.begin(), r.datasets.end(), [&](const report::DatasetInfo& d) {
        return d.spec == res.dataset || same_spec(d.spec, res.dataset);
      });
      if (info == r.datasets.end()) throw Error("a maxtree result names a dataset its report does not list: " + res.dataset);
      const int conn = field_or(res.extra, "connectivity", 4);
      std::size_t k = 0;
      while (k < inputs.size() && !(inputs[k].info->spec == info->spec && inputs[k].connectivity == conn)) ++k;
      if (k == inputs.size()) {
        inputs.push_back({&*info, conn});
        cases.emplace_back();
      }
      cases[k][res.variant][res.scope] = &res;
      if (std::find(order.begin(), order.end(), res.variant) == order.end()) order.push_back(res.variant);
    }
  if (inputs.empty()) throw Error("the reports have no maxtree results (run `repix bench --family maxtree`)");

  const report::Report& first = reports.front();
  Meta meta;
  meta.command = command_line();
  meta.tool = first.tool;
  meta.env = first.env;
  meta.gpu = path_or(first.env, {"gpu", "name"}, std::string("no GPU"));
  meta.sizes = "from bench reports";

  // The input that stands for the seminar's: natural 8-bit, 4-connectivity, of this shape.
  auto seminar_input = [&](const std::string& shape) -> std::optional<std::size_t> {
    for (std::size_t k = 0; k < inputs.size(); ++k)
      if (inputs[k].natural() && inputs[k].info->dtype == "uint8" && inputs[k].connectivity == 4 &&
          inputs[k].info->shape == shape)
        return k;
    return std::nullopt;
  };
  // The GPU variant the seminar's figures are compared with: our fastest at kernel scope on that
  // input (gpu-opt in the current variants; a peer, e.g. Blin's own code, is listed, never chosen).
  auto best_gpu = [&](std::size_t k) -> std::string {
    std::string best;
    double best_ms = 0;
    for (const auto& [id, scopes] : cases[k]) {
      const auto it = scopes.find("kernel");
      if (it == scopes.end() || id.rfind("peer:", 0) == 0) continue;
      if (best.empty() || it->second->median_ms < best_ms) best = id, best_ms = it->second->median_ms;
    }
    return best;
  };
  auto get = [&](std::size_t k, const std::string& variant, const std::string& scope) -> const report::Result* {
    const auto v = cases[k].find(variant);
    if (v == cases[k].end()) return nullptr;
    const auto s = v->second.find(scope);
    return s == v->second.end() ? nullptr : s->second;
  };

  std::ostringstream md;
  md << header("Seminar (Blin 2021): the max-tree on GPU, ours beside the seminar's", paper, meta);
  md << "From `repix bench` reports (every case verified against seq before its samples count): "
     << reports.size() << (reports.size() == 1 ? " report" : " reports") << ", first made by `" << first.command
     << "`. Kernel: the image in GPU memory, CUDA events; end to end: host image in, host parent image out. "
        "Seminar images: one natural 6000x4000 8-bit image (not named; frame rates for 1920x1080); ours: the "
        "camera texture mirrored to those sizes, in 8 and 16 bits (x 257).\n\n";

  // ---- the seminar's figures ----
  json figures = json::array();
  md << "## The seminar's figures\n\n| figure | seminar | ours | ours from |\n| --- | ---: | ---: | --- |\n";
  const auto big = seminar_input("6000x4000"), frame = seminar_input("1920x1080");
  for (const json& row : field_or(paper, "rows", json::array())) {
    const std::string q = field_or(row, "quantity", std::string());
    const json seminar = field_or(row, "value", json());
    json ours;
    std::string from;
    const std::optional<std::size_t> k = field_or(row, "shape", std::string()) == "1920x1080" ? frame : big;
    const std::string gpu = k ? best_gpu(*k) : "";
    const report::Result* kernel = k && !gpu.empty() ? get(*k, gpu, "kernel") : nullptr;
    const report::Result* e2e = k && !gpu.empty() ? get(*k, gpu, "end-to-end") : nullptr;
    const report::Result* omp = k ? get(*k, "omp", "end-to-end") : nullptr;
    const double bytes = k ? static_cast<double>(inputs[*k].info->elements) : 0;  // 1 byte a pixel (uint8)
    if (q == "gpu_vs_parallel_cpu_speedup" && kernel && omp) {
      ours = seconds(omp) / seconds(kernel);
      from = "omp (end to end, all cores) / " + gpu + " kernel";
    } else if (q == "kernel_throughput" && kernel) {
      ours = bytes / seconds(kernel) / 1e6;
      from = gpu + " kernel";
    } else if (q == "kernel_fps_1920x1080" && kernel) {
      ours = 1 / seconds(kernel);
      from = gpu + " kernel";
    } else if (q == "kernel_ms_6000x4000" && kernel) {
      ours = kernel->median_ms;
      from = gpu + " kernel";
    } else if (q == "end_to_end_ms" && e2e) {
      ours = e2e->median_ms;
      from = gpu + " end to end";
    } else if (q == "end_to_end_throughput" && e2e) {
      ours = bytes / seconds(e2e) / 1e6;
      from = gpu + " end to end";
    } else if (q == "end_to_end_fps_1920x1080" && e2e) {
      ours = 1 / seconds(e2e);
      from = gpu + " end to end";
    } else if (q.rfind("step_share_", 0) == 0) {
      from = "numbers in the step breakdown below";
    } else if (q.rfind("border_", 0) == 0) {
      // gpu-border against gpu-grid, the step it changes (its horizontal merge), at kernel scope.
      const report::Result* border = k ? get(*k, "gpu-border", "kernel") : nullptr;
      const report::Result* grid = k ? get(*k, "gpu-grid", "kernel") : nullptr;
      const double pixels = border ? field_or(border->extra, "border_pixels", 0.0) : 0.0;
      const double nodes = border ? field_or(border->extra, "border_nodes", 0.0) : 0.0;
      if (!border) {
        from = "no gpu-border kernel case on this input in these reports";
      } else if (q == "border_horizontal_merge_saving" && grid) {
        ours = field_or(grid->extra, "merge_ms", 0.0) - field_or(border->extra, "merge_ms", 0.0);
        from = "gpu-grid's merge phase minus gpu-border's (their vertical merges are the same)";
      } else if (q == "border_size_reduction" && nodes > 0) {
        ours = pixels / nodes;
        from = "gpu-border: border pixels / nodes of the compact border trees";
      } else if (q == "border_extraction_space_saving" && pixels > 0) {
        ours = 100 * nodes / pixels;
        from = "gpu-border: nodes of the compact border trees as % of the border pixels";
      } else if (q == "border_extra_steps_cost") {
        from = "no separate steps: gpu-border claims, zips and commits in one kernel a strip (its merge phase)";
      } else {
        from = "not in these reports (gpu-grid's kernel case, or gpu-border's counters)";
      }
    } else if (q == "copies_share_of_end_to_end" && kernel && e2e) {
      // Not the copies alone (those are NVTX ranges of `repix profile` under Nsight Systems): what the
      // end-to-end time adds to the kernel's, the copies and their host side, as the seminar's 50 %.
      ours = 100 * (e2e->median_ms - kernel->median_ms) / e2e->median_ms;
      from = "(" + gpu + " end to end - kernel) / end to end: the copies with their host side";
    } else if (q == "four_techniques_times") {
      from = "the kernel column of the variants below";
    } else {
      from = k ? "not measured in these reports" : "no natural 8-bit " + field_or(row, "shape", std::string("?")) +
                                                   " 4-connectivity input in these reports";
    }
    const std::string unit = field_or(row, "unit", std::string());
    md << "| " << q << " (" << field_or(row, "shape", std::string()) << ", " << unit << ") | "
       << cell("%.4g", seminar) << " | " << cell("%.4g", ours) << " | " << from << " |\n";
    figures.push_back({{"quantity", q}, {"unit", unit}, {"seminar", seminar}, {"ours", ours}, {"ours_from", from}});
  }

  // ---- every variant on every input ----
  json variants = json::array();
  md << "\n## Every variant on every input\n\nfps: frames of that size per second; vs omp: omp end to end over the "
        "variant (kernel scope for GPU variants); steps: the CUDA-event (GPU: of the last timed kernel run) or "
        "host-clock (CPU: of the verifying run) phase times in ms and their share of the kernel.\n";
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    md << "\n### " << inputs[k].label() << "\n\n"
       << "| variant | kernel ms | Gpx/s | fps | end to end ms | fps | vs omp | build ms | merges ms | flatten ms |\n"
       << "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
    const report::Result* omp = get(k, "omp", "end-to-end");
    for (const std::string& id : order) {
      const report::Result* kernel = get(k, id, "kernel");
      const report::Result* e2e = get(k, id, "end-to-end");
      if (!kernel && !e2e) continue;
      const report::Result* timed = kernel ? kernel : e2e;  // CPU variants: end to end only
      const double px = static_cast<double>(inputs[k].info->elements);
      // A peer reports no steps (its phases are not ours to time): "-", not 0.
      auto share = [&](const char* field) -> std::string {
        if (!timed->extra.contains(field)) return "-";
        const double ms = field_or(timed->extra, field, 0.0);
        return fmt("%.3g", ms) + " (" + fmt("%.0f %%", 100 * ms / timed->median_ms) + ")";
      };
      auto step = [&](const char* field) { return timed->extra.contains(field) ? timed->extra[field] : json(); };
      const json vs_omp = omp ? json(omp->median_ms / timed->median_ms) : json();
      md << "| " << id << " | " << (kernel ? fmt("%.4g", kernel->median_ms) : "-") << " | "
         << fmt("%.3g", px / seconds(timed) / 1e9) << " | " << (kernel ? fmt("%.4g", 1 / seconds(kernel)) : "-")
         << " | " << (e2e ? fmt("%.4g", e2e->median_ms) : "-") << " | " << (e2e ? fmt("%.4g", 1 / seconds(e2e)) : "-")
         << " | " << cell("%.3gx", vs_omp) << " | " << share("build_ms") << " | " << share("merge_ms") << " | "
         << share("canonical_ms") << " |\n";
      variants.push_back({{"dataset", inputs[k].info->spec},
                          {"connectivity", inputs[k].connectivity},
                          {"variant", id},
                          {"kernel_ms", kernel ? json(kernel->median_ms) : json()},
                          {"end_to_end_ms", e2e ? json(e2e->median_ms) : json()},
                          {"gpx_per_s", px / seconds(timed) / 1e9},
                          {"speedup_over_omp", vs_omp},
                          {"build_ms", step("build_ms")},
                          {"merge_ms", step("merge_ms")},
                          {"flatten_ms", step("canonical_ms")},
                          {"verified", timed->verified}});
    }
  }
  json j = meta_json("maxtree-seminar", paper, meta);
  j["reports"] = json::array();
  for (const report::Report& r : reports) j["reports"].push_back(r.command);
  j["figures"] = figures;
  j["variants"] = variants;
  write_outputs(out_dir, "maxtree-seminar", md.str(), j);
  return md.str();
}

}  // namespace repix::tables
