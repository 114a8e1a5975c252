// The edt family's harness knowledge (see harness/family_of.hpp): one mask per dataset (zero =
// background); the reference is seq-exact with sites; exact variants must give its distances bit
// for bit (and nearest sites), propagation variants must pass check_propagation, whose error
// statistics go into the result. The verifying run asks for sites (the full check); timed runs
// ask for distances only, as `repix run edt --output` does (`extra.sites = false`). Peers are
// compared with seq-exact within float rounding (1e-6 relative).
#include <chrono>
#include <sstream>

#include "core/atomic_file.hpp"
#include "core/gpu/first_where.hpp"
#include "datasets/datasets.hpp"
#include "edt/edt.hpp"
#include "edt/verify.hpp"
#include "harness/family_of.hpp"
#include "harness/families/edt/checks.hpp"
#include "harness/families/edt/distributed.hpp"
#include "harness/json_text.hpp"
#include "harness/tiled_json.hpp"

namespace repix::family {

namespace {

using options::bind_int;
using options::integer;
using options::kBench;
using options::kProfile;
using options::kRun;
using options::read_only_by;

// The variants that read each option (options::Spec::variants: a row or a run record lists only
// its variant's).
//
// --threads: OpenMP threads where a variant runs host loops on them: seq-exact's passes,
// omp-tiled's tiles, multi-device's background mask and distances (run_checked). seq runs on one
// thread; the GPU variants' input check runs on OpenMP's default team, whatever --threads says.
const std::vector<std::string> kThreadsReaders = {"seq-exact", "omp-tiled", "multi-device"};
// --tile: omp-tiled's tiles and multi-device's (tiling::configure).
const std::vector<std::string> kTileReaders = {"omp-tiled", "multi-device"};
// --queue-capacity: the bounded GPU queue (TilePropagator, gpu_tile.cu) of the queue ladder and of
// multi-device's GPU workers. The CPU FIFOs grow and take no capacity.
const std::vector<std::string> kQueueCapacityReaders = {"gpu-queue-atomic", "gpu-queue-warp-atomic",
                                                        "gpu-queue-scan", "gpu-queue-tq", "multi-device"};
// --gpus, --cpu-groups, --cpu-group-threads: the tiled engine's workers.
const std::vector<std::string> kEngineReaders = {"multi-device"};

constexpr double kPeerRelTol = 1e-6;  // peers computing in another precision: a few float ulps

Verdict verdict(const edt::Check& c, bool exact, const std::string& what) {
  const edt_checks::Verdict v = edt_checks::verdict(c, exact, what);
  return {v.ok, v.text, v.errors};
}

class EdtFamily final : public FamilyOf<edt::Variant> {
 public:
  std::string name() const override { return "edt"; }
  std::vector<std::string> suite_datasets(const std::string& suite) const override {
    if (suite == "default") return {"blobs:1024x1024:radius=24:fill=0.45:seed=1", "sparse:1024x1024:density=0.001:seed=1"};
    if (suite == "quick") return {"blobs:128x96:radius=8:fill=0.45:seed=1", "sparse:100x80:density=0.01:seed=1"};
    if (suite == "iwpp-targets")
      return {"blobs:8192x8192:radius=24:fill=0.45:seed=1", "sparse:8192x8192:density=0.001:seed=1"};
    return {};
  }

 protected:
  const std::vector<Variant>& registry() const override { return edt::variants(); }
  const std::vector<Option>& option_table() const override {
    static const std::vector<Option> t = options::with<Options>({
        bind_int(&Options::threads,
                 read_only_by(kThreadsReaders,
                              options::threads("threads", "CPU variants: OpenMP threads (0: OpenMP's default)", "0", kRun))),
        bind_int(&Options::tile, read_only_by(kTileReaders, integer("tile", "N", "tiled variants: tile edge (0: automatic)", "0"))),
        bind_int(&Options::queue_capacity,
                 read_only_by(kQueueCapacityReaders,
                              integer("queue-capacity", "N", "queue variants: elements (0: automatic)", "0", kRun))),
    }, options::tiling_worker_options<Options>(kEngineReaders));
    return t;
  }
  std::string reference_id() const override { return "seq-exact"; }
  std::string unit() const override { return "GPx/s"; }

