// The ECC family's harness knowledge (see harness/family_of.hpp for what the generic part does):
// one input image per dataset; the reference is seq; every output must equal it exactly; the
// bench times the kernel, end-to-end and with-io scopes in GVox/s (the input read once: dtype
// bytes per voxel); gpu-opt's kernel cases say whether its exact sort fallback ran.
// `repix run ecc` streams its input file through gpu-stream when an in-core GPU variant could not
// hold it, and writes the curve as CSV and/or JSON.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/gpu/first_where.hpp"
#include "datasets/datasets.hpp"
#include "ecc/ecc.hpp"
#include "harness/families/ecc/distributed.hpp"
#include "harness/family_of.hpp"
#include "harness/figures.hpp"
#include "harness/json_text.hpp"

namespace repix::family {

namespace {

std::string describe_mismatch(const ecc::Curve& got, const ecc::Curve& want) {
  std::ostringstream o;
  o << "MISMATCH vs seq: ";
  if (got.values.size() != want.values.size())
    o << got.values.size() << " values instead of " << want.values.size() << "; ";
  const std::size_t n = std::min(got.values.size(), want.values.size());
  for (std::size_t i = 0; i < n; ++i)
    if (got.values[i] != want.values[i] || got.ecc[i] != want.ecc[i]) {
      o << "first difference at index " << i << ": got (" << got.values[i] << ", " << got.ecc[i] << "), want ("
        << want.values[i] << ", " << want.ecc[i] << ")";
      break;
    }
  return o.str();
}

// True when an in-core GPU variant can hold the input plus its workspace (budgeted at 1.5x the
// input: the float paths keep a key or rank image beside it) in the GPU's free memory.
bool fits_on_gpu(DType dtype, const Shape& shape) {
  if (!gpu_available()) return true;  // the variant itself reports the missing GPU
  std::size_t free_b = 0, total_b = 0;
  REPIX_CUDA(cudaMemGetInfo(&free_b, &total_b));
  const double need = 2.5 * static_cast<double>(shape.size()) * dtype_size(dtype) + (64 << 20);
  return need < static_cast<double>(free_b);
}

// An end-to-end call's timeline (ecc::EndToEndTimeline, --timeline) as the bench's extra and the
// run's --json give it, with the two spans a reader wants first: the GPU's time after the last
// byte arrived (gpu_tail_us) and the host's after it saw the finish (host_curve_us).
nlohmann::json timeline_json(const ecc::EndToEndTimeline& t) {
  return {{"chunks", t.chunks},
          {"gpu_uploaded_us", t.gpu_uploaded_us},
          {"gpu_kernels_us", t.gpu_kernels_us},
          {"gpu_finished_us", t.gpu_finished_us},
          {"gpu_tail_us", t.gpu_finished_us - t.gpu_uploaded_us},
          {"host_issued_us", t.host_issued_us},
          {"host_woken_us", t.host_woken_us},
          {"host_returned_us", t.host_returned_us},
          {"host_curve_us", t.host_returned_us - t.host_woken_us},
          {"host_curve_work_us", t.host_curve_work_us}};
}

// gpu-opt's engine tuning (ecc::OptTuning): one option a field, read by the variants that run the
// engine. Every default is OptTuning's own, so a run that sets none is the measured default.
const std::vector<std::string> kEngineVariants = {"gpu-opt-static", "gpu-opt-fresh-rows", "gpu-opt", "gpu-opt-direct",
                                                  "gpu-opt-warp",   "gpu-opt-cluster", "gpu-opt-bins16",
                                                  "gpu-opt-hash-bins16", "gpu-opt-sampled16", "gpu-stream"};
// The dynamic schedule's split: gpu-opt-static shares its items out by fixed strides instead.
const std::vector<std::string> kDynamicVariants = {"gpu-opt-fresh-rows", "gpu-opt",        "gpu-opt-direct", "gpu-opt-warp",        "gpu-opt-cluster",
                                                   "gpu-opt-bins16", "gpu-opt-hash-bins16", "gpu-opt-sampled16", "gpu-stream"};

std::string read_by_text(const std::vector<std::string>& ids) {
  std::string s;
  for (std::size_t i = 0; i < ids.size(); ++i) s += (i ? ", " : "") + ids[i];
  return s;
}

// An integer field of OptTuning as option --`name` (`min`..`max`), for run, profile and bench.
FamilyOf<ecc::Variant>::Option tuning_option(int ecc::OptTuning::*field, std::string name, std::string placeholder,
                                             const std::string& help, long long min, long long max,
                                             const std::vector<std::string>& variants,
                                             std::vector<std::string> choices = {}) {
  const std::string full = "tunes gpu-opt (read by " + read_by_text(variants) + "): " + help;
  const std::string def = std::to_string(ecc::OptTuning{}.*field);
  const unsigned all = options::kRun | options::kProfile | options::kBench;
  options::Spec spec = choices.empty() ? options::integer(std::move(name), std::move(placeholder), full, def, all)
                                       : options::choice(std::move(name), std::move(choices), full, def, all);
  spec.min = min;
  spec.max = max;
  spec.variants = variants;
  return {std::move(spec), [field](ecc::Options& o, const std::string& v) { o.tuning.*field = std::stoi(v); },
          [field](const ecc::Options& o) { return nlohmann::json(o.tuning.*field); }};
}

std::vector<FamilyOf<ecc::Variant>::Option> tuning_options() {
  using T = ecc::OptTuning;
  constexpr long long most = T::kMaxItems;
  return {
      tuning_option(&T::min_chunk_2d, "min-chunk-2d", "N", "least rows a work item covers", 1, most, kEngineVariants),
      tuning_option(&T::min_chunk_3d, "min-chunk-3d", "N", "least planes a work item covers", 1, most, kEngineVariants),
      tuning_option(&T::items_2d, "items-2d", "N", "2D dynamic schedule: the tail's work items a warp slot", 1, most,
                    kDynamicVariants),
      tuning_option(&T::items_3d, "items-3d", "N", "3D dynamic schedule: the tail's work items a block slot", 1, most,
                    kDynamicVariants),
      tuning_option(&T::head_pct_2d, "head-pct-2d", "PCT",
                    "2D dynamic schedule: the first items' share of the rows in percent (0: none)", 0, 100,
                    kDynamicVariants),
      tuning_option(&T::head_pct_3d, "head-pct-3d", "PCT",
                    "3D dynamic schedule: the first items' share of the planes in percent (0: none)", 0, 100,
                    kDynamicVariants),
      tuning_option(&T::blocks_2d, "blocks-2d", "", "the 2D kernel's register budget in minimum blocks an SM", 2, 3,
                    kEngineVariants, {"2", "3"}),
      tuning_option(&T::blocks_3d, "blocks-3d", "", "the 3D kernel's register budget in minimum blocks an SM", 2, 3,
                    kEngineVariants, {"2", "3"}),
      tuning_option(&T::dense_from, "dense-from", "N",
                    "integer read-back: least occurring values of a 1024-value segment written dense (" +
                        std::to_string(T::kMaxDenseFrom) + ": never)",
                    1, T::kMaxDenseFrom, kEngineVariants),
      tuning_option(&T::graph_chunks, "graph-chunks", "K",
                    "end to end, a pinned image up to 1 GiB as one CUDA graph of K upload chunks (0: off)", 0,
                    T::kMaxGraphChunks, {"gpu-opt"}),
  };
}

class EccFamily final : public FamilyOf<ecc::Variant> {
 public:
  std::string name() const override { return "ecc"; }
  std::vector<std::string> suite_datasets(const std::string& suite) const override {
    if (suite == "default")  // the tour: 2D float noise and a 3D field
      return {"uniform:2048x2048:levels=256:dtype=float32:seed=1", "grf:128x128x128:alpha=3:seed=4"};
    if (suite == "quick") return {"uniform:256x256:levels=16:dtype=uint8:seed=1", "grf:64x64x64:alpha=3:seed=2"};
    if (suite == "targets")
      return {"uniform:8192x8192:levels=256:dtype=float32:seed=1", "grf:8192x8192:alpha=3:seed=2",
              "uniform:512x512x512:levels=256:dtype=float32:seed=3", "grf:512x512x512:alpha=3:seed=4"};
    return {};
  }

