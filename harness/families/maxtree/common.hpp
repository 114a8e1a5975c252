// What the two max-tree families share (maxtree.cpp: the parent image; area_opening.cpp: the
// filtered image): the bench suites, the options, the reference (seq), exactness, the stats JSON
// and the input checks. Both run one input image; each adds its output, its check and its command.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "datasets/datasets.hpp"
#include "harness/family_of.hpp"
#include "maxtree/maxtree.hpp"

namespace repix::family::maxtree_common {

// The datasets of both families' suites: quick (small, odd, plateau-heavy, 8 and 16 bits), default
// (the tour: the seminar's 1920x1080 frame and 16-bit noise, the worst case), maxtree-targets (the seminar's 6000x4000 natural image in 8 and
// 16 bits (x 257, as Blin et al.'s benchmark), its 1920x1080 frame, and 16-bit uniform noise: the
// worst case of every merge-based algorithm, nearly every pixel a node of its own).
inline std::vector<std::string> suite(const std::string& name) {
  if (name == "quick")
    return {"texture:97x61:name=camera", "uniform:64x33:levels=4:dtype=uint8:seed=1",
            "checker:45x31:period=1:dtype=uint8", "uniform:50x29:levels=65536:dtype=uint16:seed=2",
            "uniform:31x77:levels=5:dtype=uint16:seed=3", "const:17x9:value=7:dtype=uint8"};
  if (name == "default")
    return {"texture:1920x1080:name=camera", "uniform:1920x1080:levels=65536:dtype=uint16:seed=2"};
  if (name == "maxtree-targets")
    return {"texture:6000x4000:name=camera", "texture:6000x4000:name=camera:dtype=uint16",
            "texture:1920x1080:name=camera", "uniform:6000x4000:levels=65536:dtype=uint16:seed=1"};
  return {};
}

inline nlohmann::json stats_json(const maxtree::Stats& s) {
  nlohmann::json j = {{"tiles", s.tiles},          {"build_ms", s.build_ms},   {"merge_ms", s.merge_ms},
                      {"canonical_ms", s.canonical_ms}, {"filter_ms", s.filter_ms}};
  if (s.border_pixels > 0) {  // gpu-border only
    j["border_pixels"] = s.border_pixels;
    j["border_nodes"] = s.border_nodes;
    j["border_fallback_strips"] = s.border_fallback_strips;
  }
  return j;
}

// The first element where two outputs differ, as " at (x, y): got G, want W".
template <class Get>
std::string first_difference(const Shape& shape, Get&& got_want) {
  for (std::int64_t i = 0; i < shape.size(); ++i) {
    const auto gw = got_want(i);
    if (gw.first != gw.second)
      return " at (" + std::to_string(i % shape.nx) + ", " + std::to_string(i / shape.nx) + "): got " +
             std::to_string(gw.first) + ", want " + std::to_string(gw.second);
  }
  return "";
}

// The part both families' adapters share, over their Variant type.
template <class V>
class Base : public FamilyOf<V> {
 public:
  using Family_ = FamilyOf<V>;
  using typename Family_::Inputs;
  using typename Family_::Option;
  using typename Family_::Options;
  using typename Family_::Result;
  using typename Family_::Stats;
  using typename Family_::Variant;

  std::vector<std::string> suite_datasets(const std::string& s) const override { return suite(s); }

