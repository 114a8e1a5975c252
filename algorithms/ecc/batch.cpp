#include "ecc/batch.hpp"

#include <algorithm>

#include "core/gpu.hpp"
#include "core/nvtx.hpp"
#include "ecc/gpu_opt.cuh"

namespace repix::ecc {

struct BatchRunner::Impl {
  std::size_t image_bytes = 0;
  std::vector<std::unique_ptr<CudaStream>> streams;
  std::vector<std::unique_ptr<OptPlan>> plans;
};

BatchRunner::BatchRunner(DType dtype, const Shape& shape, int streams) : impl_(std::make_unique<Impl>()) {
  if (!gpu_available()) throw Error("batch ECC needs a GPU: " + gpu_unavailable_reason());
  impl_->image_bytes = static_cast<std::size_t>(shape.size()) * dtype_size(dtype);
  for (int i = 0; i < std::max(1, streams); ++i) {
    impl_->streams.push_back(std::make_unique<CudaStream>());
    impl_->plans.push_back(std::make_unique<OptPlan>());
    impl_->plans.back()->setup(dtype, shape, impl_->streams.back()->get());
  }
}

BatchRunner::~BatchRunner() = default;

int BatchRunner::streams() const { return static_cast<int>(impl_->plans.size()); }

std::vector<Curve> BatchRunner::run(const void* d_images, std::int64_t n) {
  nvtx::Range range("ecc/gpu-opt-batch", n);
  const auto* base = static_cast<const unsigned char*>(d_images);
  const std::int64_t k = static_cast<std::int64_t>(impl_->plans.size());
  std::vector<Curve> out;
  out.reserve(static_cast<std::size_t>(n));
  // Launch a round of k images, one per plan and stream, then collect them in order: the plans'
  // kernels overlap with each other and with the previous image's read-back. (Float images
  // synchronise inside compute() for an 8-byte overflow flag, which limits the overlap.)
  for (std::int64_t i0 = 0; i0 < n; i0 += k) {
    const std::int64_t m = std::min(k, n - i0);
    for (std::int64_t j = 0; j < m; ++j)
      impl_->plans[j]->compute(base + static_cast<std::size_t>(i0 + j) * impl_->image_bytes,
                               impl_->streams[j]->get());
    for (std::int64_t j = 0; j < m; ++j) out.push_back(impl_->plans[j]->result(impl_->streams[j]->get()));
  }
  return out;
}

}  // namespace repix::ecc
