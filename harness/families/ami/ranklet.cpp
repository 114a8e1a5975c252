// The ranklet family's harness knowledge (see harness/family_of.hpp): the ranklet stage of issue
// 13's AMI descriptor on one uint8 2-D image per dataset; the reference is seq; every variant
// must give its float32 planes bit for bit (R = 2U / (N^2/2) is exact, so there is nothing to
// tolerate). `repix run ranklet` writes the planes as float32 (windows, 3, H, W).
//
// The reference at large sizes: seq sorts every window (about 10 ns a window element on one core:
// 3.6 s at 256^2 with the default windows, tens of minutes at 8192^2), so above
// kSeqReferenceElements sorted elements the reference is computed by omp-hist (the same 2U by
// counting, ~50x faster on one core, rows over every core), which the tests prove equal to seq bit
// for bit (RankletCpuVariant.*/omp_hist).
#include "ami/ranklet/ranklet.hpp"
#include "core/atomic_file.hpp"
#include "datasets/datasets.hpp"
#include "harness/families/ami/ranklet_distributed.hpp"
#include "harness/families/ami/shared.hpp"
#include "harness/family_of.hpp"
#include "harness/json_text.hpp"

#include <cstring>

namespace repix::family {

namespace {

namespace rk = ami::ranklet;

// The variants that read each option (options::Spec::variants: a row or a run record lists only
// its variant's). --windows is every variant's. --threads: the OpenMP rows (run_rows with
// opt.threads; seq and seq-hist pass one thread). --block: gpu-naive's launch alone (gpu-opt's
// blocks are fixed by its kernels).
const std::vector<std::string> kThreadsReaders = {"omp", "omp-hist"};
const std::vector<std::string> kBlockReaders = {"gpu-naive"};

class RankletFamily final : public FamilyOf<rk::Variant> {
 public:
  std::string name() const override { return "ranklet"; }
  std::vector<std::string> suite_datasets(const std::string& suite) const override {
    if (suite == "quick")
      return {"uniform:96x80:levels=256:seed=1", "noise-mask:61x37:sigma=3:seed=2", "uniform:7x5:levels=3:seed=3"};
    // The tour: seq sorts ~10 ns a window element, 0.9 s a run at 128^2 with the default windows.
    if (suite == "default") return {"uniform:128x128:levels=256:seed=1", "noise-mask:96x80:sigma=4:seed=2"};
    if (suite == "ami-targets") return {"uniform:8192x8192:levels=256:seed=1", "noise-mask:8192x8192:sigma=4:seed=2"};
    return {};
  }

 protected:
  const std::vector<Variant>& registry() const override { return rk::variants(); }
  const std::vector<Option>& option_table() const override {
    static const std::vector<Option> t = [] {
      return std::vector<Option>{
          ami_shared::windows_option<Options>(),
          options::bind_int(
              &Options::threads,
              options::read_only_by(kThreadsReaders,
                                    options::threads("threads", "omp, omp-hist: OpenMP threads (0: OpenMP's default)", "0"))),
          [] {
            options::Spec b = options::read_only_by(
                kBlockReaders, options::integer("block", "N", "gpu-naive: thread block edge (N x N threads)", "8",
                                                options::kRun | options::kProfile | options::kBench));
            b.min = 1;
            b.max = 32;
            return options::bind_int(&Options::block, b);
          }(),
      };
    }();
    return t;
  }
  std::string reference_id() const override { return "seq"; }
  std::string reference_for(const Shape& s, const Options& o) const override {
    return ami_shared::sorted_window_elements(s, o.windows) > ami_shared::kSeqReferenceElements ? "omp-hist" : "seq";
  }
  std::string unit() const override { return "GPx/s"; }

