// An independent oracle for the ECC: builds the cubical complex explicitly (every cell of the
// doubled grid), gives each cell the minimum of the voxels containing it, and counts
// (-1)^dim per value. No introduction rules, no tie-breaking: it cannot share a bug with them.
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>

#include "core/image.hpp"
#include "ecc/ecc.hpp"

namespace repix::test {

template <class T>
ecc::Curve oracle_ecc(const ImageView<T>& img) {
  const Shape& s = img.shape;
  const bool three_d = s.ndim == 3;
  const std::int64_t ax = 2 * s.nx + 1, ay = 2 * s.ny + 1, az = three_d ? 2 * s.nz + 1 : 1;
  std::map<float, std::int64_t> delta;  // value -> sum of (-1)^dim of cells with that value
  for (std::int64_t c = 0; c < az; ++c)
    for (std::int64_t b = 0; b < ay; ++b)
      for (std::int64_t a = 0; a < ax; ++a) {
        // Voxel index ranges containing this cell along each axis: odd coordinate = the cell
        // spans voxel (coord-1)/2; even coordinate 2k = the face between voxels k-1 and k.
        auto range = [](std::int64_t coord, std::int64_t n, std::int64_t& lo, std::int64_t& hi) {
          if (coord & 1) { lo = hi = (coord - 1) / 2; }
          else { lo = std::max<std::int64_t>(0, coord / 2 - 1); hi = std::min(n - 1, coord / 2); }
        };
        std::int64_t x0, x1, y0, y1, z0 = 0, z1 = 0;
        range(a, s.nx, x0, x1);
        range(b, s.ny, y0, y1);
        if (three_d) range(c, s.nz, z0, z1);
        float m = std::numeric_limits<float>::infinity();
        for (std::int64_t z = z0; z <= z1; ++z)
          for (std::int64_t y = y0; y <= y1; ++y)
            for (std::int64_t x = x0; x <= x1; ++x) m = std::min(m, static_cast<float>(img(x, y, z)));
        const int dim = int(a & 1) + int(b & 1) + int(three_d && (c & 1));
        delta[m + 0.0f] += (dim & 1) ? -1 : 1;
      }
  ecc::Curve out;
  std::int64_t acc = 0;
  for (const auto& [v, d] : delta) {
    acc += d;
    out.values.push_back(v);
    out.ecc.push_back(acc);
  }
  return out;
}

inline ecc::Curve oracle_ecc(const HostImage& img) {
  return visit_image(img, [](auto v) { return oracle_ecc(v); });
}

}  // namespace repix::test
