// The tiled GPU max-tree steps (Blin et al.) that gpu-tile and gpu-grid share, on the engine of
// gpu_engine.cuh. Before the engine's flatten:
//  1. tile build (NVTX "build"): one 64 x 16 block per tile; the tile's levels and a local parent
//     array in shared memory; each thread zips its pixel with its earlier neighbours inside the
//     tile (gpu_core::merge on shared memory, local indices; the Policy may skip edges the
//     others imply), so the long climbs stay in shared memory; the tile's tree is then written to
//     the global parent image in global indices.
//  2. horizontal merge (NVTX "merge-horizontal"): a thread per pixel of each tile column's left
//     border zips it with its neighbours across that border (gpu_core::merge on global memory).
//  3. vertical merge (NVTX "merge-vertical"): the same across each tile row's top border, for the
//     edges the horizontal merge did not take (gpu_core.hpp's partition: each edge exactly once).
// The merges are order independent (gpu_core.hpp), so the three steps end on gpu-naive's normal
// form. The horizontal and vertical merges are two kernels to time them apart, one grid in gpu-opt
// (NVTX "merge-borders": border_merge_kernel).
// Shared memory is only ever touched through atomics between the barriers of the tile build, except
// by gpu-tile-1d's column trees: one thread a column, plain accesses, a barrier before the merges.
#pragma once
#include "maxtree/gpu_engine.cuh"

