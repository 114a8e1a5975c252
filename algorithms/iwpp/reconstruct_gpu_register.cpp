// The GPU reconstruct variants, in ablation order (one line each).
#include "iwpp/reconstruct_gpu_variants.hpp"

namespace repix::reconstruct {

void append_gpu_variants(std::vector<Variant>& v) { (void)v; }

}  // namespace repix::reconstruct
