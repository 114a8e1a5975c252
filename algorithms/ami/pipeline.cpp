// The ami pipeline's host engine: ranklet run -> quantise each plane to Q - 1 (uint8) -> auto-mi
// run per plane, with the stages' registered variants; and the descriptor's shared pieces (checks,
// names, CSV).
//
// GPU pairs whose stages both have plans run through the device-resident plan instead
// (pipeline_gpu.cu: no download of the ranklet planes); multi-device, whose feature stage has no
// plan, runs here: the ranklet planes come to the host and each plane's labels go back up.
#include <omp.h>

#include <chrono>
#include <cstdio>

#include "ami/ami.hpp"
#include "ami/auto_mi/auto_mi.hpp"
#include "ami/ranklet/ranklet.hpp"
#include "ami/variants.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"

namespace repix::ami {

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

Result run_pipeline(const ranklet::Variant& rv, const auto_mi::Variant& av, const HostImage& input, const Options& opt) {
  check_input(input, opt);
  const std::int64_t width = input.shape().nx, height = input.shape().ny, n = width * height;

  ranklet::Options ro;
  ro.windows = opt.windows;
  ro.threads = opt.threads;
  auto t0 = std::chrono::steady_clock::now();
  const ranklet::Result planes = rv.run(input, ro);
  Result res;
  res.windows = opt.windows;
  res.stats.ranklet_ms = ms_since(t0);

  auto_mi::Options ao;
  ao.threads = opt.threads;
  ao.gpus = opt.gpus;
  ao.flush_level = opt.flush_level;
  HostImage labels(DType::u8, Shape::d2(width, height), av.gpu);  // pinned for the GPU's upload
  res.features.resize(opt.windows.size() * kFeaturesPerWindow);
  for (std::size_t w = 0; w < opt.windows.size(); ++w)
    for (int o = 0; o < kOrientations; ++o) {
      t0 = std::chrono::steady_clock::now();
      quantise_plane(ranklet::plane(planes, w, o), n, opt.windows[w], labels.data<std::uint8_t>(), opt.threads);
      res.stats.quantise_ms += ms_since(t0);
      t0 = std::chrono::steady_clock::now();
      const auto_mi::Features f = av.run(labels, ao);
      res.stats.auto_mi_ms += ms_since(t0);
      res.stats.pairs += f.stats.pairs;
      res.features[feature_index(w, o, 0)] = f.horizontal;
      res.features[feature_index(w, o, 1)] = f.vertical;
    }
  return res;
}

}  // namespace

Variant make_pipeline(std::string id, std::string step, std::string description, std::string ranklet_id,
                      std::string auto_mi_id) {
  const ranklet::Variant& rv = ranklet::find_variant(ranklet_id);
  const auto_mi::Variant& av = auto_mi::find_variant(auto_mi_id);
  Variant v;
  v.id = std::move(id);
  v.gpu = rv.gpu || av.gpu;
  v.step = std::move(step);
  v.description = std::move(description);
  if (rv.make_plan && av.make_plan) {
    v.make_plan = [&rv, &av] { return make_gpu_plan(rv, av); };
    const std::string range = "ami/" + v.id;
    v.run = [&rv, &av, range](const HostImage& input, const Options& opt) {
      check_input(input, opt);
      return run_gpu_plan(rv, av, input, opt, range.c_str());
    };
  } else {
    v.run = [&rv, &av](const HostImage& input, const Options& opt) { return run_pipeline(rv, av, input, opt); };
  }
  v.ranklet_id = std::move(ranklet_id);
  v.auto_mi_id = std::move(auto_mi_id);
  return v;
}

const char* orientation_name(int o) {
  static const char* const names[kOrientations] = {"H", "V", "D"};
  return names[o];
}

const char* direction_name(int d) { return d == 0 ? "horizontal" : "vertical"; }

void check_input(const HostImage& img, const Options& opt) { check_input(InputDesc{img.dtype(), img.shape()}, opt); }

void check_input(const InputDesc& in, const Options& opt) {
  ranklet::check_input(in);
  ranklet::check_windows(opt.windows);
}

void quantise_plane(const float* plane, std::int64_t n, int r, std::uint8_t* labels, int threads) {
  const int t = threads == 1 ? 1 : threads > 0 ? threads : omp_get_max_threads();
  // Q is 1..256; Q - 1 fits a byte and keeps the order of the levels (ami.hpp).
#pragma omp parallel for num_threads(t) schedule(static) if (t > 1 && n > (1 << 16))
  for (std::int64_t i = 0; i < n; ++i) labels[i] = label_of(plane[i], r);
}

void write_csv(const Result& r, const std::string& path) {
  std::string out = "window,orientation,direction,ami\n";
  char buf[160];
  for (std::size_t w = 0; w < r.windows.size(); ++w)
    for (int o = 0; o < kOrientations; ++o)
      for (int d = 0; d < 2; ++d) {
        std::snprintf(buf, sizeof buf, "%d,%s,%s,%.17g\n", r.windows[w], orientation_name(o), direction_name(d),
                      r.features[feature_index(w, o, d)]);
        out += buf;
      }
  write_file_atomic(path, out);
}

}  // namespace repix::ami
