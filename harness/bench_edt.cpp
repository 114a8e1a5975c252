// edt cases for `repix bench`: seq-exact runs once per dataset (with sites) as the reference;
// every variant is verified on the same input before it is timed: exact variants must give the
// same distances bit for bit (and nearest sites), propagation variants must pass
// check_propagation, whose error statistics go into the result. Timed runs ask for distances
// only (want_sites = false, as a user's `repix run edt --output` does); the kernel-scope output
// of the timed path is checked again on its distances. Peers (peers::available("edt")) run as
// `peer:<id>` and are compared with seq-exact within float rounding.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <sstream>

#include "core/gpu.hpp"
#include "core/nvtx.hpp"
#include "harness/bench.hpp"
#include "harness/iwpp_verify.hpp"
#include "baselines/peers.hpp"
#include "harness/tiled_json.hpp"
#include "edt/edt.hpp"
#include "edt/verify.hpp"

namespace repix::bench {

EdtVerdict edt_verdict(const edt::Check& c, bool exact, const std::string& what) {
  EdtVerdict v;
  v.ok = c.ok;
  v.errors = c.errors();
  std::ostringstream o;
  if (!c.ok) o << "MISMATCH vs seq-exact (" << what << "): " << c.first_violation;
  else if (exact) o << "identical to seq-exact (" << c.pixels << " px, " << what << ")";
  else o << "propagation properties hold vs seq-exact (" << what << "); max error " << c.max_abs << " px, "
         << c.pixels_off << " px off";
  v.text = o.str();
  return v;
}

namespace {

constexpr double kPeerRelTol = 1e-6;  // peers computing in another precision: a few float ulps

// The request's multi-device workers (every GPU, no CPU group unless told); with sites.
edt::Options worker_options(const Request& req) {
  edt::Options o;
  o.gpus = req.gpus;
  o.cpu_groups = req.cpu_groups;
  o.cpu_group_threads = req.cpu_group_threads;
  return o;
}

// Timed runs: distances only.
edt::Options timed_options(const Request& req) {
  edt::Options o = worker_options(req);
  o.want_sites = false;
  return o;
}

// Per-dataset reference and per-(variant, dataset) verdicts, shared by the scopes.
struct EdtState {
  std::string ref_spec;
  edt::Result reference;
  std::map<std::string, EdtVerdict> verdicts;  // variant|dataset
  std::map<std::string, edt::Stats> stats;  // variant|dataset: of the verifying run
  const edt::Result& ref(Context& ctx, const std::string& spec) {
    if (ref_spec == spec) return reference;
    std::fprintf(stderr, "repix bench: reference (seq-exact) on %s...\n", spec.c_str());
    reference = edt::find_variant("seq-exact").run(ctx.datasets.get(spec), {});
    ref_spec = spec;
    record_dataset(ctx, ctx.datasets.info(spec));
    return reference;
  }
  const EdtVerdict& verify(Context& ctx, const edt::Variant& v, const std::string& spec) {
    const std::string key = v.id + "|" + spec;
    auto it = verdicts.find(key);
    if (it != verdicts.end()) return it->second;
    const HostImage& img = ctx.datasets.get(spec);
    const edt::Result& want = ref(ctx, spec);
    const edt::Result got = v.run(img, worker_options(ctx.req));  // with sites: the full check
    stats[key] = got.stats;
    const edt::Check c = v.exact ? edt::compare_exact(img, want, got) : edt::check_propagation(img, want, got);
    return verdicts[key] = edt_verdict(c, v.exact, "end to end, with sites");
  }
};

void apply(report::Result& r, const EdtVerdict& v) {
  r.verified = v.ok;
  r.verification = v.text;
  r.errors = v.errors;
}


void add_peer_cases(Context& ctx, const std::shared_ptr<EdtState>& state, const std::string& spec,
                    std::vector<Case>& cases) {
  for (const peers::Peer& p : choose_peers(ctx))
    add_peer_case(ctx, cases, p, spec, "GPx/s", [&ctx, state, p, spec](Case& me, int n, int warmup) {
      const HostImage& img = ctx.datasets.get(spec);
      const edt::Result& want = state->ref(ctx, spec);
      peers::PeerRun run = peers::run(p, {&img}, nlohmann::json::object(), n, warmup);
      me.result.items = static_cast<double>(img.size());
      edt::Result got;
      got.distance = std::move(run.output);
      const edt::Check chk = p.exact ? edt::compare_exact(img, want, got, kPeerRelTol)
                                     : edt::check_propagation(img, want, got);
      apply(me.result, edt_verdict(chk, p.exact, p.exact ? "distances within 1e-6 relative" : "distances"));
      return run;
    });
}

}  // namespace

void add_edt_cases(Context& ctx, std::vector<Case>& cases) {
  auto state = std::make_shared<EdtState>();
  const std::vector<const edt::Variant*> chosen = chosen_variants(ctx, edt::variants());
  auto wants = [&](const std::string& scope) { return wants_scope(ctx, scope); };

  for (const std::string& spec : ctx.specs) {
    for (const edt::Variant* vp : chosen) {
      const edt::Variant& v = *vp;
      auto base = [&](const std::string& scope) {
        Case c;
        c.gpu = v.gpu;
        c.result.family = "edt";
        c.result.variant = v.id;
        c.result.dataset = spec;
        c.result.scope = scope;
        c.result.unit = "GPx/s";
        c.result.extra = {{"sites", false}};
        return c;
      };

      if (v.gpu && v.make_plan && wants("kernel")) {
        Case c = base("kernel");
        struct Kernel {
          std::unique_ptr<edt::DevicePlan> plan;
          std::unique_ptr<KernelTimer> timer;
        };
        auto k = std::make_shared<Kernel>();
        const std::size_t index = cases.size();
        c.prepare = [&ctx, state, k, &v, spec, &cases, index] {
          Case& me = cases[index];
          const HostImage& img = ctx.datasets.get(spec);
          apply(me.result, state->verify(ctx, v, spec));
          me.result.items = static_cast<double>(img.size());
          k->timer = std::make_unique<KernelTimer>();
          k->plan = v.make_plan();
          k->plan->setup({img.dtype(), img.shape()}, timed_options(ctx.req), k->timer->stream());
          k->timer->upload({&img});
          edt::DevicePlan* plan = k->plan.get();
          k->timer->start([plan](const std::vector<const void*>& in, cudaStream_t s) { plan->compute(in, s); },
                          ctx.req.warmup, "edt/" + v.id);
        };
        c.sample = [k] { return k->timer->sample(); };
        c.finish = [&ctx, state, k, &v, spec, &cases, index] {
          Case& me = cases[index];
          // The output of the timed path itself must be right too (distances: no sites asked).
          const edt::Result got = k->plan->result(k->timer->stream());
          const HostImage& img = ctx.datasets.get(spec);
          const edt::Result& want = state->ref(ctx, spec);
          const edt::Check chk = v.exact ? edt::compare_exact(img, want, got) : edt::check_propagation(img, want, got);
          if (!chk.ok) apply(me.result, edt_verdict(chk, v.exact, "kernel-scope output"));
          k->plan.reset();
          k->timer.reset();
        };
        cases.push_back(std::move(c));
      }

      if (wants("end-to-end")) {
        Case c = base("end-to-end");
        const std::size_t index = cases.size();
        c.prepare = [&ctx, state, &v, spec, &cases, index] {
          Case& me = cases[index];
          const HostImage& img = ctx.datasets.get(spec);
          apply(me.result, state->verify(ctx, v, spec));
          me.result.items = static_cast<double>(img.size());
          harness::add_tiled(me.result.extra, state->stats[v.id + "|" + spec].tiled);
        };
        c.sample = [&ctx, &v, spec] {
          const HostImage& img = ctx.datasets.get(spec);
          const auto t0 = std::chrono::steady_clock::now();
          const edt::Result out = v.run(img, timed_options(ctx.req));
          const auto t1 = std::chrono::steady_clock::now();
          return std::chrono::duration<double, std::milli>(t1 - t0).count();
        };
        c.finish = [] {};
        cases.push_back(std::move(c));
      }
    }
    add_peer_cases(ctx, state, spec, cases);
  }
}

}  // namespace repix::bench
