// Registration of the GPU variants (gpu_*.cu). Each GPU file defines one make_*_plan();
// append_gpu_variants() lists them in ablation order.
#pragma once
#include <memory>
#include <vector>

#include "ecc/ecc.hpp"

namespace repix::ecc {

void append_gpu_variants(std::vector<Variant>& v);

}  // namespace repix::ecc