namespace repix::maxtree::gpu {

using gpu_core::kTileH;
using gpu_core::kTileW;

// One block of kTileW x kTileH threads per tile (1-D grid of tiles, row-major: tiles_x per row).
// Threads outside the image (the last tiles) take part in the barriers only.
// Policy (see SeminarPolicy below): `static bool skip(const T* s_f, int l, int ln)`, true for an
// in-tile edge (l, ln) (local indices) whose merge the tile's other edges already imply (gpu-grid),
// false for every edge (gpu-tile); `kColumnTrees`: one thread a column first builds the column's
// 1-D tree (gpu_core::build_column_tree) and the vertical in-tile zips are left out (gpu-tile-1d);
// `kCompress`: write the tile's tree compressed
// (gpu_core::compressed_parent, gpu-compressed); `Mem`: the atomics of the merges; `kWalkHops`: the
// engine's walk_hops(); `kPruneBorders`: the border merges zip only what
// gpu_core::for_each_column_border_zip / for_each_row_border_zip leave (gpu-packed, gpu-opt);
// `kOnePassFlatten`: the engine's flatten is gpu_core::settle's one pass, in place (gpu-monotone);
// `kSettleCopy`: that pass reads the tree and writes the second buffer (settle_copy_kernel);
// `kFusedBorderMerges`: both border merges in one grid, border_merge_kernel (gpu-opt).
// `kClimbingMerges`: that grid's zips are gpu_core::climbing_merge's, not gpu_core::merge's
// (gpu-climbing-merges); `kPairedLoads`: their climbs and the settle walks load a pixel's level and
// parent together (gpu-opt).
template <class Policy, class T, class I>
__global__ void __launch_bounds__(kTileW * kTileH)
    tile_build_kernel(const T* __restrict__ f, I* __restrict__ par, Geom g, std::int64_t tiles_x) {
  __shared__ T s_f[kTileW * kTileH];
  __shared__ std::int32_t s_par[kTileW * kTileH];
  const std::int64_t x0 = (blockIdx.x % tiles_x) * kTileW, y0 = (blockIdx.x / tiles_x) * kTileH;
  const int w = static_cast<int>(min(std::int64_t(kTileW), g.nx - x0));
  const int h = static_cast<int>(min(std::int64_t(kTileH), g.ny - y0));
  const int lx = threadIdx.x, ly = threadIdx.y, l = ly * kTileW + lx;
  const bool inside = lx < w && ly < h;
  const std::int64_t gp = (y0 + ly) * g.nx + x0 + lx;
  if (inside) s_f[l] = f[gp];
  s_par[l] = l;
  __syncthreads();  // levels loaded and every local parent initialised before any merge reads them
  if constexpr (Policy::kColumnTrees) {
    if (ly == 0 && lx < w) gpu_core::build_column_tree(s_f, s_par, lx, h);
    __syncthreads();  // every column's tree written (plain stores, one thread a column) before the merges
  }
  if (inside)
    gpu_core::for_each_earlier_neighbour(lx, ly, w, g.conn, [&](std::int64_t nx, std::int64_t ny) {
      const int ln = static_cast<int>(ny * kTileW + nx);
      if (Policy::kColumnTrees && gpu_core::column_edge(l, ln)) return;  // in the column's tree already
      if (!Policy::skip(s_f, l, ln)) gpu_core::merge(s_f, s_par, l, ln, typename Policy::Mem{});
    });
  __syncthreads();  // every merge of the tile done before its tree is read (plain loads from here)
  if (!inside) return;
  const std::int32_t local = Policy::kCompress ? gpu_core::compressed_parent(s_f, s_par, l) : s_par[l];
  par[gp] = gpu_core::tile_to_global<I>(local, x0, y0, g.nx);
}

// One border zip: gpu_core::merge, or with kClimb gpu_core::climbing_merge (gpu-climbing-merges),
// its climbs' loads paired with kPaired (gpu-opt).
template <bool kClimb, bool kPaired, class T, class I, class Mem>
__device__ __forceinline__ void border_zip(const T* __restrict__ f, I* par, I p, I q, const Mem& mem) {
  if constexpr (kClimb) gpu_core::climbing_merge<kPaired>(f, par, p, q, mem);
  else gpu_core::merge(f, par, p, q, mem);
}

// The merges of pixel (x, y) on a tile column's left border (x = k * kTileW, k >= 1) with its
// neighbours across it (gpu_core::for_each_horizontal_merge_edge); kPrune: only the zips
// gpu_core::for_each_column_border_zip leaves (gpu-packed, gpu-opt).
template <class Mem, bool kPrune, bool kClimb = false, bool kPaired = false, class T, class I>
__device__ void merge_across_column_border(const T* __restrict__ f, I* par, const Geom& g, std::int64_t x, std::int64_t y) {
  const auto zip = [&](std::int64_t p, std::int64_t q) { border_zip<kClimb, kPaired>(f, par, static_cast<I>(p), static_cast<I>(q), Mem{}); };
  if (kPrune) {
    gpu_core::for_each_column_border_zip(f, g.nx, g.conn, x, y, zip);
    return;
  }
  gpu_core::for_each_horizontal_merge_edge(x, y, g.ny, g.conn,
                                           [&](std::int64_t nx, std::int64_t ny) { zip(y * g.nx + x, ny * g.nx + nx); });
}

// The same for pixel (x, y) on a tile row's top border (y = k * kTileH, k >= 1), the edges the
// horizontal merge does not take (gpu_core::for_each_vertical_merge_edge); kPrune: only the zips
// gpu_core::for_each_row_border_zip leaves.
template <class Mem, bool kPrune, bool kClimb = false, bool kPaired = false, class T, class I>
__device__ void merge_across_row_border(const T* __restrict__ f, I* par, const Geom& g, std::int64_t x, std::int64_t y) {
  const auto zip = [&](std::int64_t p, std::int64_t q) { border_zip<kClimb, kPaired>(f, par, static_cast<I>(p), static_cast<I>(q), Mem{}); };
  if (kPrune) {
    gpu_core::for_each_row_border_zip(f, g.nx, g.conn, x, y, zip);
    return;
  }
  gpu_core::for_each_vertical_merge_edge(x, y, g.nx, g.conn,
                                         [&](std::int64_t nx, std::int64_t ny) { zip(y * g.nx + x, ny * g.nx + nx); });
}

// One thread per pixel of the tile columns' left borders x = k * kTileW, 1 <= k < tiles_x. (A 2-D
// grid without this flat index's 64-bit division and modulo in every thread measured the same on the
// H100 at 6000x4000: 683 -> 674 us here, 790 -> 785 us in the vertical merge; the
// merges' ~130 instructions a thread, twice Blin's, are in the zip's steps: gpu_core::merge_step.)
template <class Mem, bool kPrune, class T, class I>
__global__ void horizontal_merge_kernel(const T* __restrict__ f, I* par, Geom g, std::int64_t tiles_x) {
  const std::int64_t borders = tiles_x - 1;
  REPIX_MAXTREE_FOR_EACH_PIXEL(i, borders * g.ny)
  merge_across_column_border<Mem, kPrune>(f, par, g, (1 + i % borders) * kTileW, i / borders);
}

// One thread per pixel of the tile rows' top borders y = k * kTileH, 1 <= k < tiles_y.
template <class Mem, bool kPrune, class T, class I>
__global__ void vertical_merge_kernel(const T* __restrict__ f, I* par, Geom g, std::int64_t tiles_y) {
  REPIX_MAXTREE_FOR_EACH_PIXEL(i, (tiles_y - 1) * g.nx)
  merge_across_row_border<Mem, kPrune>(f, par, g, i % g.nx, (1 + i / g.nx) * kTileH);
}

// gpu-opt's border merges, both in one grid of 256-thread blocks: the first h.blocks take the
// horizontal merge (each 32 borders by 8 rows), the others the vertical one (each 256 columns of one
// row border). The merges give the same tree in any order and interleaving (gpu_core.hpp), so
// nothing orders the two; one grid lets the vertical merge's blocks fill the SMs the horizontal
// merge's long climbs leave idle: on the H100 at 6000x4000 the horizontal kernel ran 0.70 ms
// at 20 % achieved occupancy (1.4 waves of 372 k threads) beside the vertical kernel's 0.79 ms.
struct FusedBorderGrid {
  unsigned h_blocks_x = 0, h_blocks = 0, v_blocks_x = 0, blocks = 0;
};
inline FusedBorderGrid fused_border_grid(const Geom& g, std::int64_t tiles_x, std::int64_t tiles_y, int block) {
  const auto up = [](std::int64_t n, std::int64_t d) { return (n + d - 1) / d; };
  const std::int64_t hx = up(tiles_x - 1, 32), h = hx * up(g.ny, block / 32), vx = up(g.nx, block), v = tiles_y > 1 ? vx * (tiles_y - 1) : 0;
  if (h + v > std::int64_t(0x7FFFFFFF)) throw Error("maxtree: the image has too many tile borders for one grid of border merges");
  return {static_cast<unsigned>(hx), static_cast<unsigned>(h), static_cast<unsigned>(vx), static_cast<unsigned>(h + v)};
}
// Policy's Mem, kPruneBorders, kClimbingMerges, kPairedLoads and kBorderBlock (threads a block).
template <class Policy, class T, class I>
__global__ void __launch_bounds__(Policy::kBorderBlock)
    border_merge_kernel(const T* __restrict__ f, I* par, Geom g, std::int64_t tiles_x, FusedBorderGrid grid) {
  using Mem = typename Policy::Mem;
  constexpr bool kPrune = Policy::kPruneBorders, kClimb = Policy::kClimbingMerges, kPaired = Policy::kPairedLoads;
  constexpr int kBlock = Policy::kBorderBlock;
  const unsigned t = threadIdx.x;
  if (blockIdx.x < grid.h_blocks) {
    const std::int64_t k = std::int64_t(blockIdx.x % grid.h_blocks_x) * 32 + t % 32;
    const std::int64_t y = std::int64_t(blockIdx.x / grid.h_blocks_x) * (kBlock / 32) + t / 32;
    if (k < tiles_x - 1 && y < g.ny) merge_across_column_border<Mem, kPrune, kClimb, kPaired>(f, par, g, (1 + k) * kTileW, y);
  } else {
    const unsigned b = blockIdx.x - grid.h_blocks;
    const std::int64_t x = std::int64_t(b % grid.v_blocks_x) * kBlock + t;
    const std::int64_t y = (1 + std::int64_t(b / grid.v_blocks_x)) * kTileH;
    if (x < g.nx) merge_across_row_border<Mem, kPrune, kClimb, kPaired>(f, par, g, x, y);
  }
}

// The seminar's tiled pipeline: every in-tile edge merged (gpu-tile), trees written as built,
// atomic read-modify-write loads, pointer-jumping flatten. Variants derive and change what they add.
struct SeminarPolicy {
  template <class T>
  __device__ static bool skip(const T*, int, int) { return false; }
  static constexpr bool kColumnTrees = false;
  static constexpr bool kCompress = false;
  using Mem = DeviceAtomics;
  static constexpr int kWalkHops = 0;
  static constexpr bool kPruneBorders = false;  // the merges zip gpu_core::for_each_{column,row}_border_zip's
  static constexpr bool kOnePassFlatten = false;  // the engine's one_pass_flatten()
  static constexpr bool kSettleCopy = false;  // the engine's settle_copy() (with kOnePassFlatten)
  static constexpr bool kFusedBorderMerges = false;  // border_merge_kernel: both merges in one grid
  static constexpr bool kClimbingMerges = false;  // its zips gpu_core::climbing_merge (else gpu_core::merge)
  static constexpr bool kPairedLoads = false;  // the climbs and the flatten's walks load level and parent together
  static constexpr int kBorderBlock = 256;  // border_merge_kernel's threads a block
  static constexpr bool kSettleByTiles = false;  // the engine's settle_by_tiles() (with kPairedLoads)
};

// gpu-grid's policy: the seminar's, skipping each in-tile zip with the left neighbour that the pair
// above already implies (gpu_core::grid_prunes, where the argument is written out).
struct GridPolicy : SeminarPolicy {
  template <class T>
  __device__ static bool skip(const T* s_f, int l, int ln) {
    return gpu_core::grid_prunes(s_f, l, ln);
  }
};

// gpu-compressed's policy (gpu_compressed.cu has what each change bought), the base of gpu-packed's
// and gpu-opt's: gpu-grid's with each tile's tree written compressed, relaxed atomic loads in the
// merges, and the flatten's walk.
struct CompressedPolicy : GridPolicy {
  static constexpr bool kCompress = true;
  using Mem = RelaxedLoadAtomics;
  // A pixel's chain after the compression: one link inside its tile, then one per tile border its
  // node was merged across (fewer where the merges' halving shortened it). 16 covers every node
  // that spans a few tiles in one pass; longer chains fall back to the jumps.
  static constexpr int kWalkHops = 16;
};

// The engine's build and merge steps for the tiled variants; TiledBuild<Policy>::type<T, I> is what
// make_gpu_variant takes. A variant that changes the horizontal merge derives and overrides
// horizontal() (gpu-border).
template <class Policy, class T, class I>
class TileBuild : public Engine<T, I> {
  static_assert(!Policy::kSettleByTiles || (Policy::kSettleCopy && Policy::kPairedLoads),
                "settle_tiles_kernel reads the tree with non-coherent loads and writes the second buffer");

