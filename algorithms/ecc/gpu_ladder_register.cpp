#include "ecc/gpu_variants.hpp"

namespace repix::ecc {

void append_ladder_variants(std::vector<Variant>&) {}

}  // namespace repix::ecc
