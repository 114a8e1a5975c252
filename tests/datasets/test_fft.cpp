// The deterministic FFT against a direct DFT in long double, for power-of-two and Bluestein
// lengths, and the multi-dimensional transform against a separable direct DFT.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <vector>

#include "core/philox.hpp"
#include "datasets/fft.hpp"

namespace repix::datasets {
namespace {

using fft::Complex;
using LC = std::complex<long double>;

std::vector<Complex> random_line(std::int64_t n, std::uint64_t seed) {
  std::vector<Complex> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    v[i] = {philox::uniform_double(philox::bits_at(seed, 2 * i), 0) - 0.5,
            philox::uniform_double(philox::bits_at(seed, 2 * i + 1), 0) - 0.5};
  return v;
}

std::vector<LC> direct_dft(const std::vector<LC>& x, int sign) {
  const std::size_t n = x.size();
  const long double pi = 3.14159265358979323846264338327950288L;
  std::vector<LC> out(n);
  for (std::size_t k = 0; k < n; ++k) {
    LC s = 0;
    for (std::size_t j = 0; j < n; ++j) {
      const long double a = sign * 2 * pi * static_cast<long double>((j * k) % n) / n;
      s += x[j] * LC(std::cos(a), std::sin(a));
    }
    out[k] = s;
  }
  return out;
}

TEST(Fft, MatchesDirectDft) {
  for (std::int64_t n : {1, 2, 3, 4, 5, 7, 8, 12, 16, 17, 31, 64, 100, 128, 243, 256}) {
    for (int sign : {-1, 1}) {
      auto x = random_line(n, static_cast<std::uint64_t>(n));
      std::vector<LC> lx(x.size());
      for (std::size_t i = 0; i < x.size(); ++i) lx[i] = LC(x[i].re, x[i].im);
      const auto want = direct_dft(lx, sign);
      fft::Plan plan(n);
      std::vector<Complex> scratch(plan.scratch_size());
      plan.run(x.data(), sign, scratch.data());
      long double err = 0;
      for (std::int64_t k = 0; k < n; ++k) err = std::max(err, std::abs(LC(x[k].re, x[k].im) - want[k]));
      EXPECT_LT(static_cast<double>(err), 1e-13 * std::sqrt(static_cast<double>(n)) + 1e-15)
          << "n=" << n << " sign=" << sign;
    }
  }
}

TEST(Fft, InverseOfForwardIsNTimesInput) {
  for (std::int64_t n : {6, 1024, 1000}) {
    const auto x0 = random_line(n, 5);
    auto x = x0;
    fft::Plan plan(n);
    std::vector<Complex> scratch(plan.scratch_size());
    plan.run(x.data(), -1, scratch.data());
    plan.run(x.data(), 1, scratch.data());
    for (std::int64_t i = 0; i < n; ++i) {
      ASSERT_NEAR(x[i].re / n, x0[i].re, 1e-13) << n;
      ASSERT_NEAR(x[i].im / n, x0[i].im, 1e-13) << n;
    }
  }
}

TEST(Fft, MultiDimensionalIsSeparable) {
  // 3D transform of a shape with a pow2, an odd and an even non-pow2 axis (exercises the
  // batched strided gathers with a partial batch) against a direct 3D DFT.
  const Shape sh = Shape::d3(11, 4, 6);
  const auto x0 = random_line(sh.size(), 77);
  auto x = x0;
  fft::transform(x.data(), sh, 1);
  const long double pi = 3.14159265358979323846264338327950288L;
  long double err = 0;
  for (std::int64_t kz = 0; kz < sh.nz; ++kz)
    for (std::int64_t ky = 0; ky < sh.ny; ++ky)
      for (std::int64_t kx = 0; kx < sh.nx; ++kx) {
        LC s = 0;
        for (std::int64_t z = 0; z < sh.nz; ++z)
          for (std::int64_t y = 0; y < sh.ny; ++y)
            for (std::int64_t xx = 0; xx < sh.nx; ++xx) {
              const long double t = static_cast<long double>((xx * kx) % sh.nx) / sh.nx +
                                    static_cast<long double>((y * ky) % sh.ny) / sh.ny +
                                    static_cast<long double>((z * kz) % sh.nz) / sh.nz;
              const auto& v = x0[(z * sh.ny + y) * sh.nx + xx];
              s += LC(v.re, v.im) * LC(std::cos(2 * pi * t), std::sin(2 * pi * t));
            }
        const auto& g = x[(kz * sh.ny + ky) * sh.nx + kx];
        err = std::max(err, std::abs(LC(g.re, g.im) - s));
      }
  EXPECT_LT(static_cast<double>(err), 1e-12);
}

}  // namespace
}  // namespace repix::datasets
