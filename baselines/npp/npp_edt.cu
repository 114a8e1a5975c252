// Peer `npp-pba`: NPP's exact EDT (nppiDistanceTransformPBA_8u32f_C1R_Ctx, the PBA+ algorithm),
// timed on device-resident data like our kernel scope. Compiled only where the CUDA toolkit
// ships NPP (CMake: TARGET CUDA::nppif); the development machines' toolkit does not.
#include <nppcore.h>
#include <nppi_filtering_functions.h>

#include <string>

#include "core/error.hpp"
#include "core/gpu.hpp"
#include "baselines/peers.hpp"
#include "core/timing.hpp"

namespace repix::peers {

namespace {

void check(NppStatus s, const char* what) {
  if (s != NPP_SUCCESS) throw Error(std::string("peer npp-pba: ") + what + " failed with NppStatus " + std::to_string(s));
}

NppStreamContext stream_context(cudaStream_t stream) {
  NppStreamContext c{};
  c.hStream = stream;
  REPIX_CUDA(cudaGetDevice(&c.nCudaDeviceId));
  cudaDeviceProp p{};
  REPIX_CUDA(cudaGetDeviceProperties(&p, c.nCudaDeviceId));
  c.nMultiProcessorCount = p.multiProcessorCount;
  c.nMaxThreadsPerMultiProcessor = p.maxThreadsPerMultiProcessor;
  c.nMaxThreadsPerBlock = p.maxThreadsPerBlock;
  c.nSharedMemPerBlock = p.sharedMemPerBlock;
  c.nCudaDevAttrComputeCapabilityMajor = p.major;
  c.nCudaDevAttrComputeCapabilityMinor = p.minor;
  REPIX_CUDA(cudaStreamGetFlags(stream, &c.nStreamFlags));
  return c;
}

PeerRun run_edt(const HostImage& mask, const protocol::Rule& rule) {
  if (mask.dtype() != DType::u8) throw Unsupported("peer npp-pba takes uint8 input only");
  const Shape& s = mask.shape();
  if (s.ndim != 2) throw Error("peer npp-pba: 2D images only");
  // NPP's PBA keeps Voronoi coordinates as 16-bit signed integers.
  if (s.nx > 32767 || s.ny > 32767) throw Unsupported("peer npp-pba: images up to 32767 pixels per side only");
  const NppiSize roi{static_cast<int>(s.nx), static_cast<int>(s.ny)};
  size_t scratch_bytes = 0;
  const NppStatus size_status = nppiDistanceTransformPBAGetBufferSize(roi, &scratch_bytes);
  // NPP rejects some small sizes (NPP_SIZE_ERROR for 60x40 on the H100 machine's NPP 13.0).
  if (size_status == NPP_SIZE_ERROR)
    throw Unsupported("peer npp-pba: NPP rejects " + s.str() + " (NPP_SIZE_ERROR)");
  check(size_status, "nppiDistanceTransformPBAGetBufferSize");
  CudaStream stream;
  DeviceBuffer<Npp8u> src(mask.bytes()), scratch(scratch_bytes);
  DeviceBuffer<Npp32f> dst(static_cast<std::size_t>(mask.size()));
  REPIX_CUDA(cudaMemcpyAsync(src.get(), mask.raw(), mask.bytes(), cudaMemcpyHostToDevice, stream.get()));
  const NppStreamContext ctx = stream_context(stream.get());
  auto call = [&](cudaStream_t) {
    // Sites are the zero pixels: site values in [0, 0]. Only the float transform is wanted.
    check(nppiDistanceTransformPBA_8u32f_C1R_Ctx(src.get(), roi.width, 0, 0, nullptr, 0, nullptr, 0, nullptr, 0,
                                                 dst.get(), roi.width * static_cast<int>(sizeof(Npp32f)), roi,
                                                 scratch.get(), ctx),
          "nppiDistanceTransformPBA_8u32f_C1R_Ctx");
  };
  timing::GpuSampler sampler(/*flush_l2=*/true);
  PeerRun r = sample_native(rule, [&] { return sampler.sample(call, stream.get()); });
  r.scope = "kernel";
  const NppLibraryVersion* v = nppGetLibVersion();
  r.version = std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->build);
  r.output = HostImage(DType::f32, s);
  REPIX_CUDA(cudaMemcpyAsync(r.output.raw(), dst.get(), r.output.bytes(), cudaMemcpyDeviceToHost, stream.get()));
  stream.sync();
  return r;
}

}  // namespace

NativePeer npp_pba_peer() {
  return {{"edt", "npp-pba", "NPP nppiDistanceTransformPBA_8u32f_C1R_Ctx (PBA+, exact, uint8 input)", true, true},
          [](const std::vector<const HostImage*>& inputs, const nlohmann::json&, const protocol::Rule& rule) {
            return run_edt(*inputs.at(0), rule);
          }};
}

}  // namespace repix::peers