 protected:
  const std::vector<Variant>& registry() const override { return ecc::variants(); }
  const std::vector<Option>& option_table() const override {
    static const std::vector<Option> t = options::with({
        options::bind_int(&Options::threads,
                          options::threads("threads", "CPU threads of the omp variants (0: OpenMP's default)", "0")),
        {options::integer("chunk-mib", "N", "chunk size in MiB of gpu-stream and of gpu-opt end to end (0: automatic)", "0",
                          options::kRun | options::kProfile | options::kBench),
         [](Options& o, const std::string& v) { o.chunk_bytes = static_cast<std::size_t>(std::stoll(v)) << 20; },
         [](const Options& o) { return nlohmann::json(o.chunk_bytes >> 20); }},
        {options::integer("streams", "N", "gpu-stream: concurrent chunk pipelines (at least 1)", "3",
                          options::kRun | options::kProfile | options::kBench),
         [](Options& o, const std::string& v) { o.streams = std::max(1, std::stoi(v)); },
         [](const Options& o) { return nlohmann::json(o.streams); }},
        options::bind_flag(&Options::timeline,
                           options::flag("timeline",
                                         "gpu-opt / gpu-stream: where the call's time went (upload, kernels, finish, "
                                         "host wake-up, curve): bench, each end-to-end sample's in extra; run, on "
                                         "stderr and in --json; adds a few microseconds a call",
                                         options::kBench | options::kRun)),
    }, tuning_options());
    return t;
  }
  std::string reference_id() const override { return "seq"; }
  // Above 2^22 voxels the reference is omp (EccCpuVariant.MatchesSeq: identical to seq on every
  // dtype, 2D and 3D, 1-8 threads): seq takes 0.14-0.28 us a voxel on one core (4096^2 float32
  // 4.7 s, 512^3 tens of seconds).
  std::string reference_for(const Shape& s, const Options&) const override {
    return s.size() > kSeqReferenceVoxels ? "omp" : "seq";
  }
  static constexpr std::int64_t kSeqReferenceVoxels = std::int64_t(1) << 22;
  std::string unit() const override { return "GVox/s"; }

