// Registration of gpu-naive and the paper's section 4.3 optimisation ladder, in ablation order:
// each variant adds one optimisation to the one before.
#include "ecc/gpu_common.hpp"
#include "ecc/gpu_variants.hpp"

namespace repix::ecc {

void append_ladder_variants(std::vector<Variant>& v) {
  v.push_back(gpu::gpu_naive_variant());
  v.push_back(gpu::gpu_register_variant());
  v.push_back(gpu::gpu_shared_hist_variant());
  v.push_back(gpu::gpu_cached_variant());
}

}  // namespace repix::ecc
