// `multi-device`: ranklet gpu-opt -> auto-mi multi-device (lags over every visible GPU). auto-mi
// multi-device has no plan, so this pair runs the host path (pipeline.cpp).
#include "ami/variants.hpp"

namespace repix::ami {

Variant multi_device_variant() {
  return make_pipeline("multi-device", "multi-device", "ranklet gpu-opt -> auto-mi multi-device (lags over every GPU)",
                       "gpu-opt", "multi-device");
}

}  // namespace repix::ami