  std::vector<report::DatasetInfo> describe(const std::string& spec, const Inputs& in,
                                            const Result& reference) const override {
    report::DatasetInfo d = bench::describe_dataset(spec, in.at(0));
    d.distinct_values = static_cast<std::int64_t>(reference.values.size());
    return {d};
  }
  Result run_variant(const Variant& v, const Inputs& in, const Options& opt) const override {
    return v.run(in.at(0), opt);
  }
  Stats stats_of(const Result&) const override { return {}; }
  nlohmann::json sample_breakdown(const Result&) const override {
    const std::optional<ecc::EndToEndTimeline> t = ecc::take_timeline();
    return t ? timeline_json(*t) : nlohmann::json(nullptr);
  }
  nlohmann::json stats_json(const Stats& s) const override { return {{"used_fallback", s.used_fallback}}; }
  Verdict check(const Variant&, const Inputs&, const Result& ref, const Result& got,
                const std::string& what) const override {
    if (got == ref) return {true, "exact match with seq (" + std::to_string(ref.values.size()) + " values)"};
    const std::string why = describe_mismatch(got, ref);
    return {false, what.empty() ? why : what + ": " + why};
  }

  double bytes_per_item(const Inputs& in) const override { return static_cast<double>(dtype_size(in.at(0).dtype())); }
  std::string bound(const Variant& v, const std::string& scope) const override {
    if (scope == "kernel") return "dram-read";
    return v.gpu ? "h2d-pinned" : "";
  }
  nlohmann::json extra(const Variant&, const std::string& scope, const Stats&, const Options&) const override {
    if (scope == "with-io")
      return {{"io", "npy file written untimed before sampling; read inside every sample (OS page cache state not controlled)"}};
    return nlohmann::json::object();
  }
  // gpu-opt's float path falls back to an exact sort when the values overflow its global hash
  // table: a different algorithm, so the report says which one was timed.
  void kernel_extra(nlohmann::json& extra, const Result&, const Plan& plan, const Options&) const override {
    extra["used_fallback"] = plan.stats().used_fallback;
  }
  bool supports_with_io() const override { return true; }
  // Streaming variants stream straight from the file, never holding it whole.
  Result run_from_file(const Variant& v, const std::string& path, const Options& opt, bool pinned) const override {
    if (v.run_source) {
      auto src = datasets::open_file_source(datasets::Spec::parse("file:" + path));
      return v.run_source(*src, opt);
    }
    return v.run(datasets::read_npy(path, pinned), opt);
  }

