// `gpu-naive`: the thesis's CUDA pair, ranklet gpu-naive (a thread per pixel sorting its window)
// -> auto-mi gpu-naive (a thread per lag), through the device plan (pipeline_gpu.cu).
#include "ami/variants.hpp"

namespace repix::ami {

Variant gpu_naive_variant() {
  return make_pipeline("gpu-naive", "gpu-naive", "the thesis's CUDA pair: ranklet gpu-naive -> auto-mi gpu-naive", "gpu-naive",
                       "gpu-naive");
}

}  // namespace repix::ami
