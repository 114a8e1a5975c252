// A one-input DevicePlan end to end from a host image: allocate and setup (NVTX "init"), upload
// ("h2d", payload the bytes), compute ("kernel"), result ("d2h"), on a stream of its own. What a
// GPU variant's run() is when its plan does everything (the ranklet, auto-mi and ami plans).
#pragma once
#include "core/gpu.hpp"
#include "core/image.hpp"
#include "core/nvtx.hpp"
#include "core/variant.hpp"

namespace repix {

template <class Plan>
typename Plan::result_type plan_end_to_end(Plan& plan, const HostImage& img, const typename Plan::options_type& opt) {
  CudaStream stream;
  DeviceBuffer<unsigned char> d_in;
  {
    nvtx::Range r("init");
    d_in.allocate(img.bytes());
    plan.setup({img.dtype(), img.shape()}, opt, stream.get());
  }
  {
    nvtx::Range r("h2d", static_cast<std::int64_t>(img.bytes()));
    REPIX_CUDA(cudaMemcpyAsync(d_in.get(), img.raw(), img.bytes(), cudaMemcpyHostToDevice, stream.get()));
  }
  {
    nvtx::Range r("kernel");
    plan.compute({d_in.get()}, stream.get());
  }
  nvtx::Range r("d2h");
  return plan.result(stream.get());
}

}  // namespace repix
