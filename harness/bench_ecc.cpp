// ECC cases for `repix bench`: every variant verified against `seq` on the same input, then
// timed in the scopes it supports (kernel: data already on the GPU; end-to-end: host in, host
// out; with-io: the input read from an .npy file inside each sample).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

#include "core/gpu.hpp"
#include "core/nvtx.hpp"
#include "datasets/datasets.hpp"
#include "datasets/io.hpp"
#include "ecc/ecc.hpp"
#include "ecc/gpu_opt.cuh"
#include "harness/bench.hpp"

namespace repix::bench {

namespace {

std::string describe_mismatch(const ecc::Curve& got, const ecc::Curve& want) {
  std::ostringstream o;
  o << "MISMATCH vs seq: ";
  if (got.values.size() != want.values.size())
    o << got.values.size() << " values instead of " << want.values.size() << "; ";
  const std::size_t n = std::min(got.values.size(), want.values.size());
  for (std::size_t i = 0; i < n; ++i)
    if (got.values[i] != want.values[i] || got.ecc[i] != want.ecc[i]) {
      o << "first difference at index " << i << ": got (" << got.values[i] << ", " << got.ecc[i]
        << "), want (" << want.values[i] << ", " << want.ecc[i] << ")";
      break;
    }
  return o.str();
}

// Per-dataset reference and per-(variant, dataset) verification, shared by the scopes.
struct EccState {
  std::map<std::string, ecc::Curve> reference;
  std::map<std::string, std::string> verification;  // key variant|dataset -> "" when ok
  const ecc::Curve& ref(Context& ctx, const std::string& spec) {
    auto it = reference.find(spec);
    if (it != reference.end()) return it->second;
    reference.clear();  // one dataset at a time
    const HostImage& img = ctx.datasets.get(spec);
    std::fprintf(stderr, "repix bench: reference (seq) on %s...\n", spec.c_str());
    ecc::Curve c = ecc::run_seq(img, {});
    report::DatasetInfo info = ctx.datasets.info(spec);
    info.distinct_values = static_cast<std::int64_t>(c.values.size());
    record_dataset(ctx, info);
    return reference.emplace(spec, std::move(c)).first->second;
  }
  // Runs the variant end to end once and checks it; returns "" or the mismatch text.
  const std::string& verify(Context& ctx, const ecc::Variant& v, const std::string& spec) {
    const std::string key = v.id + "|" + spec;
    auto it = verification.find(key);
    if (it != verification.end()) return it->second;
    const ecc::Curve& want = ref(ctx, spec);
    const ecc::Curve got = v.run(ctx.datasets.get(spec), {});
    return verification[key] = (got == want ? "" : describe_mismatch(got, want));
  }
};

void set_verified(report::Result& r, const std::string& mismatch, std::size_t nvalues) {
  r.verified = mismatch.empty();
  r.verification = mismatch.empty()
                       ? "exact match with seq (" + std::to_string(nvalues) + " values)"
                       : mismatch;
}

}  // namespace

void add_ecc_cases(Context& ctx, std::vector<Case>& cases) {
  auto state = std::make_shared<EccState>();
  const std::vector<const ecc::Variant*> chosen = chosen_variants(ctx, ecc::variants());
  auto wants = [&](const std::string& scope) { return wants_scope(ctx, scope); };

  for (const std::string& spec : ctx.specs)
    for (const ecc::Variant* vp : chosen) {
      const ecc::Variant& v = *vp;
      auto base = [&](const std::string& scope) {
        Case c;
        c.gpu = v.gpu;
        c.result.family = "ecc";
        c.result.variant = v.id;
        c.result.dataset = spec;
        c.result.scope = scope;
        c.result.unit = "GVox/s";
        return c;
      };

      if (v.gpu && v.make_plan && wants("kernel")) {
        Case c = base("kernel");
        c.result.bound = "dram-read";
        struct Kernel {
          std::unique_ptr<ecc::DevicePlan> plan;
          std::unique_ptr<KernelTimer> timer;
        };
        auto k = std::make_shared<Kernel>();
        const std::size_t index = cases.size();
        c.prepare = [&ctx, state, k, &v, spec, &cases, index] {
          Case& me = cases[index];
          const HostImage& img = ctx.datasets.get(spec);
          const std::string& mismatch = state->verify(ctx, v, spec);
          set_verified(me.result, mismatch, state->ref(ctx, spec).values.size());
          me.result.items = static_cast<double>(img.size());
          me.bytes_per_item = static_cast<double>(dtype_size(img.dtype()));
          k->timer = std::make_unique<KernelTimer>();
          k->plan = v.make_plan();
          k->plan->setup({img.dtype(), img.shape()}, {}, k->timer->stream());
          k->timer->upload({&img});
          ecc::DevicePlan* plan = k->plan.get();
          k->timer->start([plan](const std::vector<const void*>& in, cudaStream_t s) { plan->compute({in[0]}, s); },
                          ctx.req.warmup, "ecc/" + v.id);
        };
        c.sample = [k] { return k->timer->sample(); };
        c.finish = [&ctx, state, k, spec, &cases, index] {
          Case& me = cases[index];
          // The output of the timed path itself must be right, not only the end-to-end run's.
          const ecc::Curve got = k->plan->result(k->timer->stream());
          // gpu-opt's float path falls back to an exact sort when the values overflow its global
          // hash table: a different algorithm, so the report says which one was timed.
          if (const auto* opt = dynamic_cast<const ecc::OptPlan*>(k->plan.get()))
            me.result.extra["used_fallback"] = opt->used_fallback();
          const ecc::Curve& want = state->ref(ctx, spec);
          if (!(got == want)) {
            me.result.verified = false;
            me.result.verification = "kernel-scope output: " + describe_mismatch(got, want);
          }
          k->plan.reset();
          k->timer.reset();
        };
        cases.push_back(std::move(c));
      }

      if (wants("end-to-end")) {
        Case c = base("end-to-end");
        if (v.gpu) c.result.bound = "h2d-pinned";
        const std::size_t index = cases.size();
        c.prepare = [&ctx, state, &v, spec, &cases, index] {
          Case& me = cases[index];
          const HostImage& img = ctx.datasets.get(spec);
          set_verified(me.result, state->verify(ctx, v, spec), state->ref(ctx, spec).values.size());
          me.result.items = static_cast<double>(img.size());
          me.bytes_per_item = static_cast<double>(dtype_size(img.dtype()));
        };
        c.sample = [&ctx, &v, spec] {
          const HostImage& img = ctx.datasets.get(spec);
          const auto t0 = std::chrono::steady_clock::now();
          const ecc::Curve out = v.run(img, {});
          const auto t1 = std::chrono::steady_clock::now();
          return std::chrono::duration<double, std::milli>(t1 - t0).count();
        };
        c.finish = [] {};
        cases.push_back(std::move(c));
      }

      if (wants("with-io")) {
        // The dataset is written once to a temporary .npy (untimed); each sample reads it back
        // and runs the variant. Streaming variants stream straight from the file, never holding
        // it whole. The file usually sits in the OS page cache after the write (dropping caches
        // needs root): this measures the read path (syscalls, copies, pinning), not the disk.
        Case c = base("with-io");
        if (v.gpu) c.result.bound = "h2d-pinned";
        c.result.extra["io"] = "npy file written untimed before sampling; read inside every sample (OS page cache state not controlled)";
        struct Io {
          std::string path;
          ecc::Curve last;
        };
        auto io = std::make_shared<Io>();
        const std::size_t index = cases.size();
        c.prepare = [&ctx, state, io, &v, spec, &cases, index] {
          Case& me = cases[index];
          const HostImage& img = ctx.datasets.get(spec);
          set_verified(me.result, state->verify(ctx, v, spec), state->ref(ctx, spec).values.size());
          me.result.items = static_cast<double>(img.size());
          me.bytes_per_item = static_cast<double>(dtype_size(img.dtype()));
          char name[96];  // the pid keeps concurrent runs on the same dataset apart
          std::snprintf(name, sizeof name, "repix-with-io-%ld-%016llx.npy", static_cast<long>(::getpid()),
                        static_cast<unsigned long long>(img.content_hash()));
          io->path = (std::filesystem::temp_directory_path() / name).string();
          datasets::write_npy(img, io->path);
        };
        c.sample = [io, &v, gpu = ctx.gpu] {
          const auto t0 = std::chrono::steady_clock::now();
          if (v.run_source) {
            auto src = datasets::open_file_source(datasets::Spec::parse("file:" + io->path));
            io->last = v.run_source(*src, {});
          } else {
            const HostImage img = datasets::read_npy(io->path, /*pinned=*/gpu && v.gpu);
            io->last = v.run(img, {});
          }
          const auto t1 = std::chrono::steady_clock::now();
          return std::chrono::duration<double, std::milli>(t1 - t0).count();
        };
        c.finish = [&ctx, state, io, spec, &cases, index] {
          Case& me = cases[index];
          const ecc::Curve& want = state->ref(ctx, spec);
          if (!(io->last == want)) {
            me.result.verified = false;
            me.result.verification = "with-io output: " + describe_mismatch(io->last, want);
          }
          std::error_code ec;
          std::filesystem::remove(io->path, ec);
          io->last = {};
        };
        cases.push_back(std::move(c));
      }
    }
}

}  // namespace repix::bench
