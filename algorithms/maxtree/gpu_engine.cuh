// The engine the GPU max-tree variants share: the device plan (typed by element and index type),
// the parent initialisation, the flatten to the normal form, the download, the phase timings and
// the end-to-end run. A variant file supplies only its build step: a class template
// `Build<T, I>` deriving from Engine<T, I> that overrides build(), registered through
// make_gpu_variant<Build>(...). The per-thread logic lives in gpu_core.hpp (tested on the CPU).
//
// Device memory: three arrays of I per pixel (the tree, and two buffers of the flatten's pointer
// jumping, the second of which ends holding the normal form; gpu-monotone's flatten leaves it in the
// tree's array, gpu-settle-copy's and gpu-opt's in the first buffer) and one flag; out of memory is the
// CudaOutOfMemory error of core/gpu.hpp, raised by setup(). The area opening (area_filter) reuses
// the two arrays the normal form is not in (area, counts, then its own pointer jumping) and writes
// into the caller's output: no more device memory.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "core/download.hpp"
#include "core/error.hpp"
#include "core/gpu.hpp"
#include "core/nvtx.hpp"
#include "core/pinned_pool.hpp"
#include "core/plan_end_to_end.hpp"
#include "core/reuse_cache.hpp"
#include "maxtree/area_core.hpp"
#include "maxtree/gpu_core.hpp"
#include "maxtree/maxtree.hpp"

