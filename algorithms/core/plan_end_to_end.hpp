// The end-to-end run of a GPU variant's DevicePlan (core/variant.hpp), written once for every
// family: host images in, the host result out, in the same NVTX phases everywhere (Nsight shows
// every family's GPU variants alike): "init" (the device input buffers allocated and the plan set
// up: only for a new workspace), "h2d" (each input uploaded, its bytes as the payload), "kernel"
// (compute), "d2h" (result: the download). A plan that computes and downloads in one call
// (`compute_to_host`, overlapping the download with its last kernels) runs it under "kernel" with
// its own "d2h" inside.
//
// The buffers (stream, device inputs) and the set-up plan live for one call (plan_end_to_end) or
// are kept for the next call with the same inputs' type and shape (a family's reuse cache,
// core/reuse_cache.hpp: maxtree, whose set-up allocates hundreds of MB).
#pragma once
#include <type_traits>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/gpu.hpp"
#include "core/image.hpp"
#include "core/nvtx.hpp"
#include "core/variant.hpp"

namespace repix {

// What a plan's end-to-end calls need besides the plan: the stream and the device inputs.
struct EndToEndBuffers {
  CudaStream stream;
  std::vector<DeviceBuffer<unsigned char>> inputs;
  bool set_up = false;  // the plan set up for these buffers ("init" done)
};

// True for a plan whose compute and download are one call (Plan::compute_to_host).
template <class P, class = void>
struct HasComputeToHost : std::false_type {};
template <class P>
struct HasComputeToHost<P, std::void_t<decltype(std::declval<P&>().compute_to_host(DeviceInputs{}, cudaStream_t{}))>>
    : std::true_type {};

// One call of `plan` through `ws`. The inputs share one type and shape (the family's input order:
// reconstruct's marker, mask).
template <class Plan>
typename Plan::result_type run_end_to_end(Plan& plan, EndToEndBuffers& ws, const std::vector<const HostImage*>& inputs,
                                          const typename Plan::options_type& opt) {
  if (inputs.empty()) throw Error("internal: end-to-end run without inputs");
  cudaStream_t s = ws.stream.get();
  if (!ws.set_up) {
    nvtx::Range r("init");
    ws.inputs.clear();
    for (const HostImage* img : inputs) ws.inputs.emplace_back(img->bytes());
    plan.setup({inputs[0]->dtype(), inputs[0]->shape()}, opt, s);
    ws.set_up = true;
  }
  DeviceInputs device;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    nvtx::Range r("h2d", static_cast<std::int64_t>(inputs[i]->bytes()));
    REPIX_CUDA(cudaMemcpyAsync(ws.inputs[i].get(), inputs[i]->raw(), inputs[i]->bytes(), cudaMemcpyHostToDevice, s));
    device.push_back(ws.inputs[i].get());
  }
  if constexpr (HasComputeToHost<Plan>::value) {
    nvtx::Range r("kernel");  // with the plan's own "d2h" inside: the download overlaps its last kernels
    return plan.compute_to_host(device, s);
  } else {
    {
      nvtx::Range r("kernel");
      plan.compute(device, s);
    }
    nvtx::Range r("d2h");
    return plan.result(s);
  }
}

// A call on buffers of its own (allocated, used and freed by the call).
template <class Plan>
typename Plan::result_type plan_end_to_end(Plan& plan, const std::vector<const HostImage*>& inputs,
                                           const typename Plan::options_type& opt) {
  EndToEndBuffers ws;
  return run_end_to_end(plan, ws, inputs, opt);
}
template <class Plan>
typename Plan::result_type plan_end_to_end(Plan& plan, const HostImage& img, const typename Plan::options_type& opt) {
  return plan_end_to_end(plan, std::vector<const HostImage*>{&img}, opt);
}

}  // namespace repix
