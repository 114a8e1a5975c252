// `multi-device`: the lags split over the visible GPUs (thesis Table 5.8 split features; here the
// lags of both directions, so one feature scales too). GPU g runs gpu-opt end to end on its own
// copy of the image for part g of the lags (lag_part: contiguous lag ranges with equal pair
// counts); the parts' per-lag NMIs are disjoint (the others are 0), so adding them and summing
// the lags in order gives exactly what one GPU gives. End to end only (no device plan).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <exception>
#include <thread>

#include "ami/auto_mi/auto_mi.hpp"
#include "ami/auto_mi/variants.hpp"
#include "core/error.hpp"
#include "core/gpu.hpp"
#include "core/nvtx.hpp"

namespace repix::ami::auto_mi {

Features run_multi_device(const HostImage& labels, const Options& opt) {
  nvtx::Range range("auto-mi/multi-device");
  check_labels(labels);
  require_gpu();
  int devices = 0;
  REPIX_CUDA(cudaGetDeviceCount(&devices));
  if (opt.gpus < 0) throw Error("auto-mi: --gpus must be 0 (every GPU) or more");
  const int parts = opt.gpus > 0 ? std::min(opt.gpus, devices) : devices;
  const Variant gpu_opt = gpu::gpu_opt_variant();
  std::vector<Features> results(parts);
  std::vector<std::exception_ptr> errors(parts);
  std::vector<std::thread> workers;
  for (int g = 0; g < parts; ++g)
    workers.emplace_back([&, g] {
      try {
        REPIX_CUDA(cudaSetDevice(g));
        Options part = opt;
        part.part = g;
        part.parts = parts;
        results[g] = gpu_opt.run(labels, part);
      } catch (...) {
        errors[g] = std::current_exception();
      }
    });
  for (std::thread& t : workers) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  Features f = std::move(results[0]);
  std::int64_t pairs = f.stats.pairs;
  for (int g = 1; g < parts; ++g) {
    const Features& r = results[g];
    for (std::size_t i = 0; i < f.nmi_x.size(); ++i) f.nmi_x[i] += r.nmi_x[i];  // one part is nonzero: exact
    for (std::size_t i = 0; i < f.nmi_y.size(); ++i) f.nmi_y[i] += r.nmi_y[i];
    pairs += r.stats.pairs;
    f.stats.batches += r.stats.batches;
    f.stats.hot_flushes += r.stats.hot_flushes;
  }
  finish_features(f, labels.shape().ny, labels.shape().nx);
  if (pairs != f.stats.pairs) throw Error("auto-mi: internal: the GPUs' lag parts do not cover every pair once");
  return f;
}

}  // namespace repix::ami::auto_mi
