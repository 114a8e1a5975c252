// Device-side pieces shared by the ladder kernels: global atomics on the int64 accumulators, the
// block-private shared-memory histogram of gpu-shared-hist / gpu-cached, and the dispatch from
// a LadderLaunch to typed kernel instantiations. Host-visible pieces are in gpu_common.hpp.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <type_traits>

#include "core/gpu/block_histogram.cuh"
#include "ecc/gpu_common.hpp"

namespace repix::ecc::gpu {

// Threads per block of every ladder kernel (ladder_tiles()).
constexpr int kLadderThreads = 256;

// Float images reach the kernels as uint32 ranks of distinct values: every rank occurs, so no
// occurrence count is kept for them. Integer images count occurrences so that absent values
// can be dropped from the curve.
template <class T>
constexpr bool kCountsOccurrences = !std::is_same<T, std::uint32_t>::value;

// vcec is signed; CUDA's 64-bit atomicAdd is unsigned. Two's complement makes them the same add.
__device__ __forceinline__ void global_add_vcec(long long* vcec, std::uint32_t bin, int change) {
  atomicAdd(reinterpret_cast<unsigned long long*>(vcec) + bin,
            static_cast<unsigned long long>(static_cast<long long>(change)));
}

__device__ __forceinline__ void global_add_count(unsigned long long* count, std::uint32_t bin,
                                                 unsigned long long k = 1) {
  atomicAdd(count + bin, k);
}

// A block-private VCEC histogram in dynamic shared memory (Algorithm 2 lines 6-11 and 32-35):
// core/gpu's BlockHistogram for the vcec and, when kCount, a second one for the occurrence
// counts, over bins [0, window). Bins at or beyond the window -- uint16 images (65536 bins),
// float images with more distinct values than kSmemBinsVcecOnly -- go straight to the global
// int64 accumulators with global atomics, so any number of bins is handled correctly; only the
// speed-up is limited to the window. Unlike Algorithm 2, bins that stayed zero are not merged
// (most of them when the window is large): the same result with fewer global atomics.
// Usage, by every thread of the block (no early return before finish()):
//   BlockHistogram<kCount> h(smem, window); h.init(); __syncthreads();
//   ... h.add(bin, change, gvcec, gcount) ...
//   __syncthreads(); h.finish(gvcec, gcount);
template <bool kCount>
struct BlockHistogram {
  ::repix::gpu::BlockHistogram vcec, count;

  __device__ __forceinline__ BlockHistogram(int* smem, int window)
      : vcec(smem, window), count(smem + window, window) {}

  __device__ __forceinline__ void init() const {
    vcec.init();
    if (kCount) count.init();
  }

  __device__ __forceinline__ void add(std::uint32_t bin, int change, long long* gvcec,
                                      unsigned long long* gcount) const {
    vcec.add(bin, change, [gvcec](std::uint32_t b, int v) { global_add_vcec(gvcec, b, v); });
    if (kCount)
      count.add(bin, 1, [gcount](std::uint32_t b, int k) { global_add_count(gcount, b, static_cast<unsigned long long>(k)); });
  }

  __device__ __forceinline__ void finish(long long* gvcec, unsigned long long* gcount) const {
    vcec.flush([gvcec](std::uint32_t b, int v) { global_add_vcec(gvcec, b, v); });
    if (kCount)
      count.flush([gcount](std::uint32_t b, int k) { global_add_count(gcount, b, static_cast<unsigned long long>(k)); });
  }
};

// Shared-memory window sizing for element type T: bins that fit (host) and the bytes to ask for.
template <class T>
constexpr int smem_window_capacity() {
  return kCountsOccurrences<T> ? (sizeof(T) == 1 ? 256 : kSmemBinsWithCount) : kSmemBinsVcecOnly;
}
template <class T>
constexpr std::size_t smem_window_bytes() {
  return static_cast<std::size_t>(smem_window_capacity<T>()) * sizeof(int) *
         (kCountsOccurrences<T> ? 2 : 1);
}

// The window actually used by a block: all bins when they fit, else the capacity. For float
// ranks the distinct count is only known on the device (no host round trip inside compute()).
__device__ __forceinline__ int smem_window(std::int64_t nbins, const std::int64_t* d_nbins,
                                           int capacity) {
  const std::int64_t n = d_nbins ? *d_nbins : nbins;
  return static_cast<int>(n < capacity ? n : capacity);
}

// Grid for a tile loop: one block per tile (the paper's layout). The kernels still loop over
// tiles with a stride of gridDim.x, so more tiles than the grid limit are also covered.
inline dim3 tile_grid_dim(const TileGrid& t) {
  return dim3(static_cast<unsigned>(std::min<std::int64_t>(t.total, INT_MAX)));
}
inline dim3 tile_block_dim(const TileGrid& t) {
  return dim3(static_cast<unsigned>(t.bx), static_cast<unsigned>(t.by), static_cast<unsigned>(t.bz));
}

// Calls f(typed device image pointer, std::integral_constant<int, Dims>) for the launch's
// element type and rules, so a variant instantiates its kernel for every (T, Dims).
// The voxel loop of the plain-load ladder kernels (naive, register, shared-hist): tiles dealt to
// blocks grid-stride, each thread decoding its voxel, reading it and its neighbours with plain
// global loads, and handing the value and its win table to `visit`. Threads outside the image
// skip their tile rather than return, so barriers after the loop are reached by all.
// `img` is deliberately not __restrict__: with it the compiler proves the image read-only and
// routes every load through the read-only data cache (LDG.CONSTANT), which is gpu-cached's step
// of the ladder.
template <int Dims, class T, class Visit>
__device__ __forceinline__ void for_each_voxel_wins(const T* img, const Geometry& g,
                                                    const TileGrid& tiles, Visit&& visit) {
  for (std::int64_t t = blockIdx.x; t < tiles.total; t += gridDim.x) {
    std::int64_t x, y, z;
    tiles.voxel(t, threadIdx.x, threadIdx.y, threadIdx.z, x, y, z);
    if (x >= g.nx || y >= g.ny || z >= g.nz) continue;
    const T c = img[g.index(x, y, z)];
    bool wins[3][3][3];
    neighbour_wins<Dims>(
        c, [&](std::int64_t qx, std::int64_t qy, std::int64_t qz) { return img[g.index(qx, qy, qz)]; },
        g, x, y, z, wins);
    visit(c, wins);
  }
}

template <class F>
void visit_launch(const LadderLaunch& a, F&& f) {
  auto with_dims = [&](auto img) {
    if (a.dims == 3)
      f(img, std::integral_constant<int, 3>{});
    else
      f(img, std::integral_constant<int, 2>{});
  };
  switch (a.elem) {
    case Elem::u8: with_dims(static_cast<const std::uint8_t*>(a.image)); return;
    case Elem::u16: with_dims(static_cast<const std::uint16_t*>(a.image)); return;
    case Elem::u32: with_dims(static_cast<const std::uint32_t*>(a.image)); return;
  }
}

}  // namespace repix::ecc::gpu
