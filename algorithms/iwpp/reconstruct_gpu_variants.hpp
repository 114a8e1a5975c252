// The GPU reconstruct variants are appended by reconstruct_gpu_register.cpp, so the CPU registry
// (reconstruct_register.cpp) and the GPU one can grow independently.
#pragma once
#include <vector>

#include "iwpp/reconstruct.hpp"

namespace repix::reconstruct {
void append_gpu_variants(std::vector<Variant>& v);
}
