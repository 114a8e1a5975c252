// The `ami` family's harness knowledge (issue 13's whole descriptor; see harness/family_of.hpp):
// one uint8 2-D image per dataset; the reference is seq (ranklet seq -> auto-mi seq); every
// variant's 24 features (6 per window) must agree with it within max(1e-9 |v|, 1e-12).
// Throughput: input pixels per second (GPx/s), the whole descriptor (every window asked) per
// pixel. `repix run ami` writes `window,orientation,direction,ami` CSV.
//
// The reference at large sizes: seq sorts every window and counts every lag on one core (14 s at
// 512^2, hours at 8192^2), so above ami_shared::kSeqReferenceElements sorted window elements (as
// ranklet's) the reference is omp-hist (ranklet omp-hist is
// bit-identical to ranklet seq, auto-mi omp to auto-mi seq: both stages' tests), whose features
// equal seq's bit for bit (AmiVariant tests).
#include <chrono>
#include <cstdio>

#include "ami/ami.hpp"
#include "core/atomic_file.hpp"
#include "datasets/datasets.hpp"
#include "harness/families/ami/ami_distributed.hpp"
#include "harness/families/ami/shared.hpp"
#include "harness/family_of.hpp"
#include "harness/json_text.hpp"

namespace repix::family {

namespace {

// The variants that read each option (options::Spec::variants: a row or a run record lists only
// its variant's). --windows is every variant's.
//
// --threads: the host pipeline's OpenMP loops (pipeline.cpp): every plane's quantisation, and the
// omp stages of omp and omp-hist. Every pair runs that pipeline but the two whose stages both have
// device plans (gpu-naive and gpu-opt quantise on the GPU). seq's stages run on one thread, its
// quantisation on --threads.
const std::vector<std::string> kThreadsReaders = {"seq", "omp", "omp-hist", "multi-device"};
// --flush-level: auto-mi gpu-opt's, in the gpu-opt pair and on every GPU of multi-device's.
const std::vector<std::string> kFlushLevelReaders = {"gpu-opt", "multi-device"};
// --gpus: multi-device's feature stage.
const std::vector<std::string> kGpusReaders = {"multi-device"};

class AmiFamily final : public FamilyOf<ami::Variant> {
 public:
  std::string name() const override { return "ami"; }
  std::vector<std::string> suite_datasets(const std::string& suite) const override {
    if (suite == "quick")  // odd shapes, one smaller than the 32 window, a real texture
      return {"uniform:37x23:levels=256:seed=1", "uniform:7x5:levels=3:seed=2", "texture:61x45:name=camera"};
    // The tour: seq takes ~14 s a run at 512^2 (both stages, four windows), ~0.9 s at 128^2.
    if (suite == "default") return {"texture:128x128:name=brick", "uniform:96x96:levels=256:seed=1"};
    if (suite == "ami-targets")  // the stages' 8192^2 targets
      return {"uniform:8192x8192:levels=256:seed=1", "noise-mask:8192x8192:sigma=4:seed=2"};
    return {};
  }

