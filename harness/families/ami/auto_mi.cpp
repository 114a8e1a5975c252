// The `auto-mi` family's harness knowledge (the feature stage of issue 13 alone; see
// harness/family_of.hpp for the generic part): one label image per dataset (uint8, or uint16
// with labels 0..256); the reference is seq; every variant's A_x, A_y and per-lag NMIs must agree
// with it within max(1e-9 |v|, 1e-12); throughput is pairs counted per second (both directions:
// h w (w-1)/2 + w h (h-1)/2 pairs), reported in Gpairs/s through items().
// `repix run auto-mi` writes `direction,ami` CSV and optionally the per-lag NMIs as JSON.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "ami/auto_mi/auto_mi.hpp"
#include "ami/auto_mi/nmi_core.hpp"
#include "core/atomic_file.hpp"
#include "core/gpu/first_where.hpp"
#include "datasets/datasets.hpp"
#include "datasets/io.hpp"
#include "harness/families/ami/auto_mi_distributed.hpp"
#include "harness/families/ami/shared.hpp"
#include "harness/family_of.hpp"
#include "harness/json_text.hpp"

namespace repix::family {

namespace {

namespace am = ami::auto_mi;

using ami_shared::close_enough;

// The variants that read each option (options::Spec::variants: a row or a run record lists only
// its variant's).
//
// --threads: omp's lags in parallel (seq and the GPU variants run no OpenMP loop).
const std::vector<std::string> kThreadsReaders = {"omp"};
// --flush-level: the counters in shared memory, flushed to global memory at that level: the
// shared-histogram kernels (shared_hist.cuh: gpu-shared-hist, gpu-shared-warp-agg, gpu-run-merge,
// and the uint16 path of the epoch plans) and the epoch kernels (epoch_hist.cuh: gpu-opt,
// gpu-epoch-pipelined, gpu-epoch-runs); multi-device runs gpu-opt on every GPU. gpu-naive and
// gpu-global-hist count in global memory.
const std::vector<std::string> kFlushLevelReaders = {"gpu-shared-hist",     "gpu-shared-warp-agg", "gpu-run-merge",
                                                     "gpu-epoch-pipelined", "gpu-epoch-runs",      "gpu-opt",
                                                     "multi-device"};
// --gpus: multi-device's lag parts.
const std::vector<std::string> kGpusReaders = {"multi-device"};
// --block: gpu-naive's launch alone.
const std::vector<std::string> kBlockReaders = {"gpu-naive"};

class AutoMiFamily final : public FamilyOf<am::Variant> {
 public:
  std::string name() const override { return "auto-mi"; }
  std::vector<std::string> suite_datasets(const std::string& suite) const override {
    if (suite == "quick")  // odd shapes, few and many levels, a smooth image
      return {"uniform:37x23:levels=3:seed=1", "uniform:64x64:levels=256:seed=2", "noise-mask:48x80:sigma=2:seed=3"};
    // The tour: seq takes 3.2 s a run at 1024^2 (gpu-naive 1.2 s), an eighth of it at 512^2.
    if (suite == "default") return {"uniform:512x512:levels=256:seed=1", "noise-mask:512x384:sigma=4:seed=2"};
    if (suite == "ami-targets")  // the 8192^2 uint8, 256 levels: i.i.d. and smooth
      return {"uniform:8192x8192:levels=256:seed=1", "noise-mask:8192x8192:sigma=4:seed=2"};
    return {};
  }

