// The GPU edt variants, in ablation order (one line each).
#include "iwpp/edt_gpu_variants.hpp"

namespace repix::edt {

void append_gpu_variants(std::vector<Variant>& v) {
  v.push_back(gpu_queue_atomic_variant());
  v.push_back(gpu_queue_warp_atomic_variant());
  v.push_back(gpu_queue_scan_variant());
  v.push_back(gpu_queue_tq_variant());
  v.push_back(gpu_exact_rowfill_variant());
  v.push_back(gpu_exact_envelope_variant());
  v.push_back(gpu_opt_variant());
  v.push_back(multi_device_variant());
}

}  // namespace repix::edt
