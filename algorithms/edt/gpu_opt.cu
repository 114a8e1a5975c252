// `gpu-opt`: the engine's column phase (separable.cuh), then a windowed row search (see
// window_pixel in gpu_opt_core.hpp): block per 1024-pixel chunk of a row, the chunk's vertical
// offsets plus kWindow columns each side in shared memory, thread per pixel searching outward
// until k^2 >= best: exact when the best is within (kWindow + 1)^2, which is almost every pixel
// of nuclei-like or moderately sparse masks, for O(distance) shared-memory reads and no scratch
// traffic. Rows with an unresolved pixel are flagged, compacted into a list (CUB DeviceSelect)
// and redone by the envelope path on that list only (gpu-exact-envelope's kernels; the list's
// length stays on the device: fixed grids, grid-stride loops, no host sync). Stats::fallback_rows
// counts them.
#include <algorithm>

#include "core/gpu.hpp"
#include "core/nvtx.hpp"
#include "edt/separable.cuh"
#include "edt/variants.hpp"

namespace repix::edt {

namespace {

using namespace separable;
using namespace gpu_opt;

// gpu-opt: block per (row, chunk); see window_pixel. A row with an unresolved pixel gets its flag
// set (every writer stores 1: no atomics needed).
__global__ void __launch_bounds__(kThreads) window_fill_kernel(Columns cols, i64 nx, i64 ny, float* __restrict__ dist,
                                                               long long* __restrict__ sites, int* __restrict__ unresolved_row) {
  __shared__ int off[kChunk + 2 * kWindow];
  const i64 nchunks = (nx + kChunk - 1) / kChunk;
  for (i64 task = blockIdx.x; task < nchunks * ny; task += gridDim.x) {
    const i64 y = task / nchunks, x0 = (task % nchunks) * kChunk;
    __syncthreads();  // the previous task's reads of `off` are done
    for (int j = threadIdx.x; j < kChunk + 2 * kWindow; j += kThreads) off[j] = window_entry(cols, nx, y, x0, j);
    __syncthreads();
    bool missed = false;
    for (int j = threadIdx.x; j < kChunk && x0 + j < nx; j += kThreads)
      missed |= !window_pixel(off + kWindow + j, nx, x0 + j, y, dist, sites);
    if (__syncthreads_or(missed) && threadIdx.x == 0) unresolved_row[y] = 1;
  }
}

void rows_by_window(const Launch& l, cudaStream_t stream) {
  {
    nvtx::Range r("window", l.nx * l.ny);
    REPIX_CUDA(cudaMemsetAsync(l.flags, 0, static_cast<std::size_t>(l.ny) * sizeof(int), stream));
    const i64 tasks = ((l.nx + kChunk - 1) / kChunk) * l.ny;
    window_fill_kernel<<<static_cast<int>(std::min<i64>(tasks, 1 << 20)), kThreads, 0, stream>>>(l.cols, l.nx, l.ny,
                                                                                                 l.dist, l.sites, l.flags);
    REPIX_CUDA_LAUNCH();
    select_flagged_rows(l, stream);
  }
  nvtx::Range r("fallback rows", l.nx * l.ny);
  const RowList listed{l.list, l.list + l.ny, l.ny};
  launch_envelopes(l, listed, l.list_grid, stream);
  launch_pixel_fill(l, listed, l.list_grid, stream);
}

}  // namespace

Variant gpu_opt_variant() {
  return separable::variant("gpu-opt", "beyond-paper",
                            "exact EDT: column bit-words + segment scan, then a windowed row search in shared memory "
                            "(+-64 columns, exact when the site is that close); rows it cannot settle are redone by "
                            "the envelope path",
                            {"rows", true, rows_by_window});
}

}  // namespace repix::edt
