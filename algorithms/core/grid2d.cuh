// 2D grid-stride launches over an nx x ny domain, x fastest (a warp covers 32 consecutive x, so
// row-major accesses coalesce). The grid is capped to what CUDA allows (y <= 65535), and the
// kernels stride over the rest, so any image size fits one launch.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

namespace repix {

constexpr int kGrid2dX = 32, kGrid2dY = 8;  // threads per block: dim3(kGrid2dX, kGrid2dY)

inline dim3 grid_2d(std::int64_t nx, std::int64_t ny) {
  const std::int64_t gx = std::min<std::int64_t>((nx + kGrid2dX - 1) / kGrid2dX, 1 << 16);
  const std::int64_t gy = std::min<std::int64_t>((ny + kGrid2dY - 1) / kGrid2dY, 65535);
  return dim3(static_cast<unsigned>(std::max<std::int64_t>(gx, 1)), static_cast<unsigned>(std::max<std::int64_t>(gy, 1)));
}

// f(x, y) for every (x, y) of the domain, in a kernel launched with grid_2d(nx, ny) blocks of
// dim3(kGrid2dX, kGrid2dY) threads.
template <class F>
__device__ __forceinline__ void for_each_2d(std::int64_t nx, std::int64_t ny, F&& f) {
  for (std::int64_t y = blockIdx.y * std::int64_t(kGrid2dY) + threadIdx.y; y < ny;
       y += std::int64_t(gridDim.y) * kGrid2dY)
    for (std::int64_t x = blockIdx.x * std::int64_t(kGrid2dX) + threadIdx.x; x < nx;
         x += std::int64_t(gridDim.x) * kGrid2dX)
      f(x, y);
}

}  // namespace repix
