// Deterministic double-precision elementary functions: sin, cos, log, exp, pow.
//
// Why: generated datasets must be bit-identical on every machine, compiler and library version.
// glibc's (and CUDA's) sin/cos/log/exp are accurate but not specified to the last bit, and
// they have changed between versions, so a dataset built from them could change under an OS
// upgrade. These functions use only IEEE-754 operations whose results are exactly specified
// (+, -, *, /, sqrt and exact bit manipulation), evaluated in a fixed order, so they return the
// same bits everywhere. They are accurate to a couple of ulp (relative error ~1e-16 on their
// main domains; see each function), which is plenty for data generation.
//
// Fused multiply-add would change results, so contraction must be off:
//  - host: the sources under datasets/ are compiled with -ffp-contract=off (CMakeLists.txt).
//    Other host translation units including this header must do the same if they need the
//    exact bits (x86-64 without -mfma cannot contract anyway).
//  - device: the helpers below use the __dadd_rn/__dmul_rn family, which nvcc never fuses.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

// Host-and-device qualifier for these header-only helpers. A name of its own: algorithm
// headers define their own qualifier macros (with inline/forceinline folded in).
#ifndef REPIX_HOST_DEVICE
#ifdef __CUDACC__
#define REPIX_HOST_DEVICE __host__ __device__
#else
#define REPIX_HOST_DEVICE
#endif
#endif

