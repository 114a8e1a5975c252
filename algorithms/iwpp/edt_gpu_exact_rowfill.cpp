// `gpu-exact-rowfill`: the ablation of gpu-opt's fill phase. Same column phase and band
// envelopes (edt_gpu_opt.cu); the fill runs one thread per (band, row), the 32 rows of a warp
// side by side, each walking its own band's envelope left to right (no binary search) with its
// stores 32 rows apart, instead of gpu-opt's thread per pixel (searches, coalesced stores).
#include "iwpp/edt_gpu_variants.hpp"

namespace repix::edt {

Variant gpu_exact_rowfill_variant() {
  return {"gpu-exact-rowfill", true, true, "ablation",
          "gpu-opt with the fill as one thread per (band, row) walking its envelope (no search, strided stores)",
          [](const HostImage& in, const Options& o) { return run_separable(in, o, false, "edt/gpu-exact-rowfill"); },
          [] { return make_separable_plan(false); }};
}

}  // namespace repix::edt
