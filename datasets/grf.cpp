// grf: Gaussian random fields by spectral synthesis, as the ECC paper's authors generated them.
//
//   noise(k) = complex white noise (independent standard normals for re and im)
//   F(k)     = noise(k) * |k|^(-alpha/2), F(0) = 0       (|k| from integer FFT frequencies)
//   field    = Re(inverse FFT of F) over the whole grid
//   output   = round((field - mean) / std, 0.01) as float32 (population std, in double)
//
// The inverse FFT is left unnormalised: standardisation removes any constant scale.
// Memory: one complex<double> per element (512^3: 2 GiB) plus the float32 output.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "core/det_math.hpp"
#include "core/philox.hpp"
#include "datasets/datasets.hpp"
#include "datasets/fft.hpp"
#include "datasets/kind.hpp"

namespace repix::datasets::detail {
namespace {

using fft::Complex;

// Squared integer FFT frequency of index i on an axis of n points: i for the lower half,
// i - n for the upper half (numpy's fftfreq times n).
std::vector<std::int64_t> squared_freqs(std::int64_t n) {
  std::vector<std::int64_t> f(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t k = i < (n + 1) / 2 ? i : i - n;
    f[i] = k * k;
  }
  return f;
}

// |k|^(-alpha/2) from k2 = |k|^2 > 0. Integer alpha (the usual case, alpha = 3) uses
// q = sqrt(sqrt(k2)) = |k|^(1/2) and q^-alpha by repeated products: exact operations only and
// cheap. Other alphas go through det::pow_pos. Both are deterministic.
class Amplitude {
 public:
  explicit Amplitude(double alpha) : alpha_(alpha) {
    int_alpha_ = alpha == static_cast<double>(static_cast<int>(alpha)) && alpha >= -64 && alpha <= 64;
    ialpha_ = int_alpha_ ? static_cast<int>(alpha) : 0;
  }
  double operator()(std::int64_t k2) const {
    const double k2d = static_cast<double>(k2);
    if (!int_alpha_) return det::pow_pos(k2d, -alpha_ / 4.0);
    const double q = det::sqrt(det::sqrt(k2d));
    double p = 1.0;
    for (int i = 0; i < (ialpha_ < 0 ? -ialpha_ : ialpha_); ++i) p = p * q;
    return ialpha_ >= 0 ? 1.0 / p : p;
  }

 private:
  double alpha_;
  bool int_alpha_ = false;
  int ialpha_ = 0;
};

// Sum over the elements' real parts of f(re), in fixed blocks summed in a fixed order: the
// same result for any thread count.
template <class F>
double fixed_order_sum(const Complex* c, std::int64_t n, F f) {
  constexpr std::int64_t kBlock = 1 << 16;
  const std::int64_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<double> partial(static_cast<std::size_t>(blocks));
#pragma omp parallel for schedule(static)
  for (std::int64_t b = 0; b < blocks; ++b) {
    const std::int64_t end = std::min(n, (b + 1) * kBlock);
    double s = 0.0;
    for (std::int64_t i = b * kBlock; i < end; ++i) s += f(c[i].re);
    partial[b] = s;
  }
  double total = 0.0;
  for (double p : partial) total += p;
  return total;
}

void canonicalise(Spec& s) {
  s.params["alpha"] = format_double(s.get_double("alpha", 3.0));
  canonicalise_seed(s);
}

HostImage generate_grf(const Spec& s, bool pinned) {
  const Shape sh = s.shape;
  const std::int64_t n = sh.size();
  const std::uint64_t seed = s.get_u64("seed", 1);
  const Amplitude amplitude(s.get_double("alpha", 3.0));

  for (std::int64_t len : {sh.nx, sh.ny, sh.nz})
    if (len >= (std::int64_t(1) << 31)) throw Error("grf: axis length " + std::to_string(len) + " is too long for its FFT");
  // new[] without value-initialisation: every element is written below.
  std::unique_ptr<Complex[]> grid;
  try {
    grid.reset(new Complex[static_cast<std::size_t>(n)]);
  } catch (const std::bad_alloc&) {
    throw Error("grf:" + sh.str() + " needs " + std::to_string((n * 16) >> 20) +
                " MiB of host memory for its FFT (complex<double> per element); not available");
  }
  const auto fx = squared_freqs(sh.nx), fy = squared_freqs(sh.ny), fz = squared_freqs(sh.nz);
  // |k|^2 takes few distinct values on cube-ish grids (3 * 256^2 + 1 for 512^3): tabulate the
  // amplitude when the table is small (same function, so the same bits), else compute it.
  const std::int64_t k2_max = fx[sh.nx / 2] + fy[sh.ny / 2] + fz[sh.nz / 2];
  std::vector<double> table;
  if (k2_max < (std::int64_t(1) << 22)) {
    table.resize(static_cast<std::size_t>(k2_max + 1));
#pragma omp parallel for schedule(static)
    for (std::int64_t k2 = 1; k2 <= k2_max; ++k2) table[k2] = amplitude(k2);
  }
  const std::int64_t rows = sh.ny * sh.nz;
#pragma omp parallel for schedule(static)
  for (std::int64_t row = 0; row < rows; ++row) {
    const std::int64_t y = row % sh.ny, z = row / sh.ny;
    const std::int64_t kyz = fy[y] + fz[z];
    for (std::int64_t x = 0; x < sh.nx; ++x) {
      const std::int64_t i = row * sh.nx + x;
      const std::int64_t k2 = fx[x] + kyz;
      if (k2 == 0) {  // the DC term: zero mean
        grid[i] = {0.0, 0.0};
        continue;
      }
      double re, im;
      philox::normal_pair(philox::draw(seed, static_cast<std::uint64_t>(i), kStreamGrf), &re, &im);
      const double a = table.empty() ? amplitude(k2) : table[k2];
      grid[i] = {re * a, im * a};
    }
  }

  fft::transform(grid.get(), sh, +1);

  const double dn = static_cast<double>(n);
  const double mean = fixed_order_sum(grid.get(), n, [](double v) { return v; }) / dn;
  const double var = fixed_order_sum(grid.get(), n, [mean](double v) { return (v - mean) * (v - mean); }) / dn;
  const double sd = det::sqrt(var);

  HostImage img(DType::f32, sh, pinned);
  float* out = img.data<float>();
  // A grid with only the DC term (1 element) has no variance: it is all zeros.
  const bool flat = !(sd > 0.0);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    const double z = flat ? 0.0 : (grid[i].re - mean) / sd;
    out[i] = static_cast<float>(std::round(z * 100.0) / 100.0);  // std::round is exact
  }
  return img;
}

}  // namespace

Kind grf_kind() {
  Kind k = whole_image_kind("grf",
                            "Gaussian random field, power spectrum |k|^-alpha (ECC paper's inputs), float32, 0.01 steps",
                            {"alpha", "seed"}, canonicalise, DType::f32, generate_grf);
  // The complex<double> grid (16 bytes an element) beside the float32 output (4): 5x the output
  // (measured 4.97x at 4096^2).
  k.peak_factor = 5.0;
  return k;
}

}  // namespace repix::datasets::detail