namespace repix::maxtree::gpu {

// The image's geometry as the kernels see it.
struct Geom {
  std::int64_t nx = 1, ny = 1;
  int conn = 4;
  __host__ __device__ std::int64_t n() const { return nx * ny; }
};

// Atomics on memory many threads update (global or shared). Loads are atomic too (an atomicOr of
// 0 returns the current value): a plain load beside other threads' CAS would be a data race, in
// shared memory one compute-sanitizer racecheck reports; this way every access to the tree during
// the merges is an atomic.
struct DeviceAtomics {
  __device__ __forceinline__ std::int32_t load(const std::int32_t* p) const {
    return atomicOr(const_cast<std::int32_t*>(p), 0);
  }
  __device__ __forceinline__ std::int64_t load(const std::int64_t* p) const {
    return static_cast<std::int64_t>(atomicOr(reinterpret_cast<unsigned long long*>(const_cast<std::int64_t*>(p)), 0ull));
  }
  __device__ __forceinline__ bool cas(std::int32_t* p, std::int32_t expected, std::int32_t desired) const {
    return atomicCAS(p, expected, desired) == expected;
  }
  __device__ __forceinline__ bool cas(std::int64_t* p, std::int64_t expected, std::int64_t desired) const {
    return atomicCAS(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(expected),
                     static_cast<unsigned long long>(desired)) == static_cast<unsigned long long>(expected);
  }
};

// DeviceAtomics with the loads as relaxed atomic loads (PTX ld.relaxed.gpu): still atomic loads
// (never torn, never a value no store wrote), but a load instruction instead of a read-modify-write
// through the atomic unit, which atomicOr(p, 0) is; the CAS steps validate what they saw as
// before (gpu_core::merge_step). gpu-compressed's and the variants after it.
struct RelaxedLoadAtomics : DeviceAtomics {
  __device__ __forceinline__ std::int32_t load(const std::int32_t* p) const {
    std::int32_t v;
    asm volatile("ld.relaxed.gpu.b32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
  }
  __device__ __forceinline__ std::int64_t load(const std::int64_t* p) const {
    std::int64_t v;
    asm volatile("ld.relaxed.gpu.b64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
  }
  // Relaxed atomic stores (st.relaxed.gpu), for gpu_core::settle's in-place flatten.
  __device__ __forceinline__ void store(std::int32_t* p, std::int32_t v) const {
    asm volatile("st.relaxed.gpu.b32 [%0], %1;" : : "l"(p), "r"(v) : "memory");
  }
  __device__ __forceinline__ void store(std::int64_t* p, std::int64_t v) const {
    asm volatile("st.relaxed.gpu.b64 [%0], %1;" : : "l"(p), "l"(v) : "memory");
  }
};

constexpr int kThreads = 256;  // 1-D grid-stride kernels
inline unsigned blocks_for(std::int64_t n) {
  return static_cast<unsigned>(std::clamp<std::int64_t>((n + kThreads - 1) / kThreads, 1, std::int64_t(1) << 20));
}
#define REPIX_MAXTREE_FOR_EACH_PIXEL(p, n)                                                       \
  for (std::int64_t p = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; p < (n);           \
       p += std::int64_t(gridDim.x) * blockDim.x)

template <class I>
__global__ void init_parent_kernel(I* par, std::int64_t n) {
  REPIX_MAXTREE_FOR_EACH_PIXEL(p, n) par[p] = static_cast<I>(p);
}

// Flatten pass 1 (gpu_core::same_level_parent): reads the finished tree, writes lr.
template <class T, class I>
__global__ void same_level_kernel(const T* __restrict__ f, const I* __restrict__ par, I* __restrict__ lr, std::int64_t n) {
  REPIX_MAXTREE_FOR_EACH_PIXEL(p, n) lr[p] = gpu_core::same_level_parent(f, par, static_cast<I>(p));
}

// gpu-compressed's and gpu-packed's flatten pass 1 (gpu_core::same_level_end), one thread a pixel
// reading the finished tree only: out[p] = the end of p's same-level chain as far as `hops` links
// reach; sets *unfinished when some walk stopped there (the pointer-jumping rounds then finish those
// chains from where they stopped).
template <class T, class I>
__global__ void walk_kernel(const T* __restrict__ f, const I* __restrict__ par, I* __restrict__ out, std::int64_t n, int hops,
                            unsigned* unfinished) {
  bool any = false;
  REPIX_MAXTREE_FOR_EACH_PIXEL(p, n) {
    bool done = false;
    out[p] = gpu_core::same_level_end(f, par, static_cast<I>(p), hops, done);
    any |= !done;
  }
  if (any) atomicOr(unfinished, 1u);
}

// gpu-monotone's flatten: the normal form in place, the pixels [begin, end) at once (gpu_core::settle,
// where the concurrent walks are shown to end where a lone one would), with relaxed atomic loads
// and stores. A walk writes only its own pixel's entry, once, its final value: the entries of a band
// of pixels are final when the band's launch ends, whatever the others still do (the end-to-end
// run downloads each band then).
template <class T, class I>
__global__ void settle_kernel(const T* __restrict__ f, I* par, std::int64_t begin, std::int64_t end) {
  REPIX_MAXTREE_FOR_EACH_PIXEL(k, end - begin) gpu_core::settle(f, par, static_cast<I>(begin + k), RelaxedLoadAtomics{});
}

// The same walks out of place: out[p] = gpu_core::settled_entry (read-only walks of the finished
// tree), for [begin, end). Nothing writes `par` in the launch, so its loads are plain ones through L1
// (LDG.CONSTANT), where settle_kernel's relaxed atomic loads go to L2 every time (59.6 % of the L2's
// peak, 10.8 % of the DRAM's, on the H200 at 6000x4000); the walks lose the shortcuts that the
// settled entries of other pixels give in place.
// Read-only loads (ld.global.nc, as the compiler emits for `const __restrict__` data) that stay where
// the code puts them: gpu_core::settled_entry's paired walk.
struct PinnedReadOnlyLoads {
  __device__ __forceinline__ std::int32_t load(const std::int32_t* p) const {
    std::int32_t v;
    asm volatile("ld.global.nc.b32 %0, [%1];" : "=r"(v) : "l"(p));
    return v;
  }
  __device__ __forceinline__ std::int64_t load(const std::int64_t* p) const {
    std::int64_t v;
    asm volatile("ld.global.nc.b64 %0, [%1];" : "=l"(v) : "l"(p));
    return v;
  }
};

// kPaired: the walks' level and parent loads paired (gpu_core::settled_entry; gpu-opt).
template <bool kPaired, class T, class I>
__global__ void settle_copy_kernel(const T* __restrict__ f, const I* __restrict__ par, I* __restrict__ out, std::int64_t begin,
                                   std::int64_t end) {
  REPIX_MAXTREE_FOR_EACH_PIXEL(k, end - begin) {
    const I p = static_cast<I>(begin + k);
    out[p] = gpu_core::settled_entry<kPaired>(f, par, p, PinnedReadOnlyLoads{});
  }
}

// The same paired walks a tile at a time (gpu-opt): a block of kThreads threads settles one
// kTileW x kTileH tile of the rows [y_begin, y_end), column t % kTileW, every (kThreads / kTileW)-th
// row from t / kTileW, so the walks of a tile, which mostly end at a level root inside it (the build
// left its trees compressed), find the tile's parents and levels in the L1 of the one SM its block
// runs on. In raster order a block's 256 pixels span four tiles of one row, whose walks climb into
// the rows above, loaded by blocks on other SMs: 74 % of the L2's peak at 6000x4000 on the H200.
template <class T, class I>
__global__ void __launch_bounds__(kThreads)
    settle_tiles_kernel(const T* __restrict__ f, const I* __restrict__ par, I* __restrict__ out, Geom g, std::int64_t y_begin,
                        std::int64_t y_end) {
  using gpu_core::kTileH;
  using gpu_core::kTileW;
  static_assert(kThreads % kTileW == 0 && kTileH % (kThreads / kTileW) == 0, "a block's threads cover its tile's rows evenly");
  const std::int64_t tiles_x = (g.nx + kTileW - 1) / kTileW;
  const std::int64_t x = (blockIdx.x % tiles_x) * kTileW + threadIdx.x % kTileW;
  const std::int64_t y0 = y_begin + (blockIdx.x / tiles_x) * kTileH;
  if (x >= g.nx) return;
  for (int ly = threadIdx.x / kTileW; ly < kTileH; ly += kThreads / kTileW) {
    const std::int64_t y = y0 + ly;
    if (y >= y_end) return;
    const I p = static_cast<I>(y * g.nx + x);
    out[p] = gpu_core::settled_entry<true>(f, par, p, PinnedReadOnlyLoads{});
  }
}

// Flatten pass 2, one round (gpu_core::jump): reads `in`, writes `out` (never the same buffer: no
// thread reads what another writes in the round); sets *changed when any pixel moved.
template <class I>
__global__ void jump_kernel(const I* __restrict__ in, I* __restrict__ out, std::int64_t n, unsigned* changed) {
  bool any = false;
  REPIX_MAXTREE_FOR_EACH_PIXEL(p, n) {
    const I j = gpu_core::jump(in, static_cast<I>(p));
    out[p] = j;
    any |= j != in[p];
  }
  if (any) atomicOr(changed, 1u);
}

// Flatten pass 3 (gpu_core::normal_form): reads the tree and the final lr, writes the output.
template <class I>
__global__ void normal_form_kernel(const I* __restrict__ par, const I* __restrict__ lr, I* __restrict__ out, std::int64_t n) {
  REPIX_MAXTREE_FOR_EACH_PIXEL(p, n) out[p] = gpu_core::normal_form(par, lr, static_cast<I>(p));
}

// ---- the area opening on the GPU (area_core.hpp's steps; one thread a pixel) ----------------------

// Step 1's adds: plain atomics (a kernel boundary orders them before step 2).
struct PlainAdds {
  template <class I>
  __device__ __forceinline__ I add(I* p, I v) const {
    if constexpr (sizeof(I) == 8)
      return static_cast<I>(atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v)));
    else
      return atomicAdd(p, v);
  }
};

// Step 3's: each add fenced on both sides, so a child's area added before its count is decremented
// is seen by the thread whose decrement takes the count to zero, which then reads the parent's area
// (area_core::accumulate_from_leaf); loads are relaxed atomic loads (other threads add meanwhile).
struct FencedAdds : PlainAdds {
  template <class I>
  __device__ __forceinline__ I add(I* p, I v) const {
    __threadfence();
    const I old = PlainAdds::add(p, v);
    __threadfence();
    return old;
  }
  __device__ __forceinline__ std::int32_t load(const std::int32_t* p) const { return RelaxedLoadAtomics{}.load(p); }
  __device__ __forceinline__ std::int64_t load(const std::int64_t* p) const { return RelaxedLoadAtomics{}.load(p); }
};

template <class T, class I>
__global__ void own_area_kernel(const T* __restrict__ f, const I* __restrict__ par, I* area, I* pending, std::int64_t n) {
  REPIX_MAXTREE_FOR_EACH_PIXEL(p, n) area_core::own_area(f, par, area, pending, static_cast<I>(p), PlainAdds{});
}

template <class T, class I>
__global__ void mark_leaves_kernel(const T* __restrict__ f, const I* __restrict__ par, I* pending, std::int64_t n) {
  REPIX_MAXTREE_FOR_EACH_PIXEL(p, n) area_core::mark_leaf(f, par, pending, static_cast<I>(p));
}

template <class T, class I>
__global__ void accumulate_kernel(const T* __restrict__ f, const I* __restrict__ par, I* area, I* pending, std::int64_t n) {
  REPIX_MAXTREE_FOR_EACH_PIXEL(p, n) {
    const I q = static_cast<I>(p);
    if (area_core::is_leaf(f, par, pending, q, FencedAdds{})) area_core::accumulate_from_leaf(par, area, pending, q, FencedAdds{});
  }
}

template <class T, class I>
__global__ void filter_link_kernel(const T* __restrict__ f, const I* __restrict__ par, const I* __restrict__ area,
                                   I* __restrict__ link, std::int64_t n, std::int64_t min_area) {
  REPIX_MAXTREE_FOR_EACH_PIXEL(p, n) link[p] = area_core::filter_link(f, par, area, static_cast<I>(p), min_area);
}

template <class T, class I>
__global__ void filter_output_kernel(const T* __restrict__ f, const I* __restrict__ link, T* __restrict__ out, std::int64_t n) {
  REPIX_MAXTREE_FOR_EACH_PIXEL(p, n) out[p] = f[link[p]];
}

// One plan for one element type T and index type I (the type-erased face is Plan below).
class EngineBase {
 public:
  virtual ~EngineBase() = default;
  virtual void setup(const Geom& g, cudaStream_t s) = 0;
  virtual void compute(const void* image, cudaStream_t s) = 0;
  // The parent image of the last compute(), downloaded (a synchronisation of s).
  virtual Result result(cudaStream_t s) = 0;
  // compute() and result() in one, the download overlapped with the flatten where it can be: the
  // end-to-end run's (compute_to_host()).
  virtual Result compute_to_host(const void* image, cudaStream_t s) = 0;
  virtual Stats stats() const = 0;
  // The area opening of the image compute() last saw (the same `image`), into `out` (the image's
  // element type, one per pixel, device memory), asynchronously on s; stats().filter_ms times it.
  virtual void area_filter(const void* image, std::int64_t min_area, void* out, cudaStream_t s) = 0;
  // The parent image of the last compute() on the device (int32, or int64 for wide indices).
  virtual const void* device_parent() const = 0;
};

template <class T, class I>
class Engine : public EngineBase {
 public:
  void setup(const Geom& g, cudaStream_t) override {
    g_ = g;
    const auto n = static_cast<std::size_t>(g.n());
    par_.allocate(n);
    a_.allocate(n);
    b_.allocate(n);
    flag_.allocate(1);
    copies_ = std::make_unique<CudaStream>();
    band_done_ = std::make_unique<CudaEvent>(cudaEventDisableTiming);
    copied_ = std::make_unique<CudaEvent>(cudaEventDisableTiming);
    start_ = std::make_unique<CudaEvent>();
    built_ = std::make_unique<CudaEvent>();
    merged_ = std::make_unique<CudaEvent>();
    done_ = std::make_unique<CudaEvent>();
    filtered_ = std::make_unique<CudaEvent>();
    computed_ = false;
  }

