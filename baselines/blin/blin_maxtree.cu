// Peers `blin-maxtree` (kernel scope) and `blin-maxtree-e2e` (end to end): N. Blin's own CUDA
// max-tree, the code behind the LRDE seminar and Blin et al., TPDS 2022, as published in
// kamallira/maxtree-cuda-graphs (folder "original maxtree"). It is not part of repix: the build
// compiles it from the copy scripts/fetch-blin-maxtree puts in .device-carry/blin-maxtree/ (see
// CMakeLists.txt), and this file only calls its entry point:
//   maxtree_cu(input, input_stride, width, height, parent, parent_stride, variant, chrono)
// which allocates its device buffers, uploads the image, builds the tiles, merges, flattens while
// downloading the parent image, and frees everything, each call. Configuration: its benchmark's best
// for 8 bits (1-D column trees and grid-connection pruning: MAXTREE_OPTIM_1D |
// GRID_CONNECTION_OPTIM_ON) and its 16-bit ("HDR") path (MAXTREE_BASE); input and output in pinned
// memory, as its benchmark has them. Kernel scope: the time its own CUDA events give (its benchmark's
// --bench-kernel-only figure, from the first tile build to the last flatten); end to end: a host
// clock around the whole call.
// Its parent image: pixel indices in its device pitch (y * pitch + x), a negative value at the root,
// every pixel pointing to its node's level root (not the smallest index): written here as linear
// indices (the root to itself) in the uint16 (2, H, W) low/high halves the maxtree adapter maps to
// the normal form (maxtree::normal_form_of) and compares with seq, as for the Python peers.
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "baselines/peers.hpp"
#include "core/error.hpp"
#include "core/gpu.hpp"
#include "maxtree_defs.hpp"  // Blin's: algo_variation, Chrono

// Blin's entry points (maxtree.cu, maxtree_hdr.cu).
void maxtree_cu(const uint8_t* input_buffer, std::ptrdiff_t input_stride, int width, int height, int32_t* parent,
                std::ptrdiff_t parent_stride, uint32_t variant, Chrono* chrono);
void maxtree_cu(const uint16_t* input_buffer, std::ptrdiff_t input_stride, int width, int height, int32_t* parent,
                std::ptrdiff_t parent_stride, uint32_t variant, Chrono* chrono);

#ifndef REPIX_BLIN_MAXTREE_VERSION
#define REPIX_BLIN_MAXTREE_VERSION "unknown"
#endif