 protected:
  const std::vector<Variant>& registry() const override { return am::variants(); }
  const std::vector<Option>& option_table() const override {
    static const std::vector<Option> t = [] {
      const unsigned all = options::kRun | options::kProfile | options::kBench;
      options::Spec level = options::read_only_by(
          kFlushLevelReaders,
          options::integer("flush-level", "N",
                           "the variants counting in shared memory (gpu-shared-hist to gpu-opt, multi-device): 16-bit "
                           "counter level moved to global memory (0: the safe maximum; tests force 1)",
                           "0", all));
      level.max = am::kMaxFlushLevel;
      options::Spec block = options::read_only_by(
          kBlockReaders, options::integer("block", "N", "gpu-naive: threads per 1-D block (0: 128)", "0", all));
      block.max = 1024;
      options::Spec threads = options::read_only_by(
          kThreadsReaders, options::threads("threads", "CPU threads of omp (0: OpenMP's default)", "0", all));
      options::Spec gpus = options::read_only_by(
          kGpusReaders, options::integer("gpus", "N", "multi-device: GPUs used (0: every visible GPU)", "0", all));
      return std::vector<Option>{options::bind_int(&Options::threads, threads),
                                 options::bind_int(&Options::flush_level, level),
                                 options::bind_int(&Options::gpus, gpus), options::bind_int(&Options::block, block)};
    }();
    return t;
  }
  std::string reference_id() const override { return "seq"; }
  // seq counts about 1e9 pairs/s on one core: 8192^2 (5.5e11 pairs) would take ~10 minutes, 1024^2
  // 3.2 s. Above kSeqReferencePairs the reference is omp, which sums the same per-lag NMIs in seq's
  // order and equals seq bit for bit (AutoMiCpuVariant tests, 1 and 3 threads).
  std::string reference_for(const Shape& s, const Options&) const override {
    return am::total_pairs(s.ny, s.nx) > kSeqReferencePairs ? "omp" : "seq";
  }
  static constexpr std::int64_t kSeqReferencePairs = std::int64_t(1) << 28;  // ~0.3 s of seq
  std::string unit() const override { return "Gpairs/s"; }
  double items(const Inputs& in) const override {
    const Shape& s = in.at(0).shape();
    return static_cast<double>(am::total_pairs(s.ny, s.nx));
  }
  void check_bench_dataset(const std::string& spec) const override {
    const datasets::Spec s = datasets::Spec::parse(spec);
    if (s.kind == "file") return;  // checked when read (check_labels)
    const DType dt = datasets::spec_dtype(s);
    if (dt == DType::f32) throw Error("auto-mi takes uint8 or uint16 label images; " + spec + " is float32");
    if (datasets::spec_shape(s).ndim != 2) throw Error("auto-mi takes 2-D label images; " + spec + " is not 2-D");
  }

  std::vector<report::DatasetInfo> describe(const std::string& spec, const Inputs& in, const Result&) const override {
    return {bench::describe_dataset(spec, in.at(0))};
  }
  Result run_variant(const Variant& v, const Inputs& in, const Options& opt) const override { return v.run(in.at(0), opt); }
  Stats stats_of(const Result& r) const override { return r.stats; }
  nlohmann::json stats_json(const Stats& s) const override {
    return {{"pairs", s.pairs}, {"lags", s.lags}, {"batches", s.batches}, {"hot_flushes", s.hot_flushes}};
  }
  Verdict check(const Variant&, const Inputs&, const Result& ref, const Result& got, const std::string& what) const override {
    double max_abs = 0, max_rel = 0;
    std::string first;
    auto compare = [&](const char* name, double g, double w) {
      const double d = std::fabs(g - w);
      max_abs = std::max(max_abs, d);
      if (w != 0) max_rel = std::max(max_rel, d / std::fabs(w));
      if (!close_enough(g, w) && first.empty()) {
        std::ostringstream o;
        o.precision(17);
        o << name << ": got " << g << ", want " << w;
        first = o.str();
      }
    };
    if (got.nmi_x.size() != ref.nmi_x.size() || got.nmi_y.size() != ref.nmi_y.size()) {
      const std::string why = "MISMATCH vs seq: " + std::to_string(got.nmi_x.size()) + "+" +
                              std::to_string(got.nmi_y.size()) + " lags instead of " +
                              std::to_string(ref.nmi_x.size()) + "+" + std::to_string(ref.nmi_y.size());
      return {false, what.empty() ? why : what + ": " + why};
    }
    compare("A_x", got.horizontal, ref.horizontal);
    compare("A_y", got.vertical, ref.vertical);
    for (std::size_t i = 0; i < ref.nmi_x.size(); ++i)
      compare(("horizontal lag " + std::to_string(i + 1)).c_str(), got.nmi_x[i], ref.nmi_x[i]);
    for (std::size_t i = 0; i < ref.nmi_y.size(); ++i)
      compare(("vertical lag " + std::to_string(i + 1)).c_str(), got.nmi_y[i], ref.nmi_y[i]);
    const nlohmann::json errors = {{"max_abs", max_abs}, {"max_rel", max_rel}};
    if (first.empty())
      return {true, "within max(1e-9|v|, 1e-12) of seq (A_x, A_y and " + std::to_string(ref.stats.lags) + " lags)", errors};
    const std::string why = "MISMATCH vs seq: " + first;
    return {false, what.empty() ? why : what + ": " + why, errors};
  }
  nlohmann::json extra(const Variant& v, const std::string&, const Stats& s, const Options& opt) const override {
    nlohmann::json j = stats_json(s);
    if (v.gpu) j["flush_level"] = opt.flush_level > 0 ? opt.flush_level : static_cast<int>(am::kMaxFlushLevel);
    if (v.id == "gpu-naive") j["block"] = opt.block > 0 ? opt.block : am::kNaiveThreads;
    return j;
  }
  void kernel_extra(nlohmann::json& extra, const Result&, const Plan& plan, const Options&) const override {
    const nlohmann::json timed = stats_json(plan.stats());  // named: items() of a temporary would dangle
    for (const auto& [k, value] : timed.items()) extra[k] = value;
    // Issue 13's measured bound, beside the variant's own rate: the plan is discarded after this
    // (the bench took its result already), so replaying on its buffers costs nothing.
    if (const auto* source = dynamic_cast<const am::PairsBoundSource*>(&plan)) {
      const double bound = const_cast<am::PairsBoundSource*>(source)->measure_pairs_bound(nullptr);
      if (bound > 0) extra["pairs_bound_gpairs_per_s"] = bound / 1e9;
    }
  }
  bool supports_with_io() const override { return true; }
  // The Python peers count a lag per library call: about 10 ns a pair for NumPy and 50-200 for
  // scikit-learn, so they run up to kPeerPairs pairs (256^2: 1.7e7, seconds) and are left out
  // above unless named (1024^2 would take minutes to an hour).
  static constexpr std::int64_t kPeerPairs = std::int64_t(1) << 25;
  std::string peer_slow_reason(const peers::Peer&, const std::string& spec, const Options&) const override {
    const Shape s = datasets::spec_shape(datasets::spec_of(spec));
    const std::int64_t pairs = am::total_pairs(s.ny, s.nx);
    if (pairs <= kPeerPairs) return "";
    return std::to_string(pairs) + " pairs, above the " + std::to_string(kPeerPairs) + " a Python peer runs in seconds";
  }
  // The Python peers (baselines/peers.py: NumPy bincount, scikit-learn per lag) give A_x and A_y
  // as float32 (hi, lo) pairs, A = hi + lo in double: their sums only, within the family's tolerance.
  Verdict check_peer(const peers::Peer&, const Inputs&, const Result& ref, HostImage output) const override {
    if (output.dtype() != DType::f32 || output.size() != 4)
      return {false, "the peer wrote " + std::to_string(output.size()) + " " + dtype_name(output.dtype()) +
                         " values; expected float32 [hi_x, lo_x, hi_y, lo_y]"};
    const float* v = output.data<float>();
    const double ax = double(v[0]) + double(v[1]), ay = double(v[2]) + double(v[3]);
    const nlohmann::json errors = {{"abs_x", std::fabs(ax - ref.horizontal)}, {"abs_y", std::fabs(ay - ref.vertical)}};
    if (close_enough(ax, ref.horizontal) && close_enough(ay, ref.vertical))
      return {true, "A_x and A_y within max(1e-9|v|, 1e-12) of seq", errors};
    std::ostringstream o;
    o.precision(17);
    o << "MISMATCH vs seq: A_x " << ax << " (seq " << ref.horizontal << "), A_y " << ay << " (seq " << ref.vertical << ")";
    return {false, o.str(), errors};
  }

