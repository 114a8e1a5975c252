// Reconstruct cases for `repix bench`. Every dataset is a marker spec (noise-mask/tissue with
// marker=); its mask is the same spec without the marker keys. The reference is seq; every
// variant (and every available peer, as `peer:<id>`) is verified exactly against it on the same
// inputs before it is timed: CPU variants end to end (host clock), GPU variants in kernel scope
// (DevicePlan on device-resident inputs, CUDA events, L2 flushed) and end to end.
// Connectivity Request::connectivity (`--connectivity`, default 8: the paper's Figure 11 setting);
// items = pixels, unit GPx/s; Stats and the connectivity go into Result::extra.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>

#include "core/gpu.hpp"
#include "core/nvtx.hpp"
#include "datasets/datasets.hpp"
#include "harness/bench.hpp"
#include "harness/iwpp_verify.hpp"
#include "baselines/peers.hpp"
#include "harness/tiled_json.hpp"
#include "reconstruct/reconstruct.hpp"

namespace repix::bench {

namespace {

double pixel(const HostImage& img, std::int64_t i) {
  switch (img.dtype()) {
    case DType::u8: return img.data<std::uint8_t>()[i];
    case DType::u16: return img.data<std::uint16_t>()[i];
    case DType::f32: break;
  }
  return img.data<float>()[i];
}

}  // namespace

std::string reconstruct_mismatch(const HostImage& got, const HostImage& want) {
  std::ostringstream o;
  o.precision(9);
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) {
    o << "MISMATCH vs seq: output is " << dtype_name(got.dtype()) << " " << got.shape().str() << ", want "
      << dtype_name(want.dtype()) << " " << want.shape().str();
    return o.str();
  }
  // Correct outputs are byte-identical (every variant writes +0 for zero): one memcmp decides
  // them, and only a mismatch pays for the pixel-by-pixel walk (seconds at 32768^2).
  if (std::memcmp(got.raw(), want.raw(), want.bytes()) == 0) return "";
  std::int64_t diffs = 0, first = -1;
  for (std::int64_t i = 0; i < got.size(); ++i)
    if (pixel(got, i) != pixel(want, i)) {
      if (first < 0) first = i;
      ++diffs;
    }
  if (first < 0) return "";
  const std::int64_t nx = want.shape().nx;
  o << "MISMATCH vs seq: " << diffs << " pixels differ; first at (x=" << first % nx << ", y=" << first / nx
    << "): got " << pixel(got, first) << ", want " << pixel(want, first);
  return o.str();
}

nlohmann::json reconstruct_stats_json(const reconstruct::Stats& s) {
  nlohmann::json j = {{"initially_queued", s.initially_queued},
                      {"total_queued", s.total_queued},
                      {"passes", s.passes},
                      {"overflow_reruns", s.overflow_reruns},
                      {"wavefront_ms", s.wavefront_ms >= 0 ? nlohmann::json(s.wavefront_ms) : nlohmann::json()}};
  harness::add_tiled(j, s.tiled);
  return j;
}

namespace {

nlohmann::json stats_json(const reconstruct::Stats& s, int connectivity) {
  nlohmann::json j = reconstruct_stats_json(s);
  j["connectivity"] = connectivity;
  return j;
}

// The options every run of the bench uses: the request's connectivity and multi-device workers.
reconstruct::Options bench_options(const Request& req, int connectivity) {
  reconstruct::Options opt;
  opt.connectivity = connectivity;
  opt.gpus = req.gpus;
  opt.cpu_groups = req.cpu_groups;
  opt.cpu_group_threads = req.cpu_group_threads;
  return opt;
}

// The current (marker, mask) pair and seq's result on it; one pair at a time (inputs are large).
// Verification results are kept per (variant, dataset).
struct ReconState {
  int connectivity = 8;  // the request's, for every run on these inputs
  std::string spec;
  std::unique_ptr<HostImage> marker, mask;
  reconstruct::Result reference;
  std::map<std::string, std::string> verification;  // variant|spec -> "" when ok
  std::map<std::string, reconstruct::Stats> stats;  // variant|spec -> Stats of the verifying run

  void load(Context& ctx, const std::string& s) {
    if (s == spec && marker) return;
    marker.reset();
    mask.reset();
    reference = {};
    const datasets::Spec ms = datasets::Spec::parse(s);
    const std::string mask_str = datasets::mask_spec(ms).str();
    {
      nvtx::Range r("dataset");
      // Pinned where a GPU exists, so end-to-end uploads run at full PCIe speed.
      marker = std::make_unique<HostImage>(datasets::generate(ms, gpu_available()));
      mask = std::make_unique<HostImage>(datasets::generate(datasets::Spec::parse(mask_str), gpu_available()));
    }
    record_dataset(ctx, describe_dataset(s, *marker));
    record_dataset(ctx, describe_dataset(mask_str, *mask));
    std::fprintf(stderr, "repix bench: reference (seq) on %s...\n", s.c_str());
    const reconstruct::Options opt = bench_options(ctx.req, connectivity);
    reference = reconstruct::find_variant("seq").run(*marker, *mask, opt);
    spec = s;
  }
  // Runs the variant end to end once and checks it; returns "" or the mismatch text.
  const std::string& verify(Context& ctx, const reconstruct::Variant& v, const std::string& s) {
    const std::string key = v.id + "|" + s;
    auto it = verification.find(key);
    if (it != verification.end()) return it->second;
    load(ctx, s);
    const reconstruct::Options opt = bench_options(ctx.req, connectivity);
    const reconstruct::Result got = v.run(*marker, *mask, opt);
    stats[key] = got.stats;
    return verification[key] = reconstruct_mismatch(got.image, reference.image);
  }
};

void set_verified(report::Result& r, const std::string& why, std::int64_t pixels) {
  r.verified = why.empty();
  r.verification = why.empty() ? "exact match with seq (" + std::to_string(pixels) + " pixels)" : why;
}

}  // namespace

