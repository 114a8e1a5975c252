// Input checks, the working image and small helpers shared by the CPU reconstruct variants.
#include "reconstruct/common.hpp"

#include <omp.h>

#include <cmath>
#include <sstream>

namespace repix::reconstruct {

namespace {

// Below this many pixels the O(n) passes run on one thread: waking a team costs more than the
// pass (and far more on a busy machine).
constexpr std::int64_t kParallelMin = 1 << 16;
int team(std::int64_t n, int threads) { return n >= kParallelMin ? std::max(1, threads) : 1; }

std::string where(const Shape& s, std::int64_t i) {
  return "(x=" + std::to_string(i % s.nx) + ", y=" + std::to_string(i / s.nx) + ")";
}

// Smallest linear index in [0, n) where bad(i) holds, or n. Blocks of 4096 are tested with a
// branch-free OR (vectorised), the first bad block is searched element by element; the answer
// does not depend on the thread count.
template <class Bad>
std::int64_t first_where(std::int64_t n, int threads, Bad bad) {
  constexpr std::int64_t kBlock = 4096;
  const std::int64_t blocks = (n + kBlock - 1) / kBlock;
  std::int64_t first_block = blocks;
#pragma omp parallel for num_threads(team(n, threads)) reduction(min : first_block) schedule(static)
  for (std::int64_t b = 0; b < blocks; ++b) {
    const std::int64_t e = std::min(n, (b + 1) * kBlock);
    unsigned any = 0;  // an integer OR vectorises where a bool one does not (GCC 12)
    for (std::int64_t i = b * kBlock; i < e; ++i) any |= static_cast<unsigned>(bad(i));
    if (any && b < first_block) first_block = b;
  }
  if (first_block == blocks) return n;
  for (std::int64_t i = first_block * kBlock;; ++i)
    if (bad(i)) return i;
}

std::string value_text(double v) {
  std::ostringstream o;
  o.precision(9);
  o << v;
  return o.str();
}

// The values' checks; a place is said in an image of shape `whole` in which these pixels start at
// linear index `first_index` (the image itself, or a distributed run's rows).
template <class T>
void check_values(const HostImage& marker, const HostImage& mask, bool clip, int threads, const Shape& whole,
                  std::int64_t first_index) {
  const T* mk = marker.data<T>();
  const T* ms = mask.data<T>();
  const std::int64_t n = mask.size();
  if constexpr (std::is_same_v<T, float>) {
    for (const auto& [img, name] : {std::pair{mk, "marker"}, std::pair{ms, "mask"}}) {
      const float* d = img;
      const std::int64_t i = first_where(n, threads, [d](std::int64_t k) { return !std::isfinite(d[k]); });
      if (i < n) throw_nonfinite(name, whole, first_index + i, std::isnan(d[i]));
    }
  }
  if (clip) return;
  const std::int64_t i = first_where(n, threads, [mk, ms](std::int64_t k) { return ms[k] < mk[k]; });
  if (i < n) throw_marker_above(whole, first_index + i, mk[i], ms[i]);
}

}  // namespace

DevicePlan::DeviceResult DevicePlan::device_result() const {
  throw Error("internal: this reconstruct plan keeps no device result");
}

void check_inputs(const HostImage& marker, const HostImage& mask, const Options& opt) {
  detail::check_inputs_threads(marker, mask, opt, detail::thread_count(opt));
}

namespace detail {

int thread_count(const Options& opt) { return opt.threads > 0 ? opt.threads : omp_get_max_threads(); }

void check_inputs_threads(const HostImage& marker, const HostImage& mask, const Options& opt, int threads) {
  check_descriptions({marker.dtype(), marker.shape()}, {mask.dtype(), mask.shape()}, opt);
  threads = std::max(1, threads);
  dispatch_dtype(mask.dtype(), [&](auto tag) {
    check_values<typename decltype(tag)::type>(marker, mask, opt.clip, threads, mask.shape(), 0);
  });
}

}  // namespace detail

void check_part(const HostImage& marker, const HostImage& mask, const Options& opt, const Shape& whole,
                std::int64_t first_index) {
  check_descriptions({marker.dtype(), whole}, {mask.dtype(), whole}, opt);
  if (marker.shape() != mask.shape() || marker.dtype() != mask.dtype())
    throw Error("internal: a part's marker and mask differ in shape or type");
  dispatch_dtype(mask.dtype(), [&](auto tag) {
    check_values<typename decltype(tag)::type>(marker, mask, opt.clip, detail::thread_count(opt), whole, first_index);
  });
}

void check_descriptions(const InputDesc& marker, const InputDesc& mask, const Options& opt) {
  if (opt.connectivity != 4 && opt.connectivity != 8)
    throw Error("connectivity must be 4 or 8, got " + std::to_string(opt.connectivity));
  for (const auto& [img, name] : {std::pair{&marker, "marker"}, std::pair{&mask, "mask"}}) {
    if (img->shape.size() <= 0) throw Error(std::string("the ") + name + " is empty");
    if (img->shape.ndim != 2)
      throw Error(std::string("the ") + name + " is " + std::to_string(img->shape.ndim) + "D (" + img->shape.str() +
                  "): reconstruction takes 2D images");
  }
  if (marker.shape != mask.shape)
    throw Error("marker and mask shapes differ: " + marker.shape.str() + " vs " + mask.shape.str());
  if (marker.dtype != mask.dtype)
    throw Error("marker and mask dtypes differ: " + dtype_name(marker.dtype) + " vs " + dtype_name(mask.dtype));
  // Packed queue entries hold x and y in 32 bits each.
  if (mask.shape.nx >= (std::int64_t(1) << 32) || mask.shape.ny >= (std::int64_t(1) << 32))
    throw Error("image " + mask.shape.str() + " is too large (at most 2^32-1 pixels per side)");
}

void throw_nonfinite(const std::string& name, const Shape& shape, std::int64_t i, bool is_nan) {
  throw Error(std::string(is_nan ? "NaN" : "infinity") + " in the " + name + " at " + where(shape, i) +
              ": reconstruction needs finite values");
}

void throw_marker_above(const Shape& shape, std::int64_t i, double marker, double mask) {
  throw Error("marker above mask at " + where(shape, i) + " (" + value_text(marker) + " > " + value_text(mask) +
              "): reconstruction needs marker <= mask; clip the marker (--clip) to allow it");
}

namespace detail {

namespace {
template <class T>
void clip_into(HostImage& J, const HostImage& mask, int threads) {
  T* j = J.data<T>();
  const T* m = mask.data<T>();
  const std::int64_t n = J.size();
#pragma omp parallel for num_threads(team(n, threads)) schedule(static)
  for (std::int64_t i = 0; i < n; ++i) j[i] = vmin(j[i], m[i]);
}
}  // namespace

HostImage start_image(const HostImage& marker, const HostImage& mask, const Options& opt, int threads) {
  threads = std::max(1, threads);
  check_inputs_threads(marker, mask, opt, threads);
  HostImage J(mask.dtype(), mask.shape());
  // Copied in parallel blocks: a serial copy of a large image would be a fixed cost that no
  // thread count removes (and it spreads the first-touch page faults over the threads).
  const auto bytes = static_cast<std::int64_t>(marker.bytes());
  constexpr std::int64_t kBlock = 1 << 20;
  const std::int64_t blocks = (bytes + kBlock - 1) / kBlock;
  const auto* src = static_cast<const char*>(marker.raw());
  auto* dst = static_cast<char*>(J.raw());
#pragma omp parallel for num_threads(team(marker.size(), threads)) schedule(static)
  for (std::int64_t b = 0; b < blocks; ++b)
    std::memcpy(dst + b * kBlock, src + b * kBlock, static_cast<std::size_t>(std::min(kBlock, bytes - b * kBlock)));
  if (opt.clip) {
    dispatch_dtype(mask.dtype(), [&](auto tag) { clip_into<typename decltype(tag)::type>(J, mask, threads); });
  }
  return J;
}

void canonical_zeros(HostImage& img, int threads) {
  if (img.dtype() != DType::f32) return;
  float* d = img.data<float>();
  const std::int64_t n = img.size();
#pragma omp parallel for num_threads(team(n, threads)) schedule(static)
  for (std::int64_t i = 0; i < n; ++i)
    if (d[i] == 0.0f) d[i] = 0.0f;
}

}  // namespace detail
}  // namespace repix::reconstruct