 protected:
  std::int64_t tiles_x() const { return (this->g_.nx + kTileW - 1) / kTileW; }
  std::int64_t tiles_y() const { return (this->g_.ny + kTileH - 1) / kTileH; }

  void build(const T* f, I* par, cudaStream_t s) override {
    this->tiles_ = tiles_x() * tiles_y();
    tile_build_kernel<Policy, T, I><<<static_cast<unsigned>(this->tiles_), dim3(kTileW, kTileH), 0, s>>>(f, par, this->g_, tiles_x());
    REPIX_CUDA_LAUNCH();
  }
  void merge(const T* f, I* par, cudaStream_t s) override {
    if (Policy::kFusedBorderMerges) {
      const FusedBorderGrid grid = fused_border_grid(this->g_, tiles_x(), tiles_y(), Policy::kBorderBlock);
      if (grid.blocks == 0) return;  // one tile
      nvtx::Range r("merge-borders");
      border_merge_kernel<Policy, T, I><<<grid.blocks, Policy::kBorderBlock, 0, s>>>(f, par, this->g_, tiles_x(), grid);
      REPIX_CUDA_LAUNCH();
      return;
    }
    if (tiles_x() > 1) {
      nvtx::Range r("merge-horizontal");
      horizontal(f, par, s);
    }
    if (tiles_y() > 1) {
      nvtx::Range r("merge-vertical");
      vertical_merge_kernel<typename Policy::Mem, Policy::kPruneBorders, T, I>
          <<<blocks_for((tiles_y() - 1) * this->g_.nx), kThreads, 0, s>>>(f, par, this->g_, tiles_y());
      REPIX_CUDA_LAUNCH();
    }
  }
  // The merges across the tile column borders (tiles_x() > 1).
  virtual void horizontal(const T* f, I* par, cudaStream_t s) {
    horizontal_merge_kernel<typename Policy::Mem, Policy::kPruneBorders, T, I>
        <<<blocks_for((tiles_x() - 1) * this->g_.ny), kThreads, 0, s>>>(f, par, this->g_, tiles_x());
    REPIX_CUDA_LAUNCH();
  }
  int walk_hops() const override { return Policy::kWalkHops; }
  bool one_pass_flatten() const override { return Policy::kOnePassFlatten; }
  bool settle_copy() const override { return Policy::kSettleCopy; }
  bool paired_loads() const override { return Policy::kPairedLoads; }
  bool settle_by_tiles() const override { return Policy::kSettleByTiles; }
  bool build_writes_every_parent() const override { return true; }  // each tile writes its pixels
};

template <class Policy>
struct TiledBuild {
  template <class T, class I>
  using type = TileBuild<Policy, T, I>;
};

}  // namespace repix::maxtree::gpu