void add_reconstruct_cases(Context& ctx, std::vector<Case>& cases) {
  for (const std::string& spec : ctx.specs)
    if (!datasets::is_marker_spec(datasets::Spec::parse(spec)))
      throw Error("reconstruct datasets are marker specs (noise-mask or tissue with marker=), got '" + spec + "'");
  auto state = std::make_shared<ReconState>();
  state->connectivity = ctx.req.connectivity;
  const std::vector<const reconstruct::Variant*> chosen = chosen_variants(ctx, reconstruct::variants());
  auto wants = [&](const std::string& scope) { return wants_scope(ctx, scope); };
  const std::vector<peers::Peer> peer_list = choose_peers(ctx);

  for (const std::string& spec : ctx.specs) {
    auto base = [&](const std::string& variant, bool gpu, const std::string& scope) {
      Case c;
      c.gpu = gpu;
      c.result.family = "reconstruct";
      c.result.variant = variant;
      c.result.dataset = spec;
      c.result.scope = scope;
      c.result.unit = "GPx/s";
      return c;
    };
    // Prepares a case's identity fields that need the inputs.
    auto fill = [state](Case& me) {
      me.result.items = static_cast<double>(state->mask->size());
      me.bytes_per_item = 2.0 * static_cast<double>(dtype_size(state->mask->dtype()));  // marker + mask read
    };

    for (const reconstruct::Variant* vp : chosen) {
      const reconstruct::Variant& v = *vp;
      if (v.gpu && v.make_plan && wants("kernel")) {
        Case c = base(v.id, true, "kernel");
        c.result.bound = "dram-read";
        struct Kernel {
          std::unique_ptr<reconstruct::DevicePlan> plan;
          std::unique_ptr<KernelTimer> timer;
        };
        auto k = std::make_shared<Kernel>();
        const std::size_t index = cases.size();
        c.prepare = [&ctx, state, k, &v, spec, &cases, index, fill] {
          Case& me = cases[index];
          const std::string why = state->verify(ctx, v, spec);  // loads the inputs first
          set_verified(me.result, why, state->mask->size());
          me.result.extra = stats_json(state->stats[v.id + "|" + spec], state->connectivity);
          fill(me);
          const reconstruct::Options opt = bench_options(ctx.req, state->connectivity);
          k->timer = std::make_unique<KernelTimer>();
          k->plan = v.make_plan();
          k->plan->setup({state->mask->dtype(), state->mask->shape()}, opt, k->timer->stream());
          k->timer->upload({state->marker.get(), state->mask.get()});
          reconstruct::DevicePlan* plan = k->plan.get();
          k->timer->start(
              [plan](const std::vector<const void*>& in, cudaStream_t s) { plan->compute(in, s); },
              ctx.req.warmup, "reconstruct/" + v.id);
        };
        c.sample = [k] { return k->timer->sample(); };
        c.finish = [state, k, &cases, index] {
          Case& me = cases[index];
          // The output of the timed path itself must be right, not only the end-to-end run's.
          const reconstruct::Result got = k->plan->result(k->timer->stream());
          const std::string why = reconstruct_mismatch(got.image, state->reference.image);
          if (!why.empty()) {
            me.result.verified = false;
            me.result.verification = "kernel-scope output: " + why;
          }
          me.result.extra["kernel_stats"] = stats_json(got.stats, state->connectivity);
          k->plan.reset();
          k->timer.reset();
        };
        cases.push_back(std::move(c));
      }

      if (wants("end-to-end")) {
        Case c = base(v.id, v.gpu, "end-to-end");
        if (v.gpu) c.result.bound = "h2d-pinned";
        const std::size_t index = cases.size();
        c.prepare = [&ctx, state, &v, spec, &cases, index, fill] {
          Case& me = cases[index];
          const std::string why = state->verify(ctx, v, spec);  // loads the inputs first
          set_verified(me.result, why, state->mask->size());
          me.result.extra = stats_json(state->stats[v.id + "|" + spec], state->connectivity);
          fill(me);
        };
        c.sample = [&ctx, state, &v] {
          const reconstruct::Options opt = bench_options(ctx.req, state->connectivity);
          const auto t0 = std::chrono::steady_clock::now();
          const reconstruct::Result out = v.run(*state->marker, *state->mask, opt);
          const auto t1 = std::chrono::steady_clock::now();
          return std::chrono::duration<double, std::milli>(t1 - t0).count();
        };
        c.finish = [] {};
        cases.push_back(std::move(c));
      }
    }

    for (const peers::Peer& p : peer_list)
      add_peer_case(ctx, cases, p, spec, "GPx/s", [&ctx, state, p, spec, fill](Case& me, int n, int warmup) {
        state->load(ctx, spec);
        fill(me);
        peers::PeerRun run = peers::run(p, {state->marker.get(), state->mask.get()},
                                        {{"connectivity", state->connectivity}}, n, warmup);
        me.result.extra["connectivity"] = state->connectivity;
        set_verified(me.result, reconstruct_mismatch(run.output, state->reference.image), state->mask->size());
        return run;
      });
  }
}

}  // namespace repix::bench
