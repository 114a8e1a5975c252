// `gpu-opt`: ranklet gpu-opt -> auto-mi gpu-opt, the fastest pair, through the device plan
// (pipeline_gpu.cu: the ranklet planes never leave the device).
#include "ami/variants.hpp"

namespace repix::ami {

Variant gpu_opt_variant() {
  return make_pipeline("gpu-opt", "gpu-opt", "ranklet gpu-opt -> auto-mi gpu-opt", "gpu-opt", "gpu-opt");
}

}  // namespace repix::ami
