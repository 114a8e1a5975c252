// `gpu-border`: gpu-grid with Blin et al.'s border max-trees in the horizontal merge (the seminar's
// ablation: it saved 0.5 ms in that merge on an RTX 2060 but cost 2.4 ms in its two extra steps).
// Instead of zipping chains in the global parent image (non-coalesced dependent loads and atomics),
// one block per strip of tiles (a tile row, 16 pixels high) copies the closure of its border
// pixels' nodes into a compact tree in shared memory (keys, parents, global level roots: 16 or 20
// bytes a node, as many nodes as the opt-in shared memory holds), zips the strip's border edges
// there, and writes the changed parents back (border_core.hpp has the steps and why they are
// correct). Strips whose closure does not fit, and the 8-connected diagonals between two strips,
// are merged afterwards in global memory as gpu-grid does. Tile build, vertical merges and flatten
// are gpu-grid's.
#include <algorithm>

#include "maxtree/border_core.hpp"
#include "maxtree/gpu_tile_engine.cuh"
#include "maxtree/variants.hpp"

namespace repix::maxtree::gpu {
namespace {

using border_core::Compact;

// Step 1's atomics: the look-up table in global memory, the block's slot counter and full flag in
// shared memory.
struct ClaimAtomics {
  __device__ std::int32_t cas_lut(std::int32_t* p, std::int32_t expected, std::int32_t desired) const {
    return atomicCAS(p, expected, desired);
  }
  __device__ std::int64_t cas_lut(std::int64_t* p, std::int64_t expected, std::int64_t desired) const {
    return static_cast<std::int64_t>(atomicCAS(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(expected),
                                               static_cast<unsigned long long>(desired)));
  }
  __device__ std::int32_t take(std::int32_t* count) const { return atomicAdd(count, 1); }
  __device__ void set_full(std::int32_t* full) const { atomicExch(full, 1); }
};

constexpr int kBorderThreads = 1024;

// One block per strip. Dynamic shared memory: keys (8 bytes), compact parents (4), global level
// roots (sizeof(I)) of `capacity` nodes (capacity even, so the I array stays 8-byte aligned).
template <class T, class I>
__global__ void __launch_bounds__(kBorderThreads)
    border_merge_kernel(const T* __restrict__ f, I* par, I* lut, Geom g, std::int64_t tiles_x, std::int32_t capacity,
                        unsigned* overflow, unsigned long long* counters) {
  extern __shared__ __align__(8) unsigned char smem[];
  __shared__ std::int32_t count, full;
  const Compact<I> c{reinterpret_cast<std::uint64_t*>(smem), reinterpret_cast<std::int32_t*>(smem + 8 * std::size_t(capacity)),
                     reinterpret_cast<I*>(smem + 12 * std::size_t(capacity)), &count, capacity, &full};
  const std::int64_t y0 = static_cast<std::int64_t>(blockIdx.x) * kTileH;
  const int h = static_cast<int>(min(std::int64_t(kTileH), g.ny - y0));
  if (threadIdx.x == 0) {
    count = 0;
    full = 0;
  }
  __syncthreads();  // counters set before any claim
  // 1. the closure of the border pixels' nodes (the strip's tiles are not merged yet: par is read
  //    only, and no other block touches these pixels)
  const std::int64_t pixels = border_core::border_pixels(tiles_x, h);
  for (std::int64_t i = threadIdx.x; i < pixels; i += blockDim.x) {
    std::int64_t x, y;
    border_core::border_pixel(i, h, y0, x, y);
    border_core::claim_closure(f, par, lut, static_cast<I>(y * g.nx + x), c, ClaimAtomics{});
  }
  __syncthreads();  // every claim and its slot written (lut in global memory: visible to the block)
  if (threadIdx.x == 0) {  // the stats: border pixels, compact nodes, strips left to the global merges
    atomicAdd(counters, static_cast<unsigned long long>(pixels));
    if (full) atomicAdd(counters + 2, 1ull);
    else atomicAdd(counters + 1, static_cast<unsigned long long>(count));
  }
  if (full) {  // the closure does not fit: the global merges take the strip
    if (threadIdx.x == 0) overflow[blockIdx.x] = 1u;
    return;
  }
  const std::int32_t slots = count;
  // 2. compact parents, and each border pixel's slot (its level root's)
  for (std::int32_t s = threadIdx.x; s < slots; s += blockDim.x) c.parent[s] = border_core::compact_parent(f, par, lut, c, s);
  for (std::int64_t i = threadIdx.x; i < pixels; i += blockDim.x) {
    std::int64_t x, y;
    border_core::border_pixel(i, h, y0, x, y);
    border_core::share_slot(f, par, lut, static_cast<I>(y * g.nx + x));
  }
  __syncthreads();  // the compact tree and the border pixels' slots complete before any zip
  // 3. the strip's border edges zipped on the compact tree (shared-memory atomics only)
  const std::int64_t edges_from = (tiles_x - 1) * h;  // the pixels right of each border
  for (std::int64_t i = threadIdx.x; i < edges_from; i += blockDim.x) {
    const std::int64_t x = (1 + i / h) * kTileW, y = y0 + i % h;
    const std::int32_t a = static_cast<std::int32_t>(lut[y * g.nx + x]);
    border_core::for_each_strip_edge(x, y, y0, h, g.ny, g.conn, true, [&](std::int64_t nx, std::int64_t ny) {
      const std::int32_t b = static_cast<std::int32_t>(lut[ny * g.nx + nx]);
      gpu_core::merge(c.key, c.parent, a, b, DeviceAtomics{});
    });
  }
  __syncthreads();  // every zip done before the commit reads the compact parents
  // 4. commit: each node's parent in global indices (only this strip's pixels are written)
  for (std::int32_t s = threadIdx.x; s < slots; s += blockDim.x) par[c.node[s]] = border_core::committed_parent(c, s);
}

// What the strips left: every horizontal edge of an overflowed strip, and the edges between two
// strips (8-connectivity), in global memory as gpu-grid merges them.
template <class T, class I>
__global__ void border_rest_kernel(const T* __restrict__ f, I* par, Geom g, std::int64_t tiles_x, const unsigned* overflow) {
  const std::int64_t borders = tiles_x - 1;
  REPIX_MAXTREE_FOR_EACH_PIXEL(i, borders * g.ny) {
    const std::int64_t x = (1 + i % borders) * kTileW, y = i / borders;
    const std::int64_t y0 = y / kTileH * kTileH;
    const int h = static_cast<int>(min(std::int64_t(kTileH), g.ny - y0));
    const bool whole_strip = overflow[y / kTileH] != 0u;
    gpu_core::for_each_horizontal_merge_edge(x, y, g.ny, g.conn, [&](std::int64_t nx, std::int64_t ny) {
      if (whole_strip || ny < y0 || ny >= y0 + h)
        gpu_core::merge(f, par, static_cast<I>(y * g.nx + x), static_cast<I>(ny * g.nx + nx), GridPolicy::Mem{});
    });
  }
}

template <class T, class I>
class BorderBuild final : public TileBuild<GridPolicy, T, I> {
 public:
  void setup(const Geom& g, cudaStream_t s) override {
    TileBuild<GridPolicy, T, I>::setup(g, s);
    overflow_.allocate(static_cast<std::size_t>(this->tiles_y()));
    counters_.allocate(3);
    host_counters_ = HostBuffer(3 * sizeof(unsigned long long), /*pinned=*/true);
    std::fill_n(static_cast<unsigned long long*>(host_counters_.data()), 3, 0ull);
    int device = 0, optin = 0;
    REPIX_CUDA(cudaGetDevice(&device));
    REPIX_CUDA(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    constexpr int kPerNode = 8 + 4 + static_cast<int>(sizeof(I));
    capacity_ = ((optin - 64) / kPerNode) & ~1;  // 64: the kernel's static counters and alignment
    smem_ = static_cast<std::size_t>(capacity_) * kPerNode;
    REPIX_CUDA(cudaFuncSetAttribute(border_merge_kernel<T, I>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem_)));
  }