  void compute(const void* image, cudaStream_t s) override {
    const T* f = static_cast<const T*>(image);
    tree(f, s);
    flatten(f, s, nullptr);
  }

  Result result(cudaStream_t s) override {
    if (!computed_) throw Error("internal: maxtree GPU plan result() before compute()");
    Result r = output();
    download(r.parent.template data<I>().data(), out_, static_cast<std::size_t>(g_.n()) * sizeof(I), s);
    r.stats = stats();
    return r;
  }

  // The tree's kernels are queued first; the output is then allocated on the host while they run:
  // a pinned block of the pool (core/pinned_pool.hpp), which the flatten's bands come down into
  // as each is final (flatten()), or where none can be had, pageable memory whose pages are mapped
  // now (prefault) for download()'s staged copy after the flatten.
  Result compute_to_host(const void* image, cudaStream_t s) override {
    const T* f = static_cast<const T*>(image);
    tree(f, s);
    Result r = output();
    I* host = r.parent.template data<I>().data();
    const std::size_t bytes = static_cast<std::size_t>(g_.n()) * sizeof(I);
    const bool pinned = is_pinned(host);
    if (!pinned) prefault(host, bytes);
    try {
      flatten(f, s, pinned ? host : nullptr);
      nvtx::Range r_d2h("d2h", static_cast<std::int64_t>(bytes));
      if (pinned) REPIX_CUDA(cudaStreamSynchronize(s));  // flatten() queued the copies, s waits for them
      else download(host, out_, bytes, s);
    } catch (...) {
      // No copy may still write into the block when it goes back to the pool with r.
      cudaStreamSynchronize(copies_->get());
      cudaStreamSynchronize(s);
      throw;
    }
    r.stats = stats();
    return r;
  }