  // The variant a run takes on an input of `dtype` and `shape`: --variant, else the fastest here
  // (gpu-opt on a GPU, omp otherwise). An in-core GPU variant whose input exceeds the GPU's free
  // memory hands over to the streaming variant.
  const Variant& run_variant_for(const cli::Args& a, DType dtype, const Shape& shape) const {
    const Variant& v = find_variant(a.get("variant", gpu_available() ? "gpu-opt" : "omp"));
    if (v.gpu && !v.run_source && gpu_available() && !fits_on_gpu(dtype, shape)) {
      std::fprintf(stderr, "repix run: input does not fit in GPU memory; using gpu-stream\n");
      return find_variant("gpu-stream");
    }
    return v;
  }

  bool has_distributed_run() const override { return true; }
  std::unique_ptr<distributed::Job> distributed_job(const cli::Args& a, const Options& opt) const override {
    return ecc_distributed::job(a, opt);
  }

  // ECC's run is written out here rather than declared (FamilyOf::RunDeclaration): a dataset spec
  // too large to load is streamed from its generator by gpu-stream, and --plot draws the curve.
  // The curve of one image in memory: its distinct values in the image's own element type, and
  // the ECC at each (int64).
  std::vector<Array> run_in_memory(Inputs in, const cli::Args& a) const override {
    const Options opt = in_memory_options(a);
    const HostImage& img = in.at(0);
    return curve_arrays(run_variant_for(a, img.dtype(), img.shape()).run(img, opt), img.dtype());
  }
  // On the device: gpu-opt's plan (or the GPU variant named) on the image in place. The checks of
  // ecc::check_input, made there; the curve is finished on the host (a value and a count per
  // distinct value).
  std::vector<Array> run_on_device(const std::vector<DeviceImage>& in, const cli::Args& a,
                                   const DeviceCall& call) const override {
    const Options opt = in_memory_options(a);
    const DeviceImage& img = in.at(0);
    const Variant& v = find_variant(a.get("variant", "gpu-opt"));
    check_device_variant(v);
    const std::int64_t n = img.shape.size();
    if (n <= 0) throw Error("empty image");
    if (img.dtype == DType::f32) {
      bool is_nan = false;
      const std::int64_t i = gpu::first_nonfinite(static_cast<const float*>(img.data), n, &is_nan, call.stream);
      if (i < n) ecc::throw_nonfinite(img.shape, i, is_nan);
    }
    return run_plan_on_device(v, in, opt, {"values", "ecc"}, call,
                              [&](ecc::Curve& curve) { return curve_arrays(std::move(curve), img.dtype); });
  }
  // The curve as run_in_memory's arrays: its distinct values in the image's own element type, and
  // the ECC at each (int64).
  static std::vector<Array> curve_arrays(ecc::Curve curve, DType dtype) {
    const std::int64_t n = static_cast<std::int64_t>(curve.values.size());
    Array values = dispatch_dtype(dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;  // integer images' values are whole numbers: exact
      return array_of("values", std::vector<T>(curve.values.begin(), curve.values.end()), {n});
    });
    return {std::move(values), array_of("ecc", std::move(curve.ecc), {n})};
  }