  Stats stats() const override {
    Stats st = TileBuild<GridPolicy, T, I>::stats();
    if (this->tiles_x() > 1) {
      const auto* c = static_cast<const unsigned long long*>(host_counters_.data());
      st.border_pixels = static_cast<std::int64_t>(c[0]);
      st.border_nodes = static_cast<std::int64_t>(c[1]);
      st.border_fallback_strips = static_cast<std::int64_t>(c[2]);
    }
    return st;
  }

 protected:
  void horizontal(const T* f, I* par, cudaStream_t s) override {
    const Geom& g = this->g_;
    I* lut = this->scratch();
    REPIX_CUDA(cudaMemsetAsync(lut, 0xFF, static_cast<std::size_t>(g.n()) * sizeof(I), s));  // -1: unclaimed
    REPIX_CUDA(cudaMemsetAsync(overflow_.get(), 0, static_cast<std::size_t>(this->tiles_y()) * sizeof(unsigned), s));
    REPIX_CUDA(cudaMemsetAsync(counters_.get(), 0, 3 * sizeof(unsigned long long), s));
    border_merge_kernel<T, I><<<static_cast<unsigned>(this->tiles_y()), kBorderThreads, smem_, s>>>(
        f, par, lut, g, this->tiles_x(), capacity_, overflow_.get(), counters_.get());
    REPIX_CUDA_LAUNCH();
    // Read by stats() once the stream has finished (as the engine's events are).
    REPIX_CUDA(cudaMemcpyAsync(host_counters_.data(), counters_.get(), 3 * sizeof(unsigned long long),
                               cudaMemcpyDeviceToHost, s));
    border_rest_kernel<T, I><<<blocks_for((this->tiles_x() - 1) * g.ny), kThreads, 0, s>>>(f, par, g, this->tiles_x(), overflow_.get());
    REPIX_CUDA_LAUNCH();
  }

 private:
  DeviceBuffer<unsigned> overflow_;
  DeviceBuffer<unsigned long long> counters_;
  HostBuffer host_counters_;
  std::int32_t capacity_ = 0;
  std::size_t smem_ = 0;
};

}  // namespace

Variant gpu_border_variant() {
  return make_gpu_variant<BorderBuild>(
      "gpu-border", "border-trees",
      "gpu-grid with the horizontal merges on border max-trees: each strip's border closure zipped in shared memory, "
      "then committed");
}

}  // namespace repix::maxtree::gpu
