#include "datasets/fft.hpp"

#include <omp.h>

#include <algorithm>

#include "core/det_math.hpp"
#include "core/error.hpp"

// Everything below is plain +, -, * on doubles in a fixed order (no std::complex: its operator*
// goes through __muldc3 for C99 NaN rules, which is slow). This file is compiled with
// -ffp-contract=off, so no FMA changes the bits.
namespace repix::datasets::fft {
namespace {

inline Complex cmul(Complex a, Complex b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
inline Complex conj(Complex a) { return {a.re, -a.im}; }

bool is_pow2(std::int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

// exp(i 2 pi t) with t in turns.
Complex expi_turns(double t) {
  Complex c;
  det::sincos_turns(t, &c.im, &c.re);
  return c;
}

}  // namespace

Plan::Plan(std::int64_t n) : n_(n) {
  if (n < 1 || n >= (std::int64_t(1) << 31))
    throw Error("internal: FFT length " + std::to_string(n) + " out of range");
  pow2_ = is_pow2(n);
  if (pow2_) {
    int log2n = 0;
    while ((std::int64_t(1) << log2n) < n) ++log2n;
    twiddle_.resize(static_cast<std::size_t>(n / 2));
    for (std::int64_t k = 0; k < n / 2; ++k)
      twiddle_[k] = expi_turns(-static_cast<double>(k) / static_cast<double>(n));
    bitrev_.resize(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
      std::uint32_t r = 0;
      for (int b = 0; b < log2n; ++b)
        if (i & (std::int64_t(1) << b)) r |= 1u << (log2n - 1 - b);
      bitrev_[i] = r;
    }
    return;
  }
  // Bluestein: j k = (j^2 + k^2 - (k-j)^2) / 2 turns the DFT into a convolution with the chirp,
  // done as a cyclic convolution of length m >= 2n-1 by power-of-two FFTs.
  std::int64_t m = 1;
  while (m < 2 * n - 1) m <<= 1;
  inner_ = std::make_unique<Plan>(m);
  chirp_.resize(static_cast<std::size_t>(n));
  const std::uint64_t two_n = 2 * static_cast<std::uint64_t>(n);
  for (std::int64_t j = 0; j < n; ++j) {
    // exp(-i pi j^2 / n) = exp(-2 pi i (j^2 mod 2n) / (2n)): exact integer reduction first.
    const std::uint64_t r = (static_cast<std::uint64_t>(j) * static_cast<std::uint64_t>(j)) % two_n;
    chirp_[j] = expi_turns(-static_cast<double>(r) / static_cast<double>(two_n));
  }
  // b_d = conj(c_|d|) on d = -(n-1)..n-1, wrapped into [0, m); its transform, once per sign.
  for (int sign : {-1, 1}) {
    std::vector<Complex> b(static_cast<std::size_t>(m), Complex{0.0, 0.0});
    for (std::int64_t j = 0; j < n; ++j) {
      // For sign -1 the chirp is c, so b = conj(c); for sign +1 the chirp is conj(c), b = c.
      const Complex v = sign < 0 ? conj(chirp_[j]) : chirp_[j];
      b[j] = v;
      if (j > 0) b[m - j] = v;
    }
    inner_->run(b.data(), -1, nullptr);
    (sign < 0 ? bspec_fwd_ : bspec_inv_) = std::move(b);
  }
}

Plan::~Plan() = default;

std::size_t Plan::scratch_size() const { return pow2_ ? 0 : static_cast<std::size_t>(inner_->size()); }

void Plan::run(Complex* data, int sign, Complex* scratch) const {
  if (n_ == 1) return;
  if (pow2_) run_pow2(data, sign);
  else run_bluestein(data, sign, scratch);
}

void Plan::run_pow2(Complex* a, int sign) const {
  const std::int64_t n = n_;
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t r = bitrev_[i];
    if (i < r) std::swap(a[i], a[r]);
  }
  // First stage (twiddle 1) without multiplications.
  for (std::int64_t i = 0; i < n; i += 2) {
    const Complex u = a[i], v = a[i + 1];
    a[i] = {u.re + v.re, u.im + v.im};
    a[i + 1] = {u.re - v.re, u.im - v.im};
  }
  // Iterative decimation-in-time butterflies; the inverse uses the conjugate twiddles.
  const double s = sign < 0 ? 1.0 : -1.0;  // multiplies the twiddle's imaginary part (exact)
  for (std::int64_t half = 2; half < n; half <<= 1) {
    const std::int64_t step = n / (2 * half);
    for (std::int64_t j = 0; j < half; ++j) {
      const Complex w = {twiddle_[j * step].re, s * twiddle_[j * step].im};
      for (std::int64_t start = 0; start < n; start += 2 * half) {
        Complex* p = a + start + j;
        const Complex u = p[0];
        const Complex v = cmul(p[half], w);
        p[0] = {u.re + v.re, u.im + v.im};
        p[half] = {u.re - v.re, u.im - v.im};
      }
    }
  }
}

void Plan::run_bluestein(Complex* x, int sign, Complex* a) const {
  const std::int64_t n = n_, m = inner_->size();
  const std::vector<Complex>& bspec = sign < 0 ? bspec_fwd_ : bspec_inv_;
  for (std::int64_t j = 0; j < n; ++j) a[j] = cmul(x[j], sign < 0 ? chirp_[j] : conj(chirp_[j]));
  std::fill(a + n, a + m, Complex{0.0, 0.0});
  inner_->run(a, -1, nullptr);
  for (std::int64_t j = 0; j < m; ++j) a[j] = cmul(a[j], bspec[j]);
  inner_->run(a, 1, nullptr);
  const double inv_m = 1.0 / static_cast<double>(m);  // a power of two: exact scaling
  for (std::int64_t k = 0; k < n; ++k) {
    const Complex v = cmul(a[k], sign < 0 ? chirp_[k] : conj(chirp_[k]));
    x[k] = {v.re * inv_m, v.im * inv_m};
  }
}

namespace {

// Transforms the lines base(o, x) + j*stride, j < n, for o < outer and x < nx, where
// base(o, x) = o*outer_stride + x. Lines of consecutive x are gathered in batches so that every
// cache line read from the grid is used whole.
void strided_axis(Complex* data, const Plan& plan, std::int64_t stride, std::int64_t nx,
                  std::int64_t outer, std::int64_t outer_stride, int sign) {
  constexpr std::int64_t kBatch = 8;
  const std::int64_t n = plan.size();
  const std::int64_t xblocks = (nx + kBatch - 1) / kBatch;
  const std::int64_t tasks = outer * xblocks;
#pragma omp parallel
  {
    std::vector<Complex> buf(static_cast<std::size_t>(kBatch * n));
    std::vector<Complex> scratch(plan.scratch_size());
#pragma omp for schedule(dynamic, 4)
    for (std::int64_t t = 0; t < tasks; ++t) {
      const std::int64_t o = t / xblocks, x0 = (t % xblocks) * kBatch;
      const std::int64_t bw = std::min(kBatch, nx - x0);
      Complex* base = data + o * outer_stride + x0;
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t b = 0; b < bw; ++b) buf[b * n + j] = base[j * stride + b];
      for (std::int64_t b = 0; b < bw; ++b) plan.run(buf.data() + b * n, sign, scratch.data());
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t b = 0; b < bw; ++b) base[j * stride + b] = buf[b * n + j];
    }
  }
}

}  // namespace

void transform(Complex* data, const Shape& shape, int sign) {
  const std::int64_t nx = shape.nx, ny = shape.ny, nz = shape.nz;
  if (nx > 1) {
    const Plan plan(nx);
    const std::int64_t lines = ny * nz;
#pragma omp parallel
    {
      std::vector<Complex> scratch(plan.scratch_size());
#pragma omp for schedule(dynamic, 16)
      for (std::int64_t l = 0; l < lines; ++l) plan.run(data + l * nx, sign, scratch.data());
    }
  }
  if (ny > 1) strided_axis(data, Plan(ny), nx, nx, nz, nx * ny, sign);
  if (nz > 1) strided_axis(data, Plan(nz), nx * ny, nx, ny, nx, sign);
}

}  // namespace repix::datasets::fft
