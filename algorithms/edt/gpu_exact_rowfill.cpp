// `gpu-exact-rowfill`: the first exact GPU step (gpu_opt.cu has the plan). Column phase and
// band envelopes as gpu-exact-envelope; the fill runs one thread per (band, row), the 32 rows of a
// warp side by side, each walking its own band's envelope left to right (no binary search) with
// its stores 32 rows apart.
#include "edt/variants.hpp"

namespace repix::edt {

Variant gpu_exact_rowfill_variant() {
  return separable_variant("gpu-exact-rowfill", "ablation",
                           "exact separable EDT, the fill as one thread per (band, row) walking its envelope (no "
                           "search, strided stores)",
                           SeparableFill::band);
}

}  // namespace repix::edt
