// The engine the GPU max-tree variants share: the device plan (typed by element and index type),
// the parent initialisation, the flatten to the normal form, the download, the phase timings and
// the end-to-end run. A variant file supplies only its build step: a class template
// `Build<T, I>` deriving from Engine<T, I> that overrides build(), registered through
// make_gpu_variant<Build>(...). The per-thread logic lives in gpu_core.hpp (tested on the CPU).
//
// Device memory: three arrays of I per pixel (the tree, and two buffers of the flatten's pointer
// jumping, the second of which ends holding the normal form) and one flag; out of memory is the
// CudaOutOfMemory error of core/gpu.hpp, raised by setup().
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "core/gpu.hpp"
#include "core/nvtx.hpp"
#include "core/plan_end_to_end.hpp"
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

// One plan for one element type T and index type I (the type-erased face is Plan below).
class EngineBase {
 public:
  virtual ~EngineBase() = default;
  virtual void setup(const Geom& g, cudaStream_t s) = 0;
  virtual void compute(const void* image, cudaStream_t s) = 0;
  virtual Result result(cudaStream_t s) = 0;
  virtual Stats stats() const = 0;
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
    start_ = std::make_unique<CudaEvent>();
    built_ = std::make_unique<CudaEvent>();
    merged_ = std::make_unique<CudaEvent>();
    done_ = std::make_unique<CudaEvent>();
    computed_ = false;
  }

  void compute(const void* image, cudaStream_t s) override {
    const T* f = static_cast<const T*>(image);
    const std::int64_t n = g_.n();
    start_->record(s);
    {
      nvtx::Range r("build");
      init_parent_kernel<I><<<blocks_for(n), kThreads, 0, s>>>(par_.get(), n);
      REPIX_CUDA_LAUNCH();
      build(f, par_.get(), s);
    }
    built_->record(s);
    merge(f, par_.get(), s);
    merged_->record(s);
    {
      nvtx::Range r("flatten");
      same_level_kernel<T, I><<<blocks_for(n), kThreads, 0, s>>>(f, par_.get(), a_.get(), n);
      REPIX_CUDA_LAUNCH();
      I* cur = a_.get();
      I* next = b_.get();
      for (;;) {  // pointer jumping until a round changes nothing: log2(longest same-level chain) + 1
        REPIX_CUDA(cudaMemsetAsync(flag_.get(), 0, sizeof(unsigned), s));
        jump_kernel<I><<<blocks_for(n), kThreads, 0, s>>>(cur, next, n, flag_.get());
        REPIX_CUDA_LAUNCH();
        std::swap(cur, next);
        unsigned changed = 0;
        REPIX_CUDA(cudaMemcpyAsync(&changed, flag_.get(), sizeof changed, cudaMemcpyDeviceToHost, s));
        REPIX_CUDA(cudaStreamSynchronize(s));
        if (!changed) break;
      }
      out_ = next;  // the buffer `cur` is not: written by the last pass
      normal_form_kernel<I><<<blocks_for(n), kThreads, 0, s>>>(par_.get(), cur, out_, n);
      REPIX_CUDA_LAUNCH();
    }
    done_->record(s);
    computed_ = true;
  }

  Result result(cudaStream_t s) override {
    if (!computed_) throw Error("internal: maxtree GPU plan result() before compute()");
    Result r;
    r.parent.shape = Shape::d2(g_.nx, g_.ny);
    r.parent.wide = sizeof(I) == 8;
    std::vector<I>& out = r.parent.template data<I>();
    out.resize(static_cast<std::size_t>(g_.n()));
    REPIX_CUDA(cudaMemcpyAsync(out.data(), out_, out.size() * sizeof(I), cudaMemcpyDeviceToHost, s));
    REPIX_CUDA(cudaStreamSynchronize(s));
    r.stats = stats();
    return r;
  }

  Stats stats() const override {
    Stats st;
    if (!computed_) return st;
    st.tiles = tiles_;
    st.build_ms = built_->ms_since(*start_);
    st.merge_ms = merged_->ms_since(*built_);
    st.canonical_ms = done_->ms_since(*merged_);
    return st;
  }

 protected:
  // The variant's tree: on entry par[p] == p for every pixel; on exit, after build() then merge(),
  // the merged tree of every edge of the image (gpu_core.hpp). Both asynchronous on `s`; merge()
  // (the tile-border merges) does nothing unless a variant builds tiles first.
  virtual void build(const T* f, I* par, cudaStream_t s) = 0;
  virtual void merge(const T*, I*, cudaStream_t) {}

  Geom g_;
  std::int64_t tiles_ = 0;  // set by variants that build tiles

 private:
  DeviceBuffer<I> par_, a_, b_;
  DeviceBuffer<unsigned> flag_;
  I* out_ = nullptr;
  std::unique_ptr<CudaEvent> start_, built_, merged_, done_;
  bool computed_ = false;
};

// The device plan of a variant whose build step is Build<T, I> (an Engine<T, I>): picks T from the
// input's dtype and I from its size (int64 from 2^31 pixels, or when Options::wide_index asks).
template <template <class, class> class Build>
class Plan final : public DevicePlan {
 public:
  void setup(const InputDesc& in, const Options& opt, cudaStream_t s) override {
    check_input(in, opt);
    const Geom g{in.shape.nx, in.shape.ny, opt.connectivity};
    const bool wide = opt.wide_index || g.n() >= (std::int64_t(1) << 31);
    if (in.dtype == DType::u8) engine_ = make<std::uint8_t>(wide);
    else engine_ = make<std::uint16_t>(wide);
    engine_->setup(g, s);
  }
  void compute(const DeviceInputs& in, cudaStream_t s) override {
    if (!engine_) throw Error("internal: maxtree GPU plan used before setup()");
    engine_->compute(in.at(0), s);
  }
  Result result(cudaStream_t s) override {
    if (!engine_) throw Error("internal: maxtree GPU plan used before setup()");
    return engine_->result(s);
  }
  Stats stats() const override { return engine_ ? engine_->stats() : Stats{}; }

 private:
  template <class T>
  static std::unique_ptr<EngineBase> make(bool wide) {
    if (wide) return std::make_unique<Build<T, std::int64_t>>();
    return std::make_unique<Build<T, std::int32_t>>();
  }
  std::unique_ptr<EngineBase> engine_;
};

// A registry entry for the variant whose build step is Build: the plan for the kernel scope, and
// the end-to-end run through it (NVTX "maxtree/<id>", then init, h2d, kernel, d2h).
template <template <class, class> class Build>
Variant make_gpu_variant(std::string id, std::string step, std::string description) {
  Variant v;
  v.id = std::move(id);
  v.gpu = true;
  v.step = std::move(step);
  v.description = std::move(description);
  v.make_plan = [] { return std::unique_ptr<DevicePlan>(std::make_unique<Plan<Build>>()); };
  v.parallel = true;
  const std::string name = "maxtree/" + v.id;
  v.run = [name](const HostImage& image, const Options& opt) {
    nvtx::Range range(name.c_str());
    check_input(image, opt);
    require_gpu();
    Plan<Build> plan;
    return plan_end_to_end(plan, image, opt);
  };
  return v;
}

}  // namespace repix::maxtree::gpu
