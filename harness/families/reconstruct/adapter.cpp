// The reconstruct family's harness knowledge (see harness/family_of.hpp): a dataset is a marker
// spec (noise-mask or tissue with marker=), its mask the same spec without the marker keys; the
// reference is seq and every output must equal it pixel for pixel; GPx/s with marker and mask
// read (2 x dtype bytes per pixel); each result's `extra` holds the run's queue counters and the
// connectivity. Peers (scikit-image) get the connectivity and are held to the same exactness.
#include <cstring>
#include <sstream>

#include "core/gpu/first_where.hpp"
#include "datasets/datasets.hpp"
#include "harness/family_of.hpp"
#include "harness/families/reconstruct/checks.hpp"
#include "harness/families/reconstruct/distributed.hpp"
#include "reconstruct/reconstruct.hpp"

namespace repix::family {

namespace {

using options::bind_int;
using options::integer;
using options::kBench;
using options::kProfile;
using options::kRun;
using options::read_only_by;

// The variants that read each option (options::Spec::variants: a row or a run record lists only
// its variant's). --connectivity and --clip are every variant's: every one checks its inputs
// against them and propagates over the neighbourhood.
//
// FH_GPU's queue ladder (LadderImpl, algorithms/reconstruct/gpu_common.cuh): --raster-scans pairs,
// then queue episodes sized by --queue-capacity with --queue-blocks-per-sm persistent blocks.
const std::vector<std::string> kQueueLadder = {"gpu-queue-atomic", "gpu-queue-warp-atomic", "gpu-queue-scan",
                                               "gpu-queue-tq"};
std::vector<std::string> ladder_and(std::vector<std::string> ids) {
  ids.insert(ids.end(), kQueueLadder.begin(), kQueueLadder.end());
  return ids;
}
// --threads: the OpenMP variants, and every variant that checks its inputs on the host with them
// (check_inputs, common.cpp): the GPU variants end to end and multi-device. The sequential ones
// run everything on one thread.
const std::vector<std::string> kThreadsReaders =
    ladder_and({"omp-nontiled", "omp-tiled", "gpu-naive", "gpu-sr", "gpu-opt", "multi-device"});
// --tile: omp-tiled's tiles and multi-device's (tiling::configure).
const std::vector<std::string> kTileReaders = {"omp-tiled", "multi-device"};
// --raster-scans: every run of FH's scans (seq; omp-tiled per tile; multi-device's CPU groups per
// tile, through omp-tiled's code) and the ladder's.
const std::vector<std::string> kRasterScanReaders = ladder_and({"seq", "omp-tiled", "multi-device"});
// --queue-capacity: the ladder's bounded queue, and seq's FIFO, which it sizes up front (seq.cpp).
const std::vector<std::string> kQueueCapacityReaders = ladder_and({"seq"});
// --gpus, --cpu-groups, --cpu-group-threads: the tiled engine's workers.
const std::vector<std::string> kEngineReaders = {"multi-device"};

nlohmann::json stats_with_connectivity(const reconstruct::Stats& s, int connectivity) {
  nlohmann::json j = reconstruct_checks::stats_json(s);
  j["connectivity"] = connectivity;
  return j;
}

class ReconstructFamily final : public FamilyOf<reconstruct::Variant> {
 public:
  std::string name() const override { return "reconstruct"; }
  std::vector<std::string> suite_datasets(const std::string& suite) const override {
    if (suite == "default")  // the tour: a short wavefront (opening) and a long one (tissue, h-minus)
      return {"noise-mask:1024x1024:marker=opening", "tissue:1024x1024:coverage=75:marker=h-minus"};
    if (suite == "quick") return {"noise-mask:128x128:marker=opening", "tissue:96x80:coverage=50:marker=frame"};
    if (suite == "iwpp-targets")
      return {"noise-mask:8192x8192:marker=opening", "noise-mask:8192x8192:marker=frame",
              "noise-mask:8192x8192:marker=h-minus"};
    return {};
  }

