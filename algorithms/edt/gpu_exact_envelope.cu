// `gpu-exact-envelope`: gpu-exact-rowfill with the fill as one thread per pixel (x fastest:
// coalesced stores; a binary search in its band's envelope, then the neighbouring bands). It was
// gpu-opt until the windowed row search (gpu_opt.cu) replaced its phase 2 on most rows; its fill
// (the engine's launch_pixel_fill) is still gpu-opt's for the rows the window cannot settle.
#include "edt/separable.cuh"
#include "edt/variants.hpp"

namespace repix::edt {

namespace {

using namespace separable;

void rows_by_pixel(const Launch& l, cudaStream_t stream) {
  const RowList all{nullptr, nullptr, l.ny};
  launch_envelopes(l, all, grid_for(l.nbands * l.ny), stream);
  launch_pixel_fill(l, all, grid_for(l.nx * l.ny), stream);
}

}  // namespace

Variant gpu_exact_envelope_variant() {
  return separable::variant("gpu-exact-envelope", "ablation",
                            "exact separable EDT: column bit-words + segment scan, banded parabola envelopes, "
                            "thread-per-pixel fill",
                            {"rows", false, rows_by_pixel});
}

}  // namespace repix::edt