 protected:
  // --connectivity, --threads, --tile: the tree's options; the area opening adds --area. The
  // connectivity (and the area) is every variant's. --threads and --tile are omp's alone (both
  // families' omp: its tiles, merges and canonicalisation, then, in the area opening, the parallel
  // filter): seq and seq-flood run on one thread, filter included, and the GPU variants read
  // neither (the tree on the device, and the filter there too).
  static inline const std::vector<std::string> kOmpOnly = {"omp"};
  static std::vector<Option> tree_options() {
    using options::bind_int;
    using options::read_only_by;
    const unsigned all = options::kRun | options::kProfile | options::kBench;
    return {bind_int(&Options::connectivity, options::choice("connectivity", {"4", "8"}, "neighbourhood: 4 or 8", "4", all)),
            bind_int(&Options::threads,
                     read_only_by(kOmpOnly, options::threads("threads", "omp: OpenMP threads (0: OpenMP's default)", "0", all))),
            bind_int(&Options::tile,
                     read_only_by(kOmpOnly,
                                  options::integer("tile", "N", "omp: tile edge in pixels (0: automatic, 256)", "0", all)))};
  }
  std::string reference_id() const override { return "seq"; }
  // Above 2^22 pixels the reference is omp, whose canonical trees (and so filters) the tests prove
  // equal to seq's on every shape, tile and thread count (MaxtreeVariant.*, AreaOpeningVariant.*):
  // seq takes 50-150 ns a pixel on one core (0.1-0.3 s at 1920x1080, seconds at 6000x4000).
  std::string reference_for(const Shape& s, const typename Family_::Options&) const override {
    return s.size() > (std::int64_t(1) << 22) ? "omp" : "seq";
  }
  std::string unit() const override { return "GPx/s"; }
  std::vector<report::DatasetInfo> describe(const std::string& spec, const Inputs& in, const Result&) const override {
    return {bench::describe_dataset(spec, in.at(0))};
  }
  Result run_variant(const Variant& v, const Inputs& in, const Options& opt) const override { return v.run(in.at(0), opt); }
  Stats stats_of(const Result& r) const override { return r.stats; }
  nlohmann::json stats_json(const Stats& s) const override { return maxtree_common::stats_json(s); }
  double bytes_per_item(const Inputs& in) const override { return static_cast<double>(dtype_size(in.at(0).dtype())); }
  bool supports_with_io() const override { return true; }
  nlohmann::json extra(const Variant&, const std::string&, const Stats& verifying, const Options& o) const override {
    nlohmann::json j = maxtree_common::stats_json(verifying);
    j["connectivity"] = o.connectivity;
    return j;
  }
  // A kernel case's step times from its last timed run (the plan's stats after the samples), not
  // from the verifying run that extra() sees, which is the variant's first on the input: cold, its
  // steps summed to 112-126 % of the kernel median in the seminar tables measured on the H100.
  void kernel_extra(nlohmann::json& extra, const Result& timed, const typename Family_::Plan&,
                    const Options&) const override {
    const nlohmann::json steps = maxtree_common::stats_json(timed.stats);
    for (const auto& [field, value] : steps.items()) extra[field] = value;
  }
  // scikit-image's peers (baselines/peers.py: max_tree, area_opening), whose rules follow.
  static bool is_skimage(const peers::Peer& p) { return p.id.rfind("skimage-", 0) == 0; }
  // scikit-image's max_tree, and so its area_opening, builds wrong trees for images with a side
  // <= 2; those inputs leave it out. Higra's are right there.
  static std::string small_side_reason(const peers::Peer& p, const std::string& spec) {
    const Shape s = datasets::spec_shape(datasets::spec_of(spec));
    if (is_skimage(p) && (s.nx <= 2 || s.ny <= 2))
      return "scikit-image's max_tree builds wrong trees for images with a side <= 2";
    return "";
  }
  // scikit-image's max_tree took 18.1 s a call at 1920x1080 (~9 us a pixel, on the GPU
  // host's Xeon): above 2^20 pixels it runs only when named.
  static constexpr std::int64_t kSkimagePixels = std::int64_t(1) << 20;
  std::string peer_slow_reason(const peers::Peer& p, const std::string& spec, const Options&) const override {
    const Shape s = datasets::spec_shape(datasets::spec_of(spec));
    if (!is_skimage(p) || s.size() <= kSkimagePixels) return "";
    return std::to_string(s.size()) + " pixels: scikit-image's max_tree takes ~9 us a pixel (18 s at 1920x1080)";
  }
  nlohmann::json peer_params(const Options& o) const override { return {{"connectivity", o.connectivity}}; }
  nlohmann::json peer_extra(const Options& o) const override { return {{"connectivity", o.connectivity}}; }

  // A run's input, checked before any work; the --json record's part common to both families.
  void check_run_inputs(const Inputs& in, const Options& opt) const override { maxtree::check_input(in.at(0), opt); }
  static nlohmann::json run_record_common(const Options& opt, const maxtree::Stats& s) {
    return {{"connectivity", opt.connectivity}, {"stats", maxtree_common::stats_json(s)}};
  }
};

}  // namespace repix::family::maxtree_common