  // area_core.hpp's steps on the normal form out_: area and child counts (in the two buffers the
  // normal form is not in), leaves marked, areas accumulated from the leaves, then each pixel's link to
  // its nearest kept node, pointer jumping (a host sync a round, as the flatten's) and the levels.
  void area_filter(const void* image, std::int64_t min_area, void* out, cudaStream_t s) override {
    if (!computed_) throw Error("internal: maxtree GPU area_filter() before compute()");
    const T* f = static_cast<const T*>(image);
    const std::int64_t n = g_.n();
    const auto bytes = static_cast<std::size_t>(n) * sizeof(I);
    const auto [area, pending] = spare_arrays();
    nvtx::Range r("area-filter");
    REPIX_CUDA(cudaMemsetAsync(area, 0, bytes, s));
    REPIX_CUDA(cudaMemsetAsync(pending, 0, bytes, s));
    own_area_kernel<T, I><<<blocks_for(n), kThreads, 0, s>>>(f, out_, area, pending, n);
    REPIX_CUDA_LAUNCH();
    mark_leaves_kernel<T, I><<<blocks_for(n), kThreads, 0, s>>>(f, out_, pending, n);
    REPIX_CUDA_LAUNCH();
    accumulate_kernel<T, I><<<blocks_for(n), kThreads, 0, s>>>(f, out_, area, pending, n);
    REPIX_CUDA_LAUNCH();
    I* cur = pending;  // the counts are spent: the links go there, the jumps between it and area's array
    I* next = area;
    filter_link_kernel<T, I><<<blocks_for(n), kThreads, 0, s>>>(f, out_, area, cur, n, min_area);
    REPIX_CUDA_LAUNCH();
    for (bool changed = true; changed;) {
      changed = flagged_pass(s, [&] { jump_kernel<I><<<blocks_for(n), kThreads, 0, s>>>(cur, next, n, flag_.get()); });
      std::swap(cur, next);
    }
    filter_output_kernel<T, I><<<blocks_for(n), kThreads, 0, s>>>(f, cur, static_cast<T*>(out), n);
    REPIX_CUDA_LAUNCH();
    filtered_->record(s);
    area_filtered_ = true;
  }