 protected:
  const std::vector<Variant>& registry() const override { return ami::variants(); }
  const std::vector<Option>& option_table() const override {
    static const std::vector<Option> t = [] {
      const unsigned all = options::kRun | options::kProfile | options::kBench;
      options::Spec level = options::read_only_by(
          kFlushLevelReaders,
          options::integer("flush-level", "N",
                           "auto-mi gpu-opt: 16-bit counter level moved to global memory (0: the safe maximum)", "0", all));
      options::Spec threads = options::read_only_by(
          kThreadsReaders,
          options::threads("threads", "CPU threads of omp, omp-hist and the quantisation (0: OpenMP's default)", "0", all));
      options::Spec gpus = options::read_only_by(
          kGpusReaders, options::integer("gpus", "N", "multi-device: GPUs used (0: every visible GPU)", "0", all));
      return std::vector<Option>{ami_shared::windows_option<Options>(), options::bind_int(&Options::threads, threads),
                                 options::bind_int(&Options::flush_level, level), options::bind_int(&Options::gpus, gpus)};
    }();
    return t;
  }
  std::string reference_id() const override { return "seq"; }
  std::string reference_for(const Shape& s, const Options& o) const override {
    return ami_shared::sorted_window_elements(s, o.windows) > ami_shared::kSeqReferenceElements ? "omp-hist" : "seq";
  }
  std::string unit() const override { return "GPx/s"; }
  double items(const Inputs& in) const override { return static_cast<double>(in.at(0).size()); }
  void check_bench_dataset(const std::string& spec) const override {
    const datasets::Spec s = datasets::Spec::parse(spec);
    if (s.kind != "file" && datasets::spec_dtype(s) != DType::u8)
      throw Error("ami datasets must be uint8 2-D images; '" + spec + "' is " + dtype_name(datasets::spec_dtype(s)));
  }
  std::vector<report::DatasetInfo> describe(const std::string& spec, const Inputs& in, const Result&) const override {
    return {bench::describe_dataset(spec, in.at(0))};
  }
  Result run_variant(const Variant& v, const Inputs& in, const Options& opt) const override { return v.run(in.at(0), opt); }
  Stats stats_of(const Result& r) const override { return r.stats; }
  nlohmann::json stats_json(const Stats& s) const override {
    return {{"ranklet_ms", s.ranklet_ms}, {"quantise_ms", s.quantise_ms}, {"auto_mi_ms", s.auto_mi_ms}, {"pairs", s.pairs}};
  }
  Verdict check(const Variant&, const Inputs&, const Result& ref, const Result& got, const std::string& what) const override {
    const std::string prefix = what.empty() ? "" : what + ": ";
    if (got.windows != ref.windows || got.features.size() != ref.features.size())
      return {false, prefix + "MISMATCH: " + std::to_string(got.features.size()) + " features for windows " +
                         ami::ranklet::windows_text(got.windows) + ", the reference has " +
                         std::to_string(ref.features.size()) + " for " + ami::ranklet::windows_text(ref.windows)};
    double max_abs = 0, max_rel = 0;
    std::string first;
    for (std::size_t w = 0; w < ref.windows.size(); ++w)
      for (int o = 0; o < ami::kOrientations; ++o)
        for (int d = 0; d < 2; ++d) {
          const std::size_t i = ami::feature_index(w, o, d);
          const double g = got.features[i], want = ref.features[i], diff = std::fabs(g - want);
          max_abs = std::max(max_abs, diff);
          if (want != 0) max_rel = std::max(max_rel, diff / std::fabs(want));
          if (!ami_shared::close_enough(g, want) && first.empty()) {
            char buf[200];
            std::snprintf(buf, sizeof buf, "window %d %s %s: got %.17g, want %.17g", ref.windows[w],
                          ami::orientation_name(o), ami::direction_name(d), g, want);
            first = buf;
          }
        }
    const nlohmann::json errors = {{"max_abs", max_abs}, {"max_rel", max_rel}};
    if (first.empty())
      return {true, prefix + "within max(1e-9|v|, 1e-12) of the reference (" + std::to_string(ref.features.size()) +
                        " features)", errors};
    return {false, prefix + "MISMATCH: " + first, errors};
  }
  nlohmann::json extra(const Variant& v, const std::string&, const Stats& s, const Options& o) const override {
    nlohmann::json j = stats_json(s);
    j["windows"] = ami::ranklet::windows_text(o.windows);
    j["ranklet_variant"] = v.ranklet_id;
    j["auto_mi_variant"] = v.auto_mi_id;
    return j;
  }

  RunDeclaration run_declaration() const override {
    return {{"input"},
            {{{"output", "", {".csv"}, "CSV (window,orientation,direction,ami)", false},
              false,
              [](const Result& r, const Inputs&, const std::string& path) { ami::write_csv(r, path); },
              // float64 (window, orientation H/V/D, direction horizontal/vertical): the CSV's order
              [](Result& r, const Shape&) {
                const std::int64_t windows = static_cast<std::int64_t>(r.windows.size());
                return array_of("output", std::move(r.features), {windows, 3, 2});
              }}},
            "--variant V --input IMG --output F.csv [--json F.json]",
            "the ranklet + AMI descriptor of a uint8 2-D image (6 features per window) as window,orientation,direction,ami CSV",
            "gpu-opt",
            "omp-hist"};
  }
  void check_run_inputs(const Inputs& in, const Options& opt) const override { ami::check_input(in.at(0), opt); }
  bool has_distributed_run() const override { return true; }
  std::unique_ptr<distributed::Job> distributed_job(const cli::Args& a, const Options& opt) const override {
    return ami_distributed::job(a, opt, declared_run_variant(a));
  }
  // Its GPU variants' end-to-end run is their plan's after these checks.
  bool keeps_plan_for_host_inputs() const override { return true; }
  void check_device_inputs(const std::vector<DeviceImage>& in, const Options& opt, cudaStream_t) const override {
    ami::check_input(InputDesc{in.at(0).dtype, in.at(0).shape}, opt);
  }
  nlohmann::json run_record_extra(const Variant&, const Result& r, const Inputs&, const Options&) const override {
    return {{"windows", ami::ranklet::windows_text(r.windows)},
            {"features", r.features},
            {"order", "window, orientation H/V/D, direction horizontal/vertical"},
            {"stats", stats_json(r.stats)}};
  }
};

}  // namespace

std::unique_ptr<Family> ami_family() { return std::make_unique<AmiFamily>(); }

}  // namespace repix::family