  std::vector<std::string> run_arguments() const override { return {"input", "output", "json", "plot"}; }
  std::vector<cli::OutputArg> run_outputs() const override {
    return {{"output", "", {".csv"}, "CSV (value,ecc)", false},
            cli::json_output(),
            {"plot", "", {".svg", ".png"}, "the curve as a figure (SVG or PNG)", true}};
  }
  std::string run_synopsis() const override {
    return "--variant V --input F --output OUT.csv [--json OUT.json] [--plot CURVE.svg|.png]";
  }
  std::string run_summary() const override { return "Euler characteristic curve as value,ecc CSV"; }
  int run_command(const cli::Args& a, const Options& opt) const override {
    const std::string input = a.need("input");
    const std::string output = a.get("output");
    const std::string json_out = a.get("json");
    const std::string plot = a.get("plot");
    if (output.empty() && json_out.empty() && plot.empty())
      throw cli::UsageError("run needs --output, --json and/or --plot");
    if (a.has("plot") && (plot.empty() || plot == "-"))
      throw cli::UsageError("--plot needs a file name ending .svg or .png (its extension is its format)");
    std::string no_python;
    if (!plot.empty() && figures::find_python(&no_python).empty())  // said before the work, not after
      throw Error("--plot: " + no_python);
    // A file or a dataset spec (`--input uniform:512x512:levels=4`), read as the other families
    // read theirs (datasets::spec_of). Streaming variants read the input as they go (never whole);
    // the others load it.
    const datasets::Spec spec = datasets::spec_of(input);
    const Variant* v = &run_variant_for(a, datasets::spec_dtype(spec), datasets::spec_shape(spec));
    const ecc::Curve curve = v->run_source ? v->run_source(*datasets::open_source(spec), opt)
                                           : v->run(datasets::generate(spec, v->gpu && gpu_available()), opt);
    nlohmann::json timeline;  // null unless --timeline and the variant recorded one
    if (opt.timeline) {
      if (const std::optional<ecc::EndToEndTimeline> t = ecc::take_timeline()) {
        timeline = timeline_json(*t);
        std::fprintf(stderr,
                     "repix run: timeline (us): %lld chunk(s); GPU from before the upload: uploaded %.1f, kernels %.1f, "
                     "finished %.1f; host from the call: issued %.1f, woken %.1f, returned %.1f (making the curve %.1f)\n",
                     static_cast<long long>(t->chunks), t->gpu_uploaded_us, t->gpu_kernels_us, t->gpu_finished_us,
                     t->host_issued_us, t->host_woken_us, t->host_returned_us, t->host_curve_work_us);
      } else {
        std::fprintf(stderr, "repix run: no timeline: variant %s records none (gpu-opt and gpu-stream do)\n",
                     v->id.c_str());
      }
    }
    if (!output.empty()) ecc::write_csv(curve, output);
    if (json_out.empty() && plot.empty()) return 0;
    // The run's record: its --json, and what its --plot is drawn from (built only for them: a
    // float32 volume's curve can hold as many values as voxels).
    nlohmann::json record = run_record(*v, opt);
    record["input"] = input;
    record["values"] = curve.values;
    record["ecc"] = curve.ecc;
    if (!timeline.is_null()) record["timeline"] = timeline;
    if (!json_out.empty()) write_file_atomic(json_out, json_text::dump(record, 1) + "\n");
    if (!plot.empty()) {
      // Drawn in a scratch folder, then written with the other outputs.
      const std::filesystem::path scratch =
          std::filesystem::temp_directory_path() / ("repix-plot-" + std::to_string(::getpid()));
      std::filesystem::create_directories(scratch);
      struct Remove {
        std::filesystem::path p;
        ~Remove() {
          std::error_code ec;
          std::filesystem::remove_all(p, ec);
        }
      } remove{scratch};
      const std::string record_path = (scratch / "record.json").string();
      std::ofstream(record_path) << json_text::dump(record) << "\n";
      const std::string ext = std::filesystem::path(plot).extension().string();
      const std::string drawn = (scratch / ("curve" + ext)).string();
      figures::draw_one(record_path, "curve", drawn);
      std::ifstream in(drawn, std::ios::binary);
      std::stringstream bytes;
      bytes << in.rdbuf();
      if (!in) throw Error("cannot read the drawn curve " + drawn);
      write_file_atomic(plot, bytes.str());
    }
    return 0;
  }
};

}  // namespace

std::unique_ptr<Family> ecc_family() { return std::make_unique<EccFamily>(); }

}  // namespace repix::family
