// gpu-packed's and gpu-opt's tile build (Blin et al.'s in-tile layout, read in their published code,
// not copied): one block of 64 threads a 64x16 tile, one thread a column; its three phases are
// packed_core.hpp's functions, which the CPU tests run as the kernel does. PackedTiles<Policy> is the
// engine of a variant with this build and the merges and flatten its Policy (a CompressedPolicy
// with kPruneBorders and the rest) asks for.
#pragma once
#include "maxtree/gpu_tile_engine.cuh"
#include "maxtree/packed_core.hpp"

namespace repix::maxtree::gpu {

using packed_core::Word;

// The tile words' atomics: block-scope relaxed loads from the shared window and the CAS.
// gpu-compressed's tile build loads with ld.relaxed.gpu on the generic address, which sm_90 runs as
// a generic LD.E.STRONG.GPU (the SASS of gpu_packed.cu had 6 of them beside 39 LDS): the
// shared-space, CTA-scope form is a plain LDS (checked on a test kernel with nvcc 13.0 -arch=sm_90)
// and still a relaxed atomic load in the PTX memory model, so the zips' loads racing the CAS are no
// data race; compute-sanitizer racecheck, which sees only the LDS, found no hazard in them on the
// H100.
__device__ __forceinline__ Word load_relaxed_cta(unsigned shared_address) {
  Word v;
  asm volatile("ld.relaxed.cta.shared.b32 %0, [%1];" : "=r"(v) : "r"(shared_address) : "memory");
  return v;
}
struct SharedWordAtomics {
  __device__ __forceinline__ Word load(const Word* p) const {
    return load_relaxed_cta(static_cast<unsigned>(__cvta_generic_to_shared(p)));
  }
  __device__ __forceinline__ bool cas(Word* p, Word expected, Word desired) const {
    return atomicCAS(p, expected, desired) == expected;
  }
  // monotone_zip's hang (ATOMS.MAX: block scope is all the tile's threads).
  __device__ __forceinline__ Word fetch_max(Word* p, Word v) const { return atomicMax_block(p, v); }
};

// SharedWordAtomics on 32-bit shared-window addresses from a base taken once: SharedWordAtomics'
// generic addresses are converted again in every call, and the conversion reads the CTA's cluster
// rank (S2R SR_CgaCtaId, then a MOV) in the zips' loop: 11 M times each in gpu-climbing-merges'
// build at 6000x4000 8-bit, 4-connectivity, on the H200 (Nsight Compute source counters); with these
// the build ran 808 M warp instructions instead of 819 M. The empty asm makes the base opaque, so the
// compiler keeps it in a register instead of deriving it again; the CAS and the maximum are the same
// block-scope relaxed atomics, written in PTX on the shared address.
struct TileWindowAtomics {
  const Word* words;
  unsigned base;  // the shared-window address of words[0]
  __device__ explicit TileWindowAtomics(const Word* w) : words(w), base(static_cast<unsigned>(__cvta_generic_to_shared(w))) {
    asm volatile("" : "+r"(base));
  }
  __device__ __forceinline__ unsigned address(const Word* p) const {
    return base + static_cast<unsigned>(p - words) * static_cast<unsigned>(sizeof(Word));
  }
  __device__ __forceinline__ Word load(const Word* p) const { return load_relaxed_cta(address(p)); }
  __device__ __forceinline__ bool cas(Word* p, Word expected, Word desired) const {
    Word old;
    asm volatile("atom.relaxed.cta.shared.cas.b32 %0, [%1], %2, %3;" : "=r"(old) : "r"(address(p)), "r"(expected), "r"(desired) : "memory");
    return old == expected;
  }
  __device__ __forceinline__ Word fetch_max(Word* p, Word v) const {
    Word old;
    asm volatile("atom.relaxed.cta.shared.max.u32 %0, [%1], %2;" : "=r"(old) : "r"(address(p)), "r"(v) : "memory");
    return old;
  }
};

// One block of kTileW threads per tile (1-D grid of tiles, row-major: tiles_x per row); thread lx
// owns tile column lx. Columns outside the image (the last tiles) take part in the barriers only.
// kMonotone: the zips are packed_core::monotone_zip (gpu-monotone and after), else packed_core::merge (gpu-packed).
// kPlanned (with kMonotone): phase 2 as packed_core::plan_column_zips then zip_planned (gpu-planned-zips, gpu-opt).
// kWindow (with kPlanned): the zips' atomics are TileWindowAtomics (gpu-opt), else SharedWordAtomics.
template <bool kMonotone, bool kPlanned, bool kWindow, class T, class I>
__global__ void __launch_bounds__(kTileW)
    packed_build_kernel(const T* __restrict__ f, I* __restrict__ par, Geom g, std::int64_t tiles_x) {
  static_assert(kMonotone || !kPlanned, "the planned zips are monotone zips");
  static_assert(kPlanned || !kWindow, "the window addresses are the planned zips'");
  __shared__ T s_f[kTileW * kTileH];
  __shared__ Word s_w[kTileW * kTileH];
  const std::int64_t x0 = (blockIdx.x % tiles_x) * kTileW, y0 = (blockIdx.x / tiles_x) * kTileH;
  const int w = static_cast<int>(min(std::int64_t(kTileW), g.nx - x0));
  const int h = static_cast<int>(min(std::int64_t(kTileH), g.ny - y0));
  const int lx = threadIdx.x;
  const bool inside = lx < w;
  if (inside) packed_core::load_column(f, g.nx, x0, y0, h, lx, s_f, s_w);
  __syncthreads();  // every column's levels and tree in place (plain stores) before the zips read them
  if (inside) {
    if constexpr (kWindow)
      packed_core::zip_planned(s_f, s_w, lx, packed_core::plan_column_zips(s_f, h, g.conn, lx), TileWindowAtomics(s_w));
    else if constexpr (kPlanned)
      packed_core::zip_planned(s_f, s_w, lx, packed_core::plan_column_zips(s_f, h, g.conn, lx), SharedWordAtomics{});
    else
      packed_core::zip_column<kMonotone>(s_f, s_w, h, g.conn, lx, SharedWordAtomics{});
  }
  __syncthreads();  // every zip of the tile done before its tree is read (plain loads from here)
  if (inside) packed_core::write_column(s_f, s_w, g.nx, x0, y0, h, lx, par);
}

template <class Policy>
struct PackedTiles {
  template <class T, class I>
  class type final : public TileBuild<Policy, T, I> {
   protected:
    void build(const T* f, I* par, cudaStream_t s) override {
      this->tiles_ = this->tiles_x() * this->tiles_y();
      packed_build_kernel<Policy::kMonotoneZip, Policy::kPlannedZips, Policy::kTileWindow, T, I><<<static_cast<unsigned>(this->tiles_), kTileW, 0, s>>>(f, par, this->g_, this->tiles_x());
      REPIX_CUDA_LAUNCH();
    }
  };
};

// gpu-packed's policy: gpu-compressed's, the border merges grid-pruned too.
struct PackedPolicy : CompressedPolicy {
  static constexpr bool kPruneBorders = true;
  static constexpr bool kMonotoneZip = false;  // the tile's zips: packed_core::merge (true: monotone_zip)
  static constexpr bool kPlannedZips = false;  // phase 2 planned, then zipped (packed_build_kernel's kPlanned)
  static constexpr bool kTileWindow = false;  // their atomics TileWindowAtomics (packed_build_kernel's kWindow)
};

// The steps after gpu-packed, each its predecessor's policy with what it adds (the variant files
// have the measurements): gpu-monotone's, gpu-settle-copy's, gpu-planned-zips', gpu-climbing-merges',
// gpu-paired-loads', gpu-tile-settle's, gpu-opt's.
struct MonotonePolicy : PackedPolicy {
  static constexpr bool kOnePassFlatten = true;
  static constexpr bool kFusedBorderMerges = true;
  static constexpr bool kMonotoneZip = true;
};
struct SettleCopyPolicy : MonotonePolicy {
  static constexpr bool kSettleCopy = true;
};
struct PlannedZipsPolicy : SettleCopyPolicy {
  static constexpr bool kPlannedZips = true;
};
struct ClimbingMergesPolicy : PlannedZipsPolicy {
  static constexpr bool kClimbingMerges = true;
};
struct PairedLoadsPolicy : ClimbingMergesPolicy {
  static constexpr bool kPairedLoads = true;
};
struct TileSettlePolicy : PairedLoadsPolicy {
  static constexpr bool kSettleByTiles = true;
};
struct OptPolicy : TileSettlePolicy {
  static constexpr bool kTileWindow = true;
  static constexpr int kBorderBlock = 128;
};

}  // namespace repix::maxtree::gpu
