// Property checks of edt results (see verify.hpp). Parallel over rows; each thread keeps
// the smallest violating index it saw, and the message is built for the smallest of all, so the
// report does not depend on the thread count.
#include "edt/verify.hpp"

#include <omp.h>

#include <cmath>
#include <functional>
#include <limits>
#include <sstream>

#include "edt/detail.hpp"

namespace repix::edt {

nlohmann::json Check::errors() const {
  return {{"max_abs", max_abs}, {"pixels_off", pixels_off}, {"fraction_off", fraction_off()}, {"pixels", pixels}};
}

namespace {

// Runs `check(i)` (returns "" or a violation) over all pixels and accumulates error statistics
// with `err(i, &abs, &off)`. Fills c.
void scan(std::int64_t n, std::int64_t nx, Check& c, const std::function<std::string(std::int64_t)>& check,
          const std::function<void(std::int64_t, double&, bool&)>& err) {
  std::int64_t first = n, off = 0;
  double max_abs = 0;
  const std::int64_t ny = n / nx;
#pragma omp parallel for schedule(static) reduction(min : first) reduction(+ : off) reduction(max : max_abs)
  for (std::int64_t y = 0; y < ny; ++y)
    for (std::int64_t i = y * nx; i < (y + 1) * nx; ++i) {
      if (i < first && !check(i).empty()) first = i;
      double a = 0;
      bool o = false;
      err(i, a, o);
      off += o;
      if (a > max_abs) max_abs = a;
    }
  c.pixels = n;
  c.pixels_off = off;
  c.max_abs = max_abs;
  if (first < n) {
    c.ok = false;
    c.first_violation = "pixel x=" + std::to_string(first % nx) + ", y=" + std::to_string(first / nx) + ": " +
                        check(first);
  }
}

bool same_bits(float a, float b) { return a == b || (std::isnan(a) && std::isnan(b)); }

std::string fmt(double v) {
  std::ostringstream o;
  o.precision(9);
  o << v;
  return o.str();
}

std::string check_sizes(const HostImage& input, const Result& exact, const Result& got) {
  const Shape& s = input.shape();
  if (exact.sites.size() != static_cast<std::size_t>(s.size())) return "internal: exact result has no sites";
  if (got.distance.shape() != s || got.distance.dtype() != DType::f32)
    return "distance is " + dtype_name(got.distance.dtype()) + " " + got.distance.shape().str() + ", want float32 " +
           s.str();
  if (!got.sites.empty() && got.sites.size() != static_cast<std::size_t>(s.size()))
    return "sites has " + std::to_string(got.sites.size()) + " entries, want " + std::to_string(s.size());
  return "";
}

}  // namespace

Check check_propagation(const HostImage& input, const Result& exact, const Result& got) {
  Check c;
  if (std::string e = check_sizes(input, exact, got); !e.empty()) {
    c.ok = false;
    c.first_violation = e;
    return c;
  }
  const Shape& sh = input.shape();
  const std::int64_t nx = sh.nx, ny = sh.ny, n = sh.size();
  const std::vector<std::uint8_t> bg = background_mask(input);
  const float* d = got.distance.data<float>();
  const bool has_sites = !got.sites.empty();
  const bool none = exact.sites[0] < 0;  // the image has no background at all
  auto exact_sq = [&](std::int64_t i) {
    const std::int64_t s = exact.sites[i];
    return sq_dist(i % nx, i / nx, s % nx, s / nx);
  };
  auto valid_site = [&](std::int64_t s) { return s >= 0 && s < n && bg[s]; };
  auto check = [&](std::int64_t i) -> std::string {
    const std::int64_t x = i % nx, y = i / nx;
    if (none) {
      if (!std::isinf(d[i]) || d[i] < 0) return "image has no background but distance is " + fmt(d[i]);
      if (has_sites && got.sites[i] != -1) return "image has no background but site is " + std::to_string(got.sites[i]);
      return "";
    }
    const std::int64_t e2 = exact_sq(i);
    std::int64_t d2 = -1;  // the candidate's squared distance, when known exactly
    if (has_sites) {
      const std::int64_t s = got.sites[i];
      if (!valid_site(s)) return "site " + std::to_string(s) + " is not a background pixel";
      d2 = sq_dist(x, y, s % nx, s / nx);
      if (!same_bits(d[i], distance_from_sq(d2)))
        return "distance " + fmt(d[i]) + " is not the distance to its site (" + fmt(distance_from_sq(d2)) + ")";
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          const std::int64_t qx = x + dx, qy = y + dy;
          if ((dx == 0 && dy == 0) || qx < 0 || qy < 0 || qx >= nx || qy >= ny) continue;
          const std::int64_t t = got.sites[qy * nx + qx];
          if (valid_site(t) && sq_dist(x, y, t % nx, t / nx) < d2)
            return "the site of neighbour (" + std::to_string(qx) + ", " + std::to_string(qy) +
                   ") is strictly closer (squared " + std::to_string(sq_dist(x, y, t % nx, t / nx)) + " < " +
                   std::to_string(d2) + ")";
        }
    }
    const double ed = std::sqrt(static_cast<double>(e2));
    if (e2 < kExactBelowSq) {
      if (has_sites ? d2 != e2 : !same_bits(d[i], distance_from_sq(e2)))
        return "distance " + fmt(d[i]) + " differs from the exact " + fmt(ed) + " below 13 px";
      return "";
    }
    if (!(d[i] >= distance_from_sq(e2))) return "distance " + fmt(d[i]) + " is below the exact " + fmt(ed);
    if (static_cast<double>(d[i]) - ed > kMaxPropagationError)
      return "distance " + fmt(d[i]) + " is more than 0.29 px above the exact " + fmt(ed);
    return "";
  };
  auto err = [&](std::int64_t i, double& a, bool& off) {
    if (none || !std::isfinite(d[i])) return;
    // Against the exact distance as every variant writes it, so float rounding is not an error.
    const float e = distance_from_sq(exact_sq(i));
    a = std::fabs(static_cast<double>(d[i]) - e);
    off = !same_bits(d[i], e);
  };
  scan(n, nx, c, check, err);
  return c;
}