namespace repix::peers {
namespace {

// Its benchmark's timer interface: the kernel time of the call, set once per call.
struct KernelSeconds final : Chrono {
  double seconds = -1;
  void PauseTiming() override {}
  void ResumeTiming() override {}
  void SetIterationTime(double s) override { seconds = s; }
};

template <class T>
PeerRun run_typed(const HostImage& image, int connectivity, const protocol::Rule& rule, bool kernel_scope) {
  const Shape& s = image.shape();
  const int width = static_cast<int>(s.nx), height = static_cast<int>(s.ny);
  // Its device pitch (the unit of its parent indices): the same cudaMallocPitch call it makes.
  std::size_t pitch_bytes = 0;
  void* probe = nullptr;
  REPIX_CUDA(cudaMallocPitch(&probe, &pitch_bytes, static_cast<std::size_t>(width) * sizeof(T), static_cast<std::size_t>(height)));
  REPIX_CUDA(cudaFree(probe));
  const std::int64_t pitch = static_cast<std::int64_t>(pitch_bytes / sizeof(T));
  if (pitch * height >= (std::int64_t(1) << 31)) throw Unsupported("peer blin-maxtree: its indices are 32-bit; the image is too large");
  HostImage input(image.dtype(), s, /*pinned=*/true);
  std::memcpy(input.raw(), image.raw(), image.bytes());
  HostBuffer parent(static_cast<std::size_t>(pitch * height) * sizeof(std::int32_t), /*pinned=*/true);
  const std::uint32_t variant = (connectivity == 8 ? MAXTREE_C8 : MAXTREE_C4) |
                                (sizeof(T) == 1 ? (MAXTREE_OPTIM_1D | GRID_CONNECTION_OPTIM_ON) : MAXTREE_BASE);
  auto call = [&] {
    KernelSeconds chrono;
    const auto t0 = std::chrono::steady_clock::now();
    maxtree_cu(input.data<T>(), static_cast<std::ptrdiff_t>(width) * sizeof(T), width, height,
               static_cast<std::int32_t*>(parent.data()), static_cast<std::ptrdiff_t>(pitch) * sizeof(std::int32_t), variant,
               kernel_scope ? &chrono : nullptr);
    const double host_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const cudaError_t err = cudaGetLastError();  // it prints its CUDA errors and carries on: fail here instead
    if (err != cudaSuccess) throw Error(std::string("peer blin-maxtree: CUDA error: ") + cudaGetErrorString(err));
    if (kernel_scope && chrono.seconds < 0) throw Error("peer blin-maxtree: its chrono reported no kernel time");
    return kernel_scope ? chrono.seconds * 1e3 : host_ms;
  };
  PeerRun r = sample_native(rule, call);
  r.scope = kernel_scope ? "kernel" : "end-to-end";
  r.version = REPIX_BLIN_MAXTREE_VERSION;
  // The last call's parent image, as linear indices in uint16 halves (see the top of the file).
  const std::int64_t n = s.size();
  r.output = HostImage(DType::u16, Shape::d3(s.nx, s.ny, 2));
  std::uint16_t* halves = r.output.data<std::uint16_t>();
  const auto* par = static_cast<const std::int32_t*>(parent.data());
  for (std::int64_t y = 0; y < height; ++y)
    for (std::int64_t x = 0; x < width; ++x) {
      const std::int32_t v = par[y * pitch + x];
      const std::int64_t p = y * width + x;
      const std::int64_t q = v < 0 ? p : (v / pitch) * width + v % pitch;
      halves[p] = static_cast<std::uint16_t>(q & 0xFFFF);
      halves[n + p] = static_cast<std::uint16_t>(q >> 16);
    }
  return r;
}

PeerRun run(const std::vector<const HostImage*>& inputs, const nlohmann::json& params, const protocol::Rule& rule,
            bool kernel_scope) {
  const HostImage& image = *inputs.at(0);
  const Shape& s = image.shape();
  // Its tiles are 64 x 16 and its own tests use 151 x 151 images; below one tile its kernels are
  // not exercised by its authors, and a fault there would end every GPU case of the run.
  if (s.nx < 64 || s.ny < 16) throw Unsupported("peer blin-maxtree: images of at least one 64x16 tile only");
  const int connectivity = params.value("connectivity", 4);
  if (image.dtype() == DType::u8) return run_typed<std::uint8_t>(image, connectivity, rule, kernel_scope);
  if (image.dtype() == DType::u16) return run_typed<std::uint16_t>(image, connectivity, rule, kernel_scope);
  throw Unsupported("peer blin-maxtree takes uint8 and uint16 images only");
}

NativePeer blin_peer(std::string id, std::string description, bool kernel_scope) {
  return {{"maxtree", std::move(id), std::move(description), true, true},
          [kernel_scope](const std::vector<const HostImage*>& in, const nlohmann::json& p, const protocol::Rule& rule) {
            return run(in, p, rule, kernel_scope);
          }};
}

}  // namespace

NativePeer blin_maxtree_peer() {
  return blin_peer("blin-maxtree",
                   "N. Blin's CUDA max-tree (LRDE 2021 / TPDS 2022 code; 8-bit: 1-D column trees + grid pruning, "
                   "16-bit: its HDR path), its own CUDA-event kernel time",
                   /*kernel_scope=*/true);
}

NativePeer blin_maxtree_e2e_peer() {
  return blin_peer("blin-maxtree-e2e",
                   "N. Blin's CUDA max-tree, the whole call (its allocations, pinned upload, kernels, download "
                   "overlapped with the flatten, frees)",
                   /*kernel_scope=*/false);
}

}  // namespace repix::peers