 protected:
  const std::vector<Variant>& registry() const override { return reconstruct::variants(); }
  const std::vector<Option>& option_table() const override {
    static const std::vector<Option> t = options::with<Options>({
        bind_int(&Options::connectivity,
                 options::choice("connectivity", {"4", "8"}, "neighbourhood: 4 or 8", "8", kRun | kProfile | kBench)),
        options::bind_flag(&Options::clip,
                           options::flag("clip", "clip a marker that rises above the mask instead of refusing it")),
        bind_int(&Options::threads,
                 read_only_by(kThreadsReaders,
                              options::threads("threads",
                                               "OpenMP threads of the CPU variants and of the host's input checks "
                                               "(0: OpenMP's default)", "0"))),
        bind_int(&Options::tile,
                 read_only_by(kTileReaders, integer("tile", "N", "tiled variants: tile edge in pixels (0: automatic)", "0"))),
        {read_only_by(kRasterScanReaders,
                      integer("raster-scans", "N",
                              "hybrid variants: raster + anti-raster pairs before the queue phase (at least 1)", "1")),
         [](Options& o, const std::string& v) { o.raster_scans = std::max(1, std::stoi(v)); },
         [](const Options& o) { return nlohmann::json(o.raster_scans); }},
        bind_int(&Options::queue_capacity,
                 read_only_by(kQueueCapacityReaders,
                              integer("queue-capacity", "N",
                                      "queue variants: elements (0: automatic; seq: its FIFO's first size)", "0"))),
        bind_int(&Options::queue_blocks_per_sm,
                 read_only_by(kQueueLadder, integer("queue-blocks-per-sm", "N",
                                                    "queue variants: persistent blocks per SM (0: as many as fit)", "0"))),
    }, options::tiling_worker_options<Options>(kEngineReaders));
    return t;
  }
  std::string reference_id() const override { return "seq"; }
  // Above 2^24 pixels the reference is omp-tiled: the reconstruction is unique and the tests prove
  // omp-tiled equal to seq pixel for pixel (ReconstructCpuVariant.*), while seq's scans and FIFO run
  // on one core (~10 ms a megapixel, seconds at 32768^2).
  std::string reference_for(const Shape& s, const Options&) const override {
    return s.size() > (std::int64_t(1) << 24) ? "omp-tiled" : "seq";
  }
  std::string unit() const override { return "GPx/s"; }

  void check_bench_dataset(const std::string& spec) const override {
    if (!datasets::is_marker_spec(datasets::Spec::parse(spec)))
      throw Error("reconstruct datasets are marker specs (noise-mask or tissue with marker=), got '" + spec + "'");
  }
  // The marker, then its mask.
  std::vector<std::string> input_specs(const std::string& spec) const override {
    return {spec, datasets::mask_spec(datasets::Spec::parse(spec)).str()};
  }
  // The reconstruction: an image of the mask's type.
  std::uint64_t output_bytes(std::int64_t elements, DType dtype) const override {
    return static_cast<std::uint64_t>(elements) * dtype_size(dtype);
  }
  Inputs load_for_profile(const std::string& spec, bool pinned) const override {
    if (!datasets::is_marker_spec(datasets::Spec::parse(spec)))
      throw cli::UsageError("--dataset must be a marker spec, e.g. noise-mask:4096x4096:marker=opening");
    return load(spec, pinned);
  }
  std::vector<report::DatasetInfo> describe(const std::string& spec, const Inputs& in, const Result&) const override {
    return {bench::describe_dataset(spec, in.at(0)),
            bench::describe_dataset(datasets::mask_spec(datasets::Spec::parse(spec)).str(), in.at(1))};
  }
  Result run_variant(const Variant& v, const Inputs& in, const Options& opt) const override {
    return v.run(in.at(0), in.at(1), opt);
  }
  Stats stats_of(const Result& r) const override { return r.stats; }
  nlohmann::json stats_json(const Stats& s) const override { return reconstruct_checks::stats_json(s); }
  Verdict check(const Variant&, const Inputs&, const Result& ref, const Result& got,
                const std::string& what) const override {
    const std::string why = reconstruct_checks::mismatch(got.image, ref.image);
    if (why.empty()) return {true, "exact match with seq (" + std::to_string(ref.image.size()) + " pixels)"};
    return {false, what.empty() ? why : what + ": " + why};
  }

