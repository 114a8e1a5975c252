// A small deterministic complex FFT, used by the grf generator.
//
// Why not FFTW or cuFFT: neither promises bit-identical results across machines, builds or
// versions (they pick algorithms by planning/measurement, use FMA and SIMD paths that depend on
// the CPU, and their twiddles come from libm). Generated datasets must be the same bytes
// everywhere, so this FFT uses a fixed sequence of exactly-rounded operations (compiled with
// -ffp-contract=off) and twiddles from det::sincos_turns. Lines are transformed in parallel,
// but each line's arithmetic is the same whatever the thread count.
//
// Sizes: iterative radix-2 for powers of two; Bluestein's chirp-z (on a power-of-two FFT of
// at least 2n-1 points) for every other length.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/image.hpp"

namespace repix::datasets::fft {

struct Complex {
  double re, im;
};

// Unnormalised DFT of length n, in place on one contiguous line:
//   X[k] = sum_j x[j] exp(sign * 2 pi i j k / n),  sign = -1 (forward) or +1 (inverse).
class Plan {
 public:
  explicit Plan(std::int64_t n);  // n >= 1 (and < 2^31)
  ~Plan();
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  std::int64_t size() const { return n_; }
  // Elements of scratch run() needs (0 for powers of two).
  std::size_t scratch_size() const;
  void run(Complex* data, int sign, Complex* scratch) const;

 private:
  void run_pow2(Complex* data, int sign) const;
  void run_bluestein(Complex* data, int sign, Complex* scratch) const;

  std::int64_t n_ = 0;
  bool pow2_ = true;
  std::vector<Complex> twiddle_;     // pow2: exp(-2 pi i k / n), k < n/2
  std::vector<std::uint32_t> bitrev_;  // pow2: bit-reversal permutation
  // Bluestein: chirp c_j = exp(-i pi j^2 / n), and the inner transform of the conjugate chirp
  // (wrapped to length m) for each sign.
  std::unique_ptr<Plan> inner_;
  std::vector<Complex> chirp_, bspec_fwd_, bspec_inv_;
};

// Unnormalised multi-dimensional DFT of a whole grid (x fastest), in place: 1D transforms
// along x, then y, then z, lines spread over OpenMP threads.
void transform(Complex* data, const Shape& shape, int sign);

}  // namespace repix::datasets::fft
