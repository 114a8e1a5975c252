// Registration of the GPU variants. Each group of GPU files registers its variants through one
// append function (kept in separate files so the groups can be worked on independently);
// append_gpu_variants() calls them in ablation order.
#pragma once
#include <vector>

#include "ecc/ecc.hpp"

namespace repix::ecc {

// gpu-naive and the paper's section 4.3 ladder (gpu_ladder_register.cpp).
void append_ladder_variants(std::vector<Variant>& v);
// gpu-opt and gpu-stream (gpu_opt_register.cpp).
void append_opt_variants(std::vector<Variant>& v);

inline void append_gpu_variants(std::vector<Variant>& v) {
  append_ladder_variants(v);
  append_opt_variants(v);
}

}  // namespace repix::ecc