Check compare_exact(const HostImage& input, const Result& exact, const Result& got, double rel_tol) {
  Check c;
  if (std::string e = check_sizes(input, exact, got); !e.empty()) {
    c.ok = false;
    c.first_violation = e;
    return c;
  }
  const Shape& sh = input.shape();
  const std::int64_t nx = sh.nx, n = sh.size();
  const std::vector<std::uint8_t> bg = background_mask(input);
  const float* d = got.distance.data<float>();
  const float* w = exact.distance.data<float>();
  auto check = [&](std::int64_t i) -> std::string {
    const bool same = same_bits(d[i], w[i]) ||
                      (rel_tol > 0 && std::isfinite(w[i]) && std::fabs(static_cast<double>(d[i]) - w[i]) <=
                                                                 rel_tol * std::max(1.0, static_cast<double>(w[i])));
    if (!same) return "distance " + fmt(d[i]) + " differs from seq-exact's " + fmt(w[i]);
    if (got.sites.empty()) return "";
    const std::int64_t s = got.sites[i], e = exact.sites[i];
    if (e < 0) return s == -1 ? "" : "image has no background but site is " + std::to_string(s);
    if (s < 0 || s >= n || !bg[s]) return "site " + std::to_string(s) + " is not a background pixel";
    const std::int64_t x = i % nx, y = i / nx;
    if (sq_dist(x, y, s % nx, s / nx) != sq_dist(x, y, e % nx, e / nx))
      return "site " + std::to_string(s) + " is not a nearest background pixel";
    return "";
  };
  auto err = [&](std::int64_t i, double& a, bool& off) {
    if (!std::isfinite(w[i])) return;
    a = std::fabs(static_cast<double>(d[i]) - w[i]);
    off = !same_bits(d[i], w[i]);
  };
  scan(n, nx, c, check, err);
  return c;
}

}  // namespace repix::edt