  RunDeclaration run_declaration() const override {
    return {{"input"},
            {{{"output", "", {".csv"}, "CSV (direction,ami)", false},
              false,
              [](const Result& f, const Inputs&, const std::string& path) { am::write_csv(f, path); },
              // float64 (horizontal, vertical)
              [](Result& f, const Shape&) { return array_of("output", std::vector<double>{f.horizontal, f.vertical}, {2}); }}},
            "--variant V --input LABELS --output F.csv [--json F.json]",
            "auto-mutual-information of a label image (uint8, or uint16 0..256) as direction,ami CSV",
            "gpu-opt",
            "omp"};
  }
  void check_run_inputs(const Inputs& in, const Options&) const override { am::check_labels(in.at(0)); }
  bool has_distributed_run() const override { return true; }
  std::unique_ptr<distributed::Job> distributed_job(const cli::Args& a, const Options& opt) const override {
    return auto_mi_distributed::job(a, opt, declared_run_variant(a));
  }
  // Its GPU variants' end-to-end run is their plan's after these checks.
  bool keeps_plan_for_host_inputs() const override { return true; }
  void check_device_inputs(const std::vector<DeviceImage>& in, const Options&, cudaStream_t s) const override {
    const DeviceImage& labels = in.at(0);
    am::check_label_description({labels.dtype, labels.shape});
    if (labels.dtype != DType::u16) return;
    std::uint16_t label = 0;
    const std::int64_t n = labels.shape.size();
    const std::int64_t i = gpu::first_above(static_cast<const std::uint16_t*>(labels.data), n, am::kMaxLabel, &label, s);
    if (i < n) am::throw_label_above(labels.shape, i, label);
  }
  nlohmann::json run_record_extra(const Variant&, const Result& f, const Inputs&, const Options&) const override {
    return {{"horizontal", f.horizontal}, {"vertical", f.vertical}, {"nmi_horizontal", f.nmi_x},
            {"nmi_vertical", f.nmi_y}, {"stats", stats_json(f.stats)}};
  }
};

}  // namespace

std::unique_ptr<Family> auto_mi_family() { return std::make_unique<AutoMiFamily>(); }

}  // namespace repix::family