  // The verifying run's distances (float32) and sites (int64).
  std::uint64_t output_bytes(std::int64_t elements, DType) const override {
    return static_cast<std::uint64_t>(elements) * (sizeof(float) + sizeof(std::int64_t));
  }
  std::vector<report::DatasetInfo> describe(const std::string& spec, const Inputs& in, const Result&) const override {
    return {bench::describe_dataset(spec, in.at(0))};
  }
  Result run_variant(const Variant& v, const Inputs& in, const Options& opt) const override { return v.run(in.at(0), opt); }
  Stats stats_of(const Result& r) const override { return r.stats; }
  nlohmann::json stats_json(const Stats& s) const override { return edt_checks::stats_json(s); }
  Verdict check(const Variant& v, const Inputs& in, const Result& ref, const Result& got,
                const std::string& what) const override {
    const edt::Check c = v.exact ? edt::compare_exact(in.at(0), ref, got) : edt::check_propagation(in.at(0), ref, got);
    // The verifying run asks for sites (the full check); timed runs for distances only.
    return verdict(c, v.exact, what.empty() ? "end to end, with sites" : what == "timed output" ? "timed run's distances" : what);
  }
  Options verifying_options(Options o) const override {
    o.want_sites = true;
    return o;
  }
  Options timed_options(Options o) const override {
    o.want_sites = false;
    return o;
  }
  // The verifying run's counters (gpu-opt's fallback rows, the queues', a multi-device run's
  // tiles) and that the timed runs ask for distances only.
  nlohmann::json extra(const Variant&, const std::string&, const Stats& verifying, const Options&) const override {
    nlohmann::json j = edt_checks::stats_json(verifying);
    j["sites"] = false;
    return j;
  }
  void kernel_extra(nlohmann::json& extra, const Result& timed, const Plan&, const Options&) const override {
    extra["kernel_stats"] = edt_checks::stats_json(timed.stats);
  }
  Verdict check_peer(const peers::Peer& p, const Inputs& in, const Result& ref, HostImage output) const override {
    edt::Result got;
    got.distance = std::move(output);
    const edt::Check c = p.exact ? edt::compare_exact(in.at(0), ref, got, kPeerRelTol)
                                 : edt::check_propagation(in.at(0), ref, got);
    return verdict(c, p.exact, p.exact ? "distances within 1e-6 relative" : "distances");
  }

  // The default is exact: gpu-opt where a GPU exists, the exact CPU oracle otherwise.
  RunDeclaration run_declaration() const override {
    return {{"input"},
            {{{"output", "", {".npy"}, "float32 .npy", true},
              false,
              [](const Result& r, const Inputs&, const std::string& path) { datasets::write_npy(r.distance, path); },
              [](Result& r, const Shape&) { return array_of("output", std::move(r.distance)); }},
             {{"sites", "", {".npy"}, "int64 .npy", true},
              true,
              [](const Result& r, const Inputs& in, const std::string& path) {
                datasets::write_npy_int64(r.sites.data(), in.at(0).shape(), path);
              },
              [](Result& r, const Shape& shape) {
                return array_of("sites", std::move(r.sites), numpy_shape(shape));
              }}},
            "--variant V --input MASK --output OUT.npy [--sites SITES.npy] [--json OUT.json]",
            "float32 distance to the nearest zero pixel; sites: int64 index of that pixel",
            "gpu-opt",
            "seq-exact"};
  }
  // Sites where they are written, and for a propagation variant's --json record (its error
  // against the exact EDT is measured through them).
  void prepare_run(Options& opt, const Variant& v, const std::set<std::string>& asked) const override {
    opt.want_sites = asked.count("sites") > 0 || (asked.count("json") > 0 && !v.exact);
  }
  void check_run_inputs(const Inputs& in, const Options&) const override { edt::check_input(in.at(0)); }
  bool has_distributed_run() const override { return true; }
  std::unique_ptr<distributed::Job> distributed_job(const cli::Args& a, const Options& opt) const override {
    return edt_distributed::job(a, opt, declared_run_variant(a));
  }
  // Its GPU variants' end-to-end run is their plan's after these checks.
  bool keeps_plan_for_host_inputs() const override { return true; }
  void check_device_inputs(const std::vector<DeviceImage>& in, const Options&, cudaStream_t s) const override {
    const DeviceImage& mask = in.at(0);
    edt::check_description(mask.shape);
    if (mask.dtype != DType::f32) return;
    bool is_nan = false;
    const std::int64_t i = gpu::first_nonfinite(static_cast<const float*>(mask.data), mask.shape.size(), &is_nan, s);
    if (i < mask.shape.size()) edt::throw_nonfinite(mask.shape, i, is_nan);
  }
  nlohmann::json run_record_extra(const Variant& v, const Result& r, const Inputs& in, const Options&) const override {
    nlohmann::json j = {{"exact", v.exact}, {"stats", edt_checks::stats_json(r.stats)}};
    // Propagation variants: their error against the exact EDT, and the property checks.
    if (!v.exact) {
      const Result exact = find_variant("seq-exact").run(in.at(0), {});
      const edt::Check c = edt::check_propagation(in.at(0), exact, r);
      j["errors"] = c.errors();
      j["properties_ok"] = c.ok;
      if (!c.ok) j["first_violation"] = c.first_violation;
    }
    return j;
  }
};

}  // namespace

std::unique_ptr<Family> edt_family() { return std::make_unique<EdtFamily>(); }

}  // namespace repix::family