  double items(const Inputs& in) const override { return static_cast<double>(in.at(1).size()); }
  // Marker and mask are read.
  double bytes_per_item(const Inputs& in) const override { return 2.0 * static_cast<double>(dtype_size(in.at(1).dtype())); }
  std::string bound(const Variant& v, const std::string& scope) const override {
    if (scope == "kernel") return "dram-read";
    return v.gpu ? "h2d-pinned" : "";
  }
  nlohmann::json extra(const Variant&, const std::string&, const Stats& verifying, const Options& o) const override {
    return stats_with_connectivity(verifying, o.connectivity);
  }
  void kernel_extra(nlohmann::json& extra, const Result& timed, const Plan&, const Options& o) const override {
    extra["kernel_stats"] = stats_with_connectivity(timed.stats, o.connectivity);
  }
  nlohmann::json peer_params(const Options& o) const override { return {{"connectivity", o.connectivity}}; }
  nlohmann::json peer_extra(const Options& o) const override { return {{"connectivity", o.connectivity}}; }
  Verdict check_peer(const peers::Peer&, const Inputs&, const Result& ref, HostImage output) const override {
    const std::string why = reconstruct_checks::mismatch(output, ref.image);
    if (why.empty()) return {true, "exact match with seq (" + std::to_string(ref.image.size()) + " pixels)"};
    return {false, why};
  }

  RunDeclaration run_declaration() const override {
    return {{"marker", "mask"},
            {{{"output", "", datasets::save_extensions(), "an image of the mask's type (\"-\": .npy)", true},
              false,
              [](const Result& r, const Inputs&, const std::string& path) { datasets::save(r.image, path); },
              [](Result& r, const Shape&) { return array_of("output", std::move(r.image)); }}},
            "--variant V --marker M.npy --mask K.npy --output OUT.npy [--json STATS.json]",
            "grayscale reconstruction by dilation (marker/mask: files or dataset specs)",
            "gpu-opt",
            "omp-tiled"};
  }
  // The variant checks marker and mask against each other and the options (types, shapes, a
  // marker above the mask unless --clip); a GPU variant's run is then its plan end to end, which
  // run_in_memory keeps between calls after the same checks. On the device, the same checks here.
  bool keeps_plan_for_host_inputs() const override { return true; }
  void check_kept_plan_inputs(const Inputs& in, const Options& opt) const override {
    reconstruct::check_inputs(in.at(0), in.at(1), opt);
  }
  void check_device_inputs(const std::vector<DeviceImage>& in, const Options& opt, cudaStream_t s) const override {
    const DeviceImage& marker = in.at(0);
    const DeviceImage& mask = in.at(1);
    reconstruct::check_descriptions({marker.dtype, marker.shape}, {mask.dtype, mask.shape}, opt);
    const std::int64_t n = mask.shape.size();
    if (mask.dtype == DType::f32)
      for (const DeviceImage* img : {&marker, &mask}) {
        bool is_nan = false;
        const std::int64_t i = gpu::first_nonfinite(static_cast<const float*>(img->data), n, &is_nan, s);
        if (i < n) reconstruct::throw_nonfinite(img == &marker ? "marker" : "mask", mask.shape, i, is_nan);
      }
    if (opt.clip) return;
    double above = 0, below = 0;
    const std::int64_t i = gpu::first_greater(mask.dtype, marker.data, mask.data, n, &above, &below, s);
    if (i < n) reconstruct::throw_marker_above(mask.shape, i, above, below);
  }
  nlohmann::json run_record_extra(const Variant&, const Result& r, const Inputs&, const Options& opt) const override {
    return {{"connectivity", opt.connectivity}, {"clip", opt.clip}, {"stats", reconstruct_checks::stats_json(r.stats)}};
  }
  bool has_distributed_run() const override { return true; }
  std::unique_ptr<distributed::Job> distributed_job(const cli::Args& a, const Options& opt) const override {
    return reconstruct_distributed::job(a, opt, declared_run_variant(a));
  }
};

}  // namespace

std::unique_ptr<Family> reconstruct_family() { return std::make_unique<ReconstructFamily>(); }

}  // namespace repix::family
