// `seq-exact`: the oracle. An exact separable EDT (Felzenszwalb-Huttenlocher / Meijster style):
//  1. columns: for every pixel, the nearest background row in its column (above wins a tie);
//  2. rows: the lower envelope of the parabolas (x - c)^2 + g(c)^2 over the columns c of the row
//     that have any background, evaluated at every x.
// All arithmetic is int64 and exact (sides < 2^30, so every term stays below 2^62); ties go to
// the leftmost column. Columns and rows are independent, so OpenMP over them changes nothing in
// the result: it is deterministic for any thread count.
#include <omp.h>

#include <limits>

#include "core/nvtx.hpp"
#include "edt/detail.hpp"

namespace repix::edt {

namespace {

// Floor division for a positive divisor.
std::int64_t floor_div(std::int64_t a, std::int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

}  // namespace

Result run_seq_exact(const HostImage& input, const Options& opt) {
  nvtx::Range range("edt/seq-exact");
  check_input(input);
  const int nt = opt.threads > 0 ? opt.threads : omp_get_max_threads();
  return exact_rows(background_mask(input, nt), input.shape(), 0, nullptr, nullptr, opt, nt);
}

Result exact_rows(const std::vector<std::uint8_t>& bg, const Shape& sh, std::int64_t y0, const std::int32_t* above,
                  const std::int32_t* below, const Options& opt, int nt) {
  const std::int64_t nx = sh.nx, ny = sh.ny;

  // Phase 1: row[y*nx+x] = nearest background row (the whole image's numbering) in column x, or
  // -1. Strips of columns per thread, walked row by row so that every access is contiguous.
  std::vector<std::int32_t> row(static_cast<std::size_t>(nx * ny));
  {
    nvtx::Range r("columns");
    constexpr std::int64_t kStrip = 256;
#pragma omp parallel for num_threads(nt) schedule(static)
    for (std::int64_t x0 = 0; x0 < nx; x0 += kStrip) {
      const std::int64_t x1 = x0 + kStrip < nx ? x0 + kStrip : nx;
      std::vector<std::int32_t> last(static_cast<std::size_t>(x1 - x0), -1);
      if (above) std::copy(above + x0, above + x1, last.begin());
      for (std::int64_t y = 0; y < ny; ++y)  // down: nearest background at or above
        for (std::int64_t x = x0; x < x1; ++x) {
          if (bg[y * nx + x]) last[x - x0] = static_cast<std::int32_t>(y0 + y);
          row[y * nx + x] = last[x - x0];
        }
      std::fill(last.begin(), last.end(), -1);
      if (below) std::copy(below + x0, below + x1, last.begin());
      for (std::int64_t y = ny - 1; y >= 0; --y)  // up: nearest at or below, if strictly nearer
        for (std::int64_t x = x0; x < x1; ++x) {
          std::int32_t& a = row[y * nx + x];
          if (bg[y * nx + x]) last[x - x0] = static_cast<std::int32_t>(y0 + y);
          const std::int32_t b = last[x - x0];
          if (b >= 0 && (a < 0 || b - (y0 + y) < (y0 + y) - a)) a = b;
        }
    }
  }

  Result res;
  res.distance = HostImage(DType::f32, sh);
  float* dist = res.distance.data<float>();
  if (opt.want_sites) res.sites.assign(static_cast<std::size_t>(nx * ny), -1);
  {
    nvtx::Range r("rows");
#pragma omp parallel num_threads(nt)
    {
      // The envelope: parabola centre[k] is lowest on [start[k], start[k+1]).
      std::vector<std::int64_t> centre(static_cast<std::size_t>(nx)), start(static_cast<std::size_t>(nx)),
          g2(static_cast<std::size_t>(nx));
#pragma omp for schedule(static)
      for (std::int64_t y = 0; y < ny; ++y) {
        const std::int32_t* rr = &row[y * nx];
        std::int64_t k = -1;  // top of the stack
        for (std::int64_t u = 0; u < nx; ++u) {
          if (rr[u] < 0) continue;  // no background in column u: no parabola
          g2[u] = (y0 + y - rr[u]) * (y0 + y - rr[u]);
          std::int64_t w = 0;
          while (k >= 0) {
            // f_u - f_c at p is  C - 2 p (u - c): decreasing in p, so u takes over on a half-line.
            const std::int64_t c = centre[k];
            const std::int64_t C = u * u - c * c + g2[u] - g2[c];
            if (C < 2 * start[k] * (u - c)) {  // u strictly lower at c's start: c never wins
              --k;
              continue;
            }
            w = floor_div(C, 2 * (u - c)) + 1;  // first p where u is strictly lower than c
            break;
          }
          if (w >= nx) continue;
          ++k;
          centre[k] = u;
          start[k] = w;
        }
        float* drow = dist + y * nx;
        if (k < 0) {  // no background anywhere in the image
          for (std::int64_t x = 0; x < nx; ++x) drow[x] = std::numeric_limits<float>::infinity();
          continue;
        }
        std::int64_t j = 0;
        for (std::int64_t x = 0; x < nx; ++x) {
          while (j < k && start[j + 1] <= x) ++j;
          const std::int64_t c = centre[j];
          drow[x] = distance_from_sq((x - c) * (x - c) + g2[c]);
          if (opt.want_sites) res.sites[y * nx + x] = static_cast<std::int64_t>(rr[c]) * nx + c;
        }
      }
    }
  }
  res.stats.passes = 2;
  return res;
}

}  // namespace repix::edt