  const void* device_parent() const override {
    if (!computed_) throw Error("internal: maxtree GPU plan read before compute()");
    return out_;
  }
  Stats stats() const override {
    Stats st;
    if (!computed_) return st;
    st.tiles = tiles_;
    st.build_ms = built_->ms_since(*start_);
    st.merge_ms = merged_->ms_since(*built_);
    st.canonical_ms = done_->ms_since(*merged_);
    if (area_filtered_) st.filter_ms = filtered_->ms_since(*done_);
    return st;
  }

 protected:
  // The variant's tree: on entry par[p] == p for every pixel; on exit, after build() then merge(),
  // the merged tree of every edge of the image (gpu_core.hpp). Both asynchronous on `s`; merge()
  // (the tile-border merges) does nothing unless a variant builds tiles first.
  virtual void build(const T* f, I* par, cudaStream_t s) = 0;
  virtual void merge(const T*, I*, cudaStream_t) {}
  // > 0: the flatten starts with walk_kernel (chains followed up to this many links), for trees
  // whose same-level chains are short (gpu-compressed's tiles); 0: pointer jumping from the
  // first link (the seminar's flatten).
  virtual int walk_hops() const { return 0; }
  // true: the flatten is one pass of settle walks, in place (settle_kernel) or, with settle_copy(),
  // into the second buffer (walk_hops() is then not used).
  virtual bool one_pass_flatten() const { return false; }
  // true (with one_pass_flatten()): that pass reads `par` and writes the second buffer
  // (settle_copy_kernel) instead of settling `par` in place.
  virtual bool settle_copy() const { return false; }
  // true (with settle_copy()): the settle walks load each pixel's level and parent together.
  virtual bool paired_loads() const { return false; }
  // true (with paired_loads()): those walks a tile at a time (settle_tiles_kernel), in bands of
  // whole tile rows.
  virtual bool settle_by_tiles() const { return false; }
  // true: build() writes par[p] for every pixel, so the engine leaves out the identity it would
  // otherwise write first (one pass over the parent image: 68 us at 6000x4000 on the H100).
  virtual bool build_writes_every_parent() const { return false; }

  // n elements of I that build() and merge() may use as they like: the flatten's first buffer,
  // not read before the flatten writes it.
  I* scratch() { return a_.get(); }

  Geom g_;
  std::int64_t tiles_ = 0;  // set by variants that build tiles

 private:
  // The build and the border merges (build(), merge()), queued on s.
  void tree(const T* f, cudaStream_t s) {
    const std::int64_t n = g_.n();
    start_->record(s);
    {
      nvtx::Range r("build");
      if (!build_writes_every_parent()) {
        init_parent_kernel<I><<<blocks_for(n), kThreads, 0, s>>>(par_.get(), n);
        REPIX_CUDA_LAUNCH();
      }
      build(f, par_.get(), s);
    }
    built_->record(s);
    merge(f, par_.get(), s);
    merged_->record(s);
  }

  // The normal form from the merged tree into out_, queued on s. With `host` (pinned memory of
  // n elements) the normal form also comes down into it, s waiting for the copies.
  void flatten(const T* f, cudaStream_t s, I* host) {
    nvtx::Range range("flatten");
    if (one_pass_flatten()) {
      settle_in_bands(f, s, host);
    } else {
      flatten_by_jumps(f, s);
      done_->record(s);
      if (host)
        REPIX_CUDA(cudaMemcpyAsync(host, out_, static_cast<std::size_t>(g_.n()) * sizeof(I), cudaMemcpyDeviceToHost, s));
    }
    computed_ = true;
    area_filtered_ = false;
  }

