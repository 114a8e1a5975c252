// The GPU edt variants are appended by edt_gpu_register.cpp, so the CPU registry
// (edt_register.cpp) and the GPU one can grow independently.
#pragma once
#include <vector>

#include "iwpp/edt.hpp"

namespace repix::edt {
void append_gpu_variants(std::vector<Variant>& v);
}