namespace repix::det {

// ---- exactly rounded primitives (never contracted into FMA on the device) -------------------
REPIX_HOST_DEVICE inline double add(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
REPIX_HOST_DEVICE inline double sub(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}
REPIX_HOST_DEVICE inline double mul(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
REPIX_HOST_DEVICE inline double div(double a, double b) {
#ifdef __CUDA_ARCH__
  return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}
REPIX_HOST_DEVICE inline double sqrt(double a) {  // IEEE-754 requires sqrt to be correctly rounded
#ifdef __CUDA_ARCH__
  return __dsqrt_rn(a);
#else
  return std::sqrt(a);
#endif
}

REPIX_HOST_DEVICE inline std::uint64_t bits_of(double x) {
#ifdef __CUDA_ARCH__
  return static_cast<std::uint64_t>(__double_as_longlong(x));
#else
  std::uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
#endif
}
REPIX_HOST_DEVICE inline double from_bits(std::uint64_t u) {
#ifdef __CUDA_ARCH__
  return __longlong_as_double(static_cast<long long>(u));
#else
  double x;
  std::memcpy(&x, &u, sizeof x);
  return x;
#endif
}

REPIX_HOST_DEVICE inline bool is_nan(double x) { return x != x; }
REPIX_HOST_DEVICE inline double quiet_nan() { return from_bits(0x7ff8000000000000ull); }
REPIX_HOST_DEVICE inline double infinity() { return from_bits(0x7ff0000000000000ull); }
// 2^e for -1022 <= e <= 1023, exact.
REPIX_HOST_DEVICE inline double pow2i(int e) { return from_bits(static_cast<std::uint64_t>(e + 1023) << 52); }

// Round to the nearest integer, ties away from zero; |x| < 2^62. Exact (only exact operations:
// adding 0.5 to a double below 2^52 in magnitude is exact once truncated).
REPIX_HOST_DEVICE inline std::int64_t nearest_int(double x) {
  // For |x| >= 2^52 every double is already an integer; the cast is then exact.
  if (!(x < 4503599627370496.0 && x > -4503599627370496.0)) return static_cast<std::int64_t>(x);
  const std::int64_t t = static_cast<std::int64_t>(x);  // truncation toward zero, exact
  const double frac = sub(x, static_cast<double>(t));    // exact: both share the integer part
  // Branch-free: callers feed random arguments, where a branch would mispredict half the time.
  return t + static_cast<std::int64_t>(frac >= 0.5) - static_cast<std::int64_t>(frac <= -0.5);
}

// ---- constants (derived with 300-bit arithmetic; the splits make k*HI exact) ------------------
namespace k {
// pi/2 = PIO2_1 + PIO2_2 + PIO2_3 (+ ~1e-37); PIO2_1 and PIO2_2 carry 33 significant bits so
// that k * PIO2_{1,2} is exact for |k| < 2^20.
constexpr double PIO2_1 = 0x1.921fb54400000p+0;
constexpr double PIO2_2 = 0x1.0b4611a600000p-34;
constexpr double PIO2_3 = 0x1.3198a2e037073p-69;
constexpr double TWO_OVER_PI = 0x1.45f306dc9c883p-1;
// 2*pi = TWOPI_HI + TWOPI_LO
constexpr double TWOPI_HI = 0x1.921fb54442d18p+2;
constexpr double TWOPI_LO = 0x1.1a62633145c07p-52;
// ln 2 = LN2_HI + LN2_LO; LN2_HI has 32 significant bits so e * LN2_HI is exact for |e| < 2^21.
constexpr double LN2_HI = 0x1.62e42ff000000p-1;
constexpr double LN2_LO = -0x1.718432a1b0e26p-35;
constexpr double INV_LN2 = 0x1.71547652b82fep+0;
constexpr double SQRT2 = 0x1.6a09e667f3bcdp+0;
}  // namespace k

// ---- kernels on |r| <= pi/4 (Taylor series; truncation error < 1e-19 there) -----------------
REPIX_HOST_DEVICE inline double sin_kernel(double r) {
  const double z = mul(r, r);
  // 1/(2n+1)! for n = 1..8, as correctly rounded double literals (the compiler rounds exactly)
  double p = -1.0 / 355687428096000.0;         // -1/17!
  p = add(mul(p, z), 1.0 / 1307674368000.0);   // +1/15!
  p = add(mul(p, z), -1.0 / 6227020800.0);     // -1/13!
  p = add(mul(p, z), 1.0 / 39916800.0);        // +1/11!
  p = add(mul(p, z), -1.0 / 362880.0);         // -1/9!
  p = add(mul(p, z), 1.0 / 5040.0);            // +1/7!
  p = add(mul(p, z), -1.0 / 120.0);            // -1/5!
  p = add(mul(p, z), 1.0 / 6.0);               // +1/3!   -> p = 1/3! - z/5! + ...
  return sub(r, mul(mul(r, z), p));            // r - r^3/3! + r^5/5! - ...
}
REPIX_HOST_DEVICE inline double cos_kernel(double r) {
  const double z = mul(r, r);
  double p = 1.0 / 6402373705728000.0;         // +1/18!
  p = add(mul(p, z), -1.0 / 20922789888000.0); // -1/16!
  p = add(mul(p, z), 1.0 / 87178291200.0);     // +1/14!
  p = add(mul(p, z), -1.0 / 479001600.0);      // -1/12!
  p = add(mul(p, z), 1.0 / 3628800.0);         // +1/10!
  p = add(mul(p, z), -1.0 / 40320.0);          // -1/8!
  p = add(mul(p, z), 1.0 / 720.0);             // +1/6!
  p = add(mul(p, z), -1.0 / 24.0);             // -1/4!
  p = add(mul(p, z), 0.5);                     // +1/2!  -> p = 1/2 - z/4! + ...
  // 1 - z*p, computed as (1 - hz) + (hz - z*p) with hz = z/2 exact: keeps the last bits when
  // z*p is close to 1/2 (r near pi/4).
  const double hz = mul(0.5, z);
  const double w = sub(1.0, hz);
  return add(w, sub(hz, mul(z, p)));
}

// Applies quadrant q (angle = q*pi/2 + r) to the kernels.
REPIX_HOST_DEVICE inline void sincos_quadrant(double r, std::int64_t q, double* s, double* c) {
  const double sr = sin_kernel(r), cr = cos_kernel(r);
  // q mod 4 = 0: (sr, cr); 1: (cr, -sr); 2: (-sr, -cr); 3: (-cr, sr). Selections rather than a
  // switch so that random quadrants do not cost branch mispredictions; negation is exact.
  const bool odd = (q & 1) != 0;
  const double a = odd ? cr : sr, b = odd ? sr : cr;
  // Adding +0 turns -0 into +0: exact multiples of pi/2 give the same zero in every quadrant.
  *s = add((q & 2) ? -a : a, 0.0);
  *c = add(((q + 1) & 2) ? -b : b, 0.0);
}

// sin and cos of x radians. Relative error ~1e-16 for |x| < 2^20 * pi/2 (exact Cody-Waite
// reduction); beyond that the reduction loses accuracy (still deterministic); NaN for
// non-finite x and for |x| >= 2^60.
REPIX_HOST_DEVICE inline void sincos(double x, double* s, double* c) {
  if (!(x < 1.152921504606847e18 && x > -1.152921504606847e18)) {
    *s = *c = quiet_nan();
    return;
  }
  const std::int64_t q = nearest_int(mul(x, k::TWO_OVER_PI));
  const double kd = static_cast<double>(q);
  const double r = sub(sub(sub(x, mul(kd, k::PIO2_1)), mul(kd, k::PIO2_2)), mul(kd, k::PIO2_3));
  sincos_quadrant(r, q, s, c);
}
REPIX_HOST_DEVICE inline double sin(double x) { double s, c; sincos(x, &s, &c); return s; }
REPIX_HOST_DEVICE inline double cos(double x) { double s, c; sincos(x, &s, &c); return c; }

// sin and cos of 2*pi*t ("t in turns"). The reduction to [-1/8, 1/8] turn is exact, so FFT
// twiddles exp(2*pi*i*k/n) and Box-Muller angles lose nothing to reduction; exact quarter
// turns give exact 0 and +-1. Valid for |t| < 2^52; NaN otherwise.
REPIX_HOST_DEVICE inline void sincos_turns(double t, double* s, double* c) {
  if (!(t < 4503599627370496.0 && t > -4503599627370496.0)) {
    *s = *c = quiet_nan();
    return;
  }
  const double f = sub(t, static_cast<double>(nearest_int(t)));  // exact, |f| <= 1/2
  const std::int64_t q = nearest_int(mul(f, 4.0));                // -2..2
  const double g = sub(f, mul(static_cast<double>(q), 0.25));    // exact, |g| <= 1/8
  const double r = add(mul(g, k::TWOPI_HI), mul(g, k::TWOPI_LO)); // |r| <= pi/4
  sincos_quadrant(r, q, s, c);
}

// Natural logarithm. Error < 2 ulp. log(0) = -inf, log(x < 0) = NaN, log(inf) = inf.
REPIX_HOST_DEVICE inline double log(double x) {
  if (is_nan(x) || x < 0.0) return quiet_nan();
  if (x == 0.0) return -infinity();
  if (x == infinity()) return x;
  int e = 0;
  if (x < 0x1p-1022) {  // subnormal: scale into the normal range first (exact)
    x = mul(x, 0x1p54);
    e = -54;
  }
  std::uint64_t u = bits_of(x);
  e += static_cast<int>((u >> 52) & 0x7ff) - 1023;
  u = (u & 0x000fffffffffffffull) | 0x3ff0000000000000ull;  // mantissa in [1, 2)
  double m = from_bits(u);
  const bool big = m > k::SQRT2;  // bring m into [sqrt(1/2), sqrt(2)] so |s| <= 0.1716
  m = big ? mul(m, 0.5) : m;
  e += big ? 1 : 0;
  // log(m) = 2 atanh(s) = 2 (s + s^3/3 + s^5/5 + ...), s = (m-1)/(m+1); terms to s^23 reach 1e-19.
  const double s = div(sub(m, 1.0), add(m, 1.0));  // m-1 is exact (Sterbenz)
  const double z = mul(s, s);
  double p = 1.0 / 23.0;
  p = add(mul(p, z), 1.0 / 21.0);
  p = add(mul(p, z), 1.0 / 19.0);
  p = add(mul(p, z), 1.0 / 17.0);
  p = add(mul(p, z), 1.0 / 15.0);
  p = add(mul(p, z), 1.0 / 13.0);
  p = add(mul(p, z), 1.0 / 11.0);
  p = add(mul(p, z), 1.0 / 9.0);
  p = add(mul(p, z), 1.0 / 7.0);
  p = add(mul(p, z), 1.0 / 5.0);
  p = add(mul(p, z), 1.0 / 3.0);
  const double s2 = mul(2.0, s);
  const double logm = add(s2, mul(mul(s2, z), p));
  const double ed = static_cast<double>(e);
  return add(mul(ed, k::LN2_HI), add(logm, mul(ed, k::LN2_LO)));
}

// e^x. Error of a few ulp. Overflows to inf above ~709.78, underflows (through the subnormal
// range) to 0 below ~-745.
REPIX_HOST_DEVICE inline double exp(double x) {
  if (is_nan(x)) return x;
  if (x > 709.782712893384) return infinity();
  if (x < -745.2) return 0.0;
  const std::int64_t n = nearest_int(mul(x, k::INV_LN2));
  const double nd = static_cast<double>(n);
  const double r = sub(sub(x, mul(nd, k::LN2_HI)), mul(nd, k::LN2_LO));  // |r| <= 0.35
  // Taylor series to r^17/17! (truncation < 1e-22 on |r| <= 0.35).
  double p = 1.0 / 355687428096000.0;
  p = add(mul(p, r), 1.0 / 20922789888000.0);
  p = add(mul(p, r), 1.0 / 1307674368000.0);
  p = add(mul(p, r), 1.0 / 87178291200.0);
  p = add(mul(p, r), 1.0 / 6227020800.0);
  p = add(mul(p, r), 1.0 / 479001600.0);
  p = add(mul(p, r), 1.0 / 39916800.0);
  p = add(mul(p, r), 1.0 / 3628800.0);
  p = add(mul(p, r), 1.0 / 362880.0);
  p = add(mul(p, r), 1.0 / 40320.0);
  p = add(mul(p, r), 1.0 / 5040.0);
  p = add(mul(p, r), 1.0 / 720.0);
  p = add(mul(p, r), 1.0 / 120.0);
  p = add(mul(p, r), 1.0 / 24.0);
  p = add(mul(p, r), 1.0 / 6.0);
  p = add(mul(p, r), 0.5);
  const double er = add(1.0, add(r, mul(mul(r, r), p)));  // e^r in [0.70, 1.42]
  // Scale by 2^n in two exact steps so that results in the subnormal range are still right.
  int ni = static_cast<int>(n);
  if (ni > 1023) return mul(mul(er, pow2i(1023)), pow2i(ni - 1023));
  if (ni < -1022) return mul(mul(er, pow2i(-1022)), pow2i(ni + 1022 < -1022 ? -1022 : ni + 1022));
  return mul(er, pow2i(ni));
}

// x^y for x > 0 (NaN for x <= 0 unless y == 0): exp(y log x). Relative error ~|y log x| * 1e-16.
REPIX_HOST_DEVICE inline double pow_pos(double x, double y) {
  if (y == 0.0) return 1.0;
  if (!(x > 0.0)) return quiet_nan();
  return exp(mul(y, log(x)));
}

}  // namespace repix::det
