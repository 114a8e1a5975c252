// `gpu-exact-rowfill`: the first exact GPU step. The engine's column phase and band envelopes
// (separable.cuh); the fill runs one thread per (band, row), the 32 rows of a warp side by side,
// each walking its own band's envelope left to right (no binary search) with its stores 32 rows
// apart.
#include "core/gpu.hpp"
#include "edt/separable.cuh"
#include "edt/variants.hpp"

namespace repix::edt {

namespace {

using namespace separable;
using namespace gpu_opt;

__global__ void band_fill_kernel(Envelopes env, i64 nx, i64 nbands, RowList rows, float* __restrict__ dist,
                                 long long* __restrict__ sites) {
  const i64 n = rows.size();
  for (i64 t = blockIdx.x * (i64)blockDim.x + threadIdx.x; t < nbands * n; t += (i64)gridDim.x * blockDim.x)
    band_fill(env, nx, nbands, t / n, rows[t % n], dist, sites);
}

void rows_by_band(const Launch& l, cudaStream_t stream) {
  const RowList all{nullptr, nullptr, l.ny};
  const int grid = grid_for(l.nbands * l.ny);
  launch_envelopes(l, all, grid, stream);
  band_fill_kernel<<<grid, kThreads, 0, stream>>>(l.env, l.nx, l.nbands, all, l.dist, l.sites);
  REPIX_CUDA_LAUNCH();
}

}  // namespace

Variant gpu_exact_rowfill_variant() {
  return separable::variant("gpu-exact-rowfill", "ablation",
                            "exact separable EDT, the fill as one thread per (band, row) walking its envelope (no "
                            "search, strided stores)",
                            {"rows", false, rows_by_band});
}

}  // namespace repix::edt
