// Input checks and helpers shared by the CPU edt variants.
#include <omp.h>

#include <cmath>
#include <string>

#include "core/error.hpp"
#include "edt/detail.hpp"

namespace repix::edt {

void check_input(const HostImage& input) { check_part(input, input.shape(), 0); }

void check_part(const HostImage& input, const Shape& whole, std::int64_t first_index) {
  check_description(whole);
  if (input.dtype() != DType::f32) return;
  const float* p = input.data<float>();
  const std::int64_t n = input.size();
  std::int64_t first = n;  // smallest non-finite index, so the message does not depend on threads
#pragma omp parallel for reduction(min : first) schedule(static)
  for (std::int64_t i = 0; i < n; ++i)
    if (!std::isfinite(p[i]) && i < first) first = i;
  if (first < n) throw_nonfinite(whole, first_index + first, std::isnan(p[first]));
}

void check_description(const Shape& s) {
  if (s.size() <= 0) throw Error("edt: empty image");
  if (s.ndim != 2)
    throw Error("edt: needs a 2D image, got " + std::to_string(s.ndim) + "D shape " + s.str());
  if (s.nx > kMaxSide || s.ny > kMaxSide)
    throw Error("edt: image " + s.str() + " has a side over 2^30 pixels");
}

void throw_nonfinite(const Shape& s, std::int64_t i, bool is_nan) {
  throw Error(std::string("edt: input has ") + (is_nan ? "NaN" : "inf") + " at x=" + std::to_string(i % s.nx) +
              ", y=" + std::to_string(i / s.nx));
}

std::vector<std::uint8_t> background_mask(const HostImage& input, int threads) {
  std::vector<std::uint8_t> bg(static_cast<std::size_t>(input.size()));
  const int nt = threads > 0 ? threads : omp_get_max_threads();
  visit_image(input, [&](auto v) {
    const std::int64_t n = v.size();
#pragma omp parallel for num_threads(nt) schedule(static)
    for (std::int64_t i = 0; i < n; ++i) bg[i] = v.data[i] == 0;
  });
  return bg;
}

Result result_from_packed(const Shape& shape, const std::vector<std::int64_t>& vr, bool want_sites, int threads) {
  Result r;
  r.distance = HostImage(DType::f32, shape);
  float* d = r.distance.data<float>();
  if (want_sites) r.sites.resize(vr.size());
  const std::int64_t nx = shape.nx, ny = shape.ny;
  const int nt = threads > 0 ? threads : omp_get_max_threads();
#pragma omp parallel for num_threads(nt) schedule(static)
  for (std::int64_t y = 0; y < ny; ++y)
    for (std::int64_t x = 0; x < nx; ++x) {
      const std::int64_t i = y * nx + x, s = vr[i];
      d[i] = distance_to_site(x, y, s);
      if (want_sites) r.sites[i] = linear_site(s, nx);
    }
  return r;
}

}  // namespace repix::edt
