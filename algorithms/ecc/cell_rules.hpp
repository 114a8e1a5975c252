// The introduction rule shared by the reference CPU variants and the naive GPU kernel: which
// cells of voxel p does p introduce, and the resulting signed change of the Euler
// characteristic. Written as a loop over the 3^d cells of a voxel (each axis: lower face,
// open interval, upper face) rather than as unrolled comparisons, so it reads like the
// definition; the optimised GPU kernels spell the same rule out by hand.
#pragma once
#include <cstdint>

#include "core/hd.hpp"

namespace repix::ecc {

// `wins[dz+1][dy+1][dx+1]` is true when p beats neighbour (dx,dy,dz): `<` for neighbours at a
// smaller linear index, `<=` for larger ones, always for neighbours outside the image.
template <class T, class At>
REPIX_HD void neighbour_wins_3d(T c, At at, std::int64_t x, std::int64_t y, std::int64_t z,
                                std::int64_t nx, std::int64_t ny, std::int64_t nz,
                                bool wins[3][3][3]) {
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const std::int64_t qx = x + dx, qy = y + dy, qz = z + dz;
        bool w = true;
        if (qx >= 0 && qx < nx && qy >= 0 && qy < ny && qz >= 0 && qz < nz &&
            (dx | dy | dz) != 0) {
          const T v = at(qx, qy, qz);
          const bool before = dz < 0 || (dz == 0 && (dy < 0 || (dy == 0 && dx < 0)));
          w = before ? (c < v) : (c <= v);
        }
        wins[dz + 1][dy + 1][dx + 1] = w;
      }
}

// Signed change of the Euler characteristic contributed by voxel p. `dims` is 2 or 3; in 2D
// only the dz = 0 plane is consulted. A cell is given per axis by s in {-1, 0, +1}: 0 is the
// open interval (the cell spans the voxel along that axis), +-1 the face on that side. The
// voxels containing it are p shifted by o with o_a in {0, s_a}.
REPIX_HD int voxel_change(const bool wins[3][3][3], int dims) {
  int change = 0;
  const int zlo = dims == 3 ? -1 : 0, zhi = dims == 3 ? 1 : 0;
  for (int sz = zlo; sz <= zhi; ++sz)
    for (int sy = -1; sy <= 1; ++sy)
      for (int sx = -1; sx <= 1; ++sx) {
        bool introduced = true;
        for (int oz = 0; oz <= 1; ++oz)
          for (int oy = 0; oy <= 1; ++oy)
            for (int ox = 0; ox <= 1; ++ox) {
              if ((ox && !sx) || (oy && !sy) || (oz && !sz) || !(ox | oy | oz)) continue;
              introduced = introduced && wins[oz * sz + 1][oy * sy + 1][ox * sx + 1];
            }
        const int dim = (sx == 0) + (sy == 0) + (dims == 3 ? (sz == 0) : 0);
        if (introduced) change += (dim & 1) ? -1 : 1;
      }
  return change;
}

}  // namespace repix::ecc
