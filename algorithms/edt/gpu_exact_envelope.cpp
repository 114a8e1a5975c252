// `gpu-exact-envelope`: gpu-exact-rowfill with the fill as one thread per pixel (x fastest:
// coalesced stores; a binary search in its band's envelope, then the neighbouring bands). It was
// gpu-opt until the windowed row search (gpu_opt.cu) replaced its phase 2 on most rows; it is
// still gpu-opt's fallback for the rows the window cannot settle.
#include "edt/variants.hpp"

namespace repix::edt {

Variant gpu_exact_envelope_variant() {
  return separable_variant("gpu-exact-envelope", "ablation",
                           "exact separable EDT: column bit-words + segment scan, banded parabola envelopes, "
                           "thread-per-pixel fill",
                           SeparableFill::pixel);
}

}  // namespace repix::edt