  // The one-pass flatten: settle_kernel in place (gpu-monotone) or settle_copy_kernel into a_
  // (settle_copy(): gpu-settle-copy, gpu-opt), no host sync. With `host`, in bands of
  // pixels, each band's copy on the copy stream as soon as its launch ends (its entries are final
  // then: settle_kernel), so that only the last band's copy comes after the flatten.
  void settle_in_bands(const T* f, cudaStream_t s, I* host) {
    const std::int64_t n = g_.n();
    out_ = settle_copy() ? a_.get() : par_.get();
    const std::int64_t bands = host ? download_bands(n) : 1;
    // Band k's first pixel; by whole tile rows for settle_tiles_kernel (the last band ends the image).
    const auto band_start = [&](std::int64_t k) {
      if (!settle_by_tiles() || k == bands) return n * k / bands;
      return g_.ny * k / bands / gpu_core::kTileH * gpu_core::kTileH * g_.nx;
    };
    for (std::int64_t b = 0; b < bands; ++b) {
      const std::int64_t begin = band_start(b), end = band_start(b + 1);
      if (end == begin) continue;  // tile rows fewer than bands: nothing in this one
      if (settle_by_tiles()) {
        const std::int64_t y_begin = begin / g_.nx, y_end = end / g_.nx;
        const std::int64_t tiles = (g_.nx + gpu_core::kTileW - 1) / gpu_core::kTileW * ((y_end - y_begin + gpu_core::kTileH - 1) / gpu_core::kTileH);
        settle_tiles_kernel<T, I><<<static_cast<unsigned>(tiles), kThreads, 0, s>>>(f, par_.get(), out_, g_, y_begin, y_end);
      } else if (settle_copy() && paired_loads())
        settle_copy_kernel<true, T, I><<<blocks_for(end - begin), kThreads, 0, s>>>(f, par_.get(), out_, begin, end);
      else if (settle_copy())
        settle_copy_kernel<false, T, I><<<blocks_for(end - begin), kThreads, 0, s>>>(f, par_.get(), out_, begin, end);
      else
        settle_kernel<T, I><<<blocks_for(end - begin), kThreads, 0, s>>>(f, par_.get(), begin, end);
      REPIX_CUDA_LAUNCH();
      if (!host) continue;
      band_done_->record(s);  // a wait takes the event's latest record: one event serves every band
      REPIX_CUDA(cudaStreamWaitEvent(copies_->get(), band_done_->get(), 0));
      REPIX_CUDA(cudaMemcpyAsync(host + begin, out_ + begin, static_cast<std::size_t>(end - begin) * sizeof(I),
                                 cudaMemcpyDeviceToHost, copies_->get()));
    }
    done_->record(s);
    if (host) {
      copied_->record(copies_->get());
      REPIX_CUDA(cudaStreamWaitEvent(s, copied_->get(), 0));
    }
  }

  // The seminar's flatten and gpu-compressed's: into a_ or b_ (out_ says which), passes with a host
  // sync each.
  void flatten_by_jumps(const T* f, cudaStream_t s) {
    const std::int64_t n = g_.n();
    I* cur = a_.get();
    I* next = b_.get();
    // Pass 1: each pixel's same-level parent (then jump rounds until a round changes nothing:
    // log2(longest same-level chain) + 1 rounds, a host sync each), or with walk_hops() > 0 the
    // end of each chain as far as that many links reach (jump rounds only if one did not).
    bool jumps = true;
    if (walk_hops() > 0) {
      jumps = flagged_pass(s, [&] {
        walk_kernel<T, I><<<blocks_for(n), kThreads, 0, s>>>(f, par_.get(), cur, n, walk_hops(), flag_.get());
      });
    } else {
      same_level_kernel<T, I><<<blocks_for(n), kThreads, 0, s>>>(f, par_.get(), cur, n);
      REPIX_CUDA_LAUNCH();
    }
    while (jumps) {
      jumps = flagged_pass(s, [&] { jump_kernel<I><<<blocks_for(n), kThreads, 0, s>>>(cur, next, n, flag_.get()); });
      std::swap(cur, next);
    }
    out_ = next;  // the buffer `cur` is not: written by the last pass
    normal_form_kernel<I><<<blocks_for(n), kThreads, 0, s>>>(par_.get(), cur, out_, n);
    REPIX_CUDA_LAUNCH();
  }

  // The bands of the flatten's banded download: about an eighth of the parent image each, at least
  // kPinnedPoolMinBytes (a copy of a few MB or more runs at the link's speed; the launch and the
  // copy's set-up cost microseconds), so that all but the last band's copy run under the flatten.
  static std::int64_t download_bands(std::int64_t n) {
    const std::int64_t bytes = n * static_cast<std::int64_t>(sizeof(I));
    return std::clamp<std::int64_t>(bytes / static_cast<std::int64_t>(kPinnedPoolMinBytes), 1, 8);
  }

  // An output of this engine's size and index width, its memory from the pinned pool where one of
  // its blocks can be had (else the heap), not initialised.
  Result output() const {
    Result r;
    r.parent.shape = Shape::d2(g_.nx, g_.ny);
    r.parent.wide = sizeof(I) == 8;
    UninitializedVector<I>& v = r.parent.template data<I>();
    v = UninitializedVector<I>(DefaultInitAllocator<I>(&pinned_host_pool()));
    v.resize(static_cast<std::size_t>(g_.n()));
    return r;
  }