  // The verifying run's planes: 12 float32 per pixel for the four default windows.
  std::uint64_t output_bytes(std::int64_t elements, DType) const override {
    return static_cast<std::uint64_t>(elements) * rk::kOrientations * 4 * sizeof(float);
  }
  std::vector<report::DatasetInfo> describe(const std::string& spec, const Inputs& in, const Result&) const override {
    return {bench::describe_dataset(spec, in.at(0))};
  }
  void check_bench_dataset(const std::string& spec) const override {
    const datasets::Spec s = datasets::Spec::parse(spec);
    if (s.kind != "file" && datasets::spec_dtype(s) != DType::u8)
      throw Error("ranklet datasets must be uint8 2-D images; '" + spec + "' is " + dtype_name(datasets::spec_dtype(s)));
  }
  Result run_variant(const Variant& v, const Inputs& in, const Options& opt) const override { return v.run(in.at(0), opt); }
  Stats stats_of(const Result& r) const override { return r.stats; }
  nlohmann::json stats_json(const Stats& s) const override {
    return s.kernel_ms < 0 ? nlohmann::json::object() : nlohmann::json{{"kernel_ms", s.kernel_ms}};
  }
  Verdict check(const Variant&, const Inputs&, const Result& ref, const Result& got, const std::string& what) const override {
    const std::string prefix = what.empty() ? "" : what + ": ";
    if (got.windows != ref.windows || got.ranklet.shape() != ref.ranklet.shape())
      return {false, prefix + "windows " + rk::windows_text(got.windows) + " shape " + got.ranklet.shape().str() +
                         ", the reference has " + rk::windows_text(ref.windows) + " " + ref.ranklet.shape().str()};
    const float* a = got.ranklet.data<float>();
    const float* b = ref.ranklet.data<float>();
    const std::int64_t n = ref.ranklet.size();
    std::int64_t off = 0, first = -1;
    for (std::int64_t i = 0; i < n; ++i)
      if (std::memcmp(a + i, b + i, sizeof(float)) != 0) {
        if (first < 0) first = i;
        ++off;
      }
    if (off == 0) return {true, prefix + "bit-for-bit equal to seq (" + std::to_string(n) + " coefficients)"};
    const Shape& s = ref.ranklet.shape();
    const std::int64_t p = first / s.slice_size(), yx = first % s.slice_size();
    return {false, prefix + std::to_string(off) + " coefficients differ from seq; first at window " +
                       std::to_string(ref.windows[p / rk::kOrientations]) + " orientation " + "HVD"[p % rk::kOrientations] +
                       " (x=" + std::to_string(yx % s.nx) + ", y=" + std::to_string(yx / s.nx) + "): " +
                       std::to_string(a[first]) + " vs " + std::to_string(b[first])};
  }
  // Items: input pixels, the whole stage (every window and orientation asked) per pixel, as the
  // thesis times it; `extra.windows` says which windows.
  double items(const Inputs& in) const override { return static_cast<double>(in.at(0).size()); }
  nlohmann::json extra(const Variant&, const std::string&, const Stats& verifying, const Options& o) const override {
    nlohmann::json j = stats_json(verifying);
    j["windows"] = rk::windows_text(o.windows);
    j["block"] = o.block;
    return j;
  }

  RunDeclaration run_declaration() const override {
    return {{"input"},
            {{{"output", "", {".npy"}, "float32 .npy", true},
              false,
              [](const Result& r, const Inputs&, const std::string& path) {
                const Shape& s = r.ranklet.shape();
                datasets::write_npy_float32(r.ranklet.data<float>(),
                                            {static_cast<std::int64_t>(r.windows.size()), rk::kOrientations, s.ny, s.nx},
                                            path);
              },
              // float32 (windows, orientation H/V/D, rows, columns)
              [](Result& r, const Shape&) {
                const Shape& s = r.ranklet.shape();
                std::vector<std::int64_t> dims{static_cast<std::int64_t>(r.windows.size()), rk::kOrientations, s.ny, s.nx};
                return array_of("output", std::move(r.ranklet), std::move(dims));
              }}},
            "--variant V --input IMG --output R.npy [--json OUT.json]",
            "float32 ranklet coefficients, shape (windows, 3, H, W), orientations H, V, D (uint8 2-D input)",
            "gpu-opt",
            "seq-hist"};
  }
  void check_run_inputs(const Inputs& in, const Options&) const override { rk::check_input(in.at(0)); }
  bool has_distributed_run() const override { return true; }
  std::unique_ptr<distributed::Job> distributed_job(const cli::Args& a, const Options& opt) const override {
    return ranklet_distributed::job(a, opt, declared_run_variant(a));
  }
  // Its GPU variants' end-to-end run is their plan's after these checks.
  bool keeps_plan_for_host_inputs() const override { return true; }
  void check_device_inputs(const std::vector<DeviceImage>& in, const Options&, cudaStream_t) const override {
    rk::check_input(InputDesc{in.at(0).dtype, in.at(0).shape});
  }
  nlohmann::json run_record_extra(const Variant&, const Result& r, const Inputs& in, const Options&) const override {
    const Shape& s = in.at(0).shape();
    return {{"windows", rk::windows_text(r.windows)},
            {"orientations", "H,V,D"},
            {"output_shape", {r.windows.size(), rk::kOrientations, s.ny, s.nx}},
            {"stats", stats_json(r.stats)}};
  }
};

}  // namespace

std::unique_ptr<Family> ranklet_family() { return std::make_unique<RankletFamily>(); }

}  // namespace repix::family