  // The two arrays of the three that do not hold the normal form (once compute() has run, the
  // tree is not needed any more): the area filter's scratch.
  std::pair<I*, I*> spare_arrays() const {
    I* const all[3] = {par_.get(), a_.get(), b_.get()};
    std::pair<I*, I*> two{nullptr, nullptr};
    for (I* buffer : all)
      if (buffer != out_) (two.first ? two.second : two.first) = buffer;
    return two;
  }

  // One pass of a kernel that sets flag_ (launch() enqueues it on s): the flag cleared before, read
  // back after (a host sync).
  template <class Launch>
  bool flagged_pass(cudaStream_t s, Launch&& launch) {
    REPIX_CUDA(cudaMemsetAsync(flag_.get(), 0, sizeof(unsigned), s));
    launch();
    REPIX_CUDA_LAUNCH();
    return read_flag(s);
  }
  bool read_flag(cudaStream_t s) {
    unsigned v = 0;
    REPIX_CUDA(cudaMemcpyAsync(&v, flag_.get(), sizeof v, cudaMemcpyDeviceToHost, s));
    REPIX_CUDA(cudaStreamSynchronize(s));
    return v != 0;
  }

  DeviceBuffer<I> par_, a_, b_;
  DeviceBuffer<unsigned> flag_;
  std::unique_ptr<CudaStream> copies_;                // the banded download's (settle_in_bands)
  std::unique_ptr<CudaEvent> band_done_, copied_;     // its hand-overs between s and copies_
  I* out_ = nullptr;  // the array of the three holding the normal form after compute()
  std::unique_ptr<CudaEvent> start_, built_, merged_, done_, filtered_;
  bool computed_ = false;
  bool area_filtered_ = false;  // area_filter() ran after the last compute()
};

// The engine of the build step Build<T, I>: T from the input's dtype, I from its size (int64 from
// 2^31 pixels, or when Options::wide_index asks).
template <template <class, class> class Build>
std::unique_ptr<EngineBase> make_engine(const InputDesc& in, const Options& opt, cudaStream_t s) {
  const Geom g{in.shape.nx, in.shape.ny, opt.connectivity};
  const bool wide = opt.wide_index || g.n() >= (std::int64_t(1) << 31);
  std::unique_ptr<EngineBase> e;
  if (in.dtype == DType::u8) {
    if (wide) e = std::make_unique<Build<std::uint8_t, std::int64_t>>();
    else e = std::make_unique<Build<std::uint8_t, std::int32_t>>();
  } else {
    if (wide) e = std::make_unique<Build<std::uint16_t, std::int64_t>>();
    else e = std::make_unique<Build<std::uint16_t, std::int32_t>>();
  }
  e->setup(g, s);
  return e;
}

// The device plan of a variant whose build step is Build<T, I>: the parent image.
template <template <class, class> class Build>
class Plan final : public DevicePlan {
 public:
  void setup(const InputDesc& in, const Options& opt, cudaStream_t s) override {
    check_input(in, opt);
    engine_ = make_engine<Build>(in, opt, s);
    in_ = in;
    wide_ = opt.wide_index || in.shape.size() >= (std::int64_t(1) << 31);  // make_engine's choice
  }
  void compute(const DeviceInputs& in, cudaStream_t s) override {
    if (!engine_) throw Error("internal: maxtree GPU plan used before setup()");
    engine_->compute(in.at(0), s);
  }
  Result result(cudaStream_t s) override {
    if (!engine_) throw Error("internal: maxtree GPU plan used before setup()");
    return engine_->result(s);
  }
  // compute() and result() in one, the download overlapped with the flatten (run_end_to_end's).
  Result compute_to_host(const DeviceInputs& in, cudaStream_t s) {
    if (!engine_) throw Error("internal: maxtree GPU plan used before setup()");
    return engine_->compute_to_host(in.at(0), s);
  }
  Stats stats() const override { return engine_ ? engine_->stats() : Stats{}; }
  std::vector<DeviceOutput> device_outputs() const override {
    if (!engine_) throw Error("internal: maxtree GPU plan used before setup()");
    return {wide_ ? image_output(engine_->device_parent(), "<i8", sizeof(std::int64_t), in_.shape)
                  : image_output(engine_->device_parent(), "<i4", sizeof(std::int32_t), in_.shape)};
  }

 private:
  std::unique_ptr<EngineBase> engine_;
  InputDesc in_;
  bool wide_ = false;
};

// The area opening's device plan on the same engine: the tree, then the engine's area filter into
// an output image kept on the device until result() downloads it.
template <template <class, class> class Build>
class AreaPlan final : public AreaDevicePlan {
 public:
  void setup(const InputDesc& in, const Options& opt, cudaStream_t s) override {
    check_area_input(in, opt);
    engine_ = make_engine<Build>(in, opt, s);
    out_.allocate(static_cast<std::size_t>(in.shape.size()) * dtype_size(in.dtype));
    in_ = in;
    area_ = opt.area;
  }
  void compute(const DeviceInputs& in, cudaStream_t s) override {
    if (!engine_) throw Error("internal: maxtree GPU area plan used before setup()");
    engine_->compute(in.at(0), s);
    engine_->area_filter(in.at(0), area_, out_.get(), s);
  }
  AreaResult result(cudaStream_t s) override {
    if (!engine_) throw Error("internal: maxtree GPU area plan used before setup()");
    // The output in a pinned block of the pool where it is large enough (pinned_pool.hpp), so the
    // download is one DMA into memory already mapped, as the tree's parent image.
    AreaResult r{HostImage(in_.dtype, in_.shape, pinned_host_pool()), {}};
    download(r.image.raw(), out_.get(), r.image.bytes(), s);  // synchronises s: the events are done
    r.stats = engine_->stats();
    return r;
  }
  Stats stats() const override { return engine_ ? engine_->stats() : Stats{}; }
  std::vector<DeviceOutput> device_outputs() const override {
    if (!engine_) throw Error("internal: maxtree GPU area plan used before setup()");
    return {image_output(out_.get(), in_.dtype, in_.shape)};
  }

 private:
  std::unique_ptr<EngineBase> engine_;
  DeviceBuffer<unsigned char> out_;
  InputDesc in_;
  std::int64_t area_ = 1;
};

// What an end-to-end run keeps for the next call with the same input type, shape and options
// (core/reuse_cache.hpp): the set-up plan (its device images and flag), the input buffer, the
// stream. cudaMalloc of those ~300 MB at 6000x4000 costs milliseconds a call, the kernels' own time.
template <class PlanT>
struct EndToEndWorkspace {
  using Key = std::tuple<DType, std::int64_t, std::int64_t, int, bool, std::int64_t>;
  EndToEndBuffers buffers;
  PlanT plan;
};

// An end-to-end run through PlanT (NVTX `name`, then core/plan_end_to_end.hpp's phases: init for
// the first call of a key only, h2d, kernel with the download inside it): the workspace of the last
// call with the same dtype, shape, connectivity, index width and area threshold is reused.
//
// One copy, before the build: uploading in bands of tile rows, each band's build under the next
// band's copy, measured slower (gpu-opt, now gpu-monotone, 6000x4000 8-bit, an H200, one process: this one
// pageable copy 4.44 ms end to end; eight pageable copies on a second stream 5.49; eight bands
// staged through a pinned block by the host's threads 5.60; one such staged copy 5.04; one staged
// by a single memcpy 8.20). The driver's one pageable copy beats any staging of ours here, and a
// band's copy call holds the host while the GPU would need the next launch.
template <class PlanT>
auto run_end_to_end(const char* name, const HostImage& image, const Options& opt) {
  nvtx::Range range(name);
  using Workspace = EndToEndWorkspace<PlanT>;
  const typename Workspace::Key key{image.dtype(), image.shape().nx, image.shape().ny, opt.connectivity,
                                    opt.wide_index, opt.area};
  auto& cache = reuse_cache<typename Workspace::Key, Workspace>();
  std::unique_ptr<Workspace> ws = cache.take_or_make(key, [] { return std::make_unique<Workspace>(); });
  auto result = repix::run_end_to_end(ws->plan, ws->buffers, {&image}, opt);
  cache.put(key, std::move(ws));
  return result;
}

// The registry entries of the variant whose build step is Build: the tree (its plan for the kernel
// scope, and the end-to-end run through it) and its area opening, tree and filter on the GPU
// (make_area).
template <template <class, class> class Build>
Variant make_gpu_variant(std::string id, std::string step, std::string description) {
  Variant v;
  v.id = std::move(id);
  v.gpu = true;
  v.step = std::move(step);
  v.description = std::move(description);
  v.make_plan = [] { return std::unique_ptr<DevicePlan>(std::make_unique<Plan<Build>>()); };
  v.parallel = true;
  v.run = [name = "maxtree/" + v.id](const HostImage& image, const Options& opt) {
    check_input(image, opt);
    require_gpu();
    Options tree = opt;
    tree.area = 1;  // not the tree's business: one workspace whatever --area says
    return run_end_to_end<Plan<Build>>(name.c_str(), image, tree);
  };
  v.make_area = [id = v.id, step = v.step] {
    AreaVariant a;
    a.id = id;
    a.gpu = true;
    a.step = step;
    a.description = "the " + id + " tree, then the area attribute and the filter on the GPU";
    a.make_plan = [] { return std::unique_ptr<AreaDevicePlan>(std::make_unique<AreaPlan<Build>>()); };
    a.run = [name = "area-opening/" + id](const HostImage& image, const Options& opt) {
      check_area_input(image, opt);
      require_gpu();
      return run_end_to_end<AreaPlan<Build>>(name.c_str(), image, opt);
    };
    return a;
  };
  return v;
}

}  // namespace repix::maxtree::gpu
