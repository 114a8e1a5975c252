// Shared pieces of the GPU reconstruct variants: value keys, the typed plan wrapper (setup /
// compute / result, end-to-end run with NVTX), and the kernels several variants use: the initial
// min(marker, mask), the Karas-style separable raster passes, the FH frontier seeds and the FH
// propagation step of the queue ladder.
//
// Values are compared as unsigned keys: uint8/uint16 as themselves, float32 through the
// order-preserving map of core/float_bits.hpp (so atomicMax works on floats; -0 sorts just below
// +0 and keeps its sign bit, so the result is bit-for-bit one of the input values at each pixel).
// "Storage" S is the narrowest key type of a dtype (uint8, uint16, uint32); the atomic variants
// store uint32 keys whatever the dtype.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "core/float_bits.hpp"
#include "core/gpu.hpp"
#include "core/grid2d.cuh"
#include "core/image.hpp"
#include "core/nvtx.hpp"
#include "core/plan_end_to_end.hpp"
#include "iwpp/queue.cuh"
#include "reconstruct/reconstruct.hpp"

namespace repix::reconstruct::gpu {

// ---- keys ---------------------------------------------------------------------------------------

template <class T> struct KeyStorage;
template <> struct KeyStorage<std::uint8_t> { using type = std::uint8_t; };
template <> struct KeyStorage<std::uint16_t> { using type = std::uint16_t; };
template <> struct KeyStorage<float> { using type = std::uint32_t; };
template <class T> using Key = typename KeyStorage<T>::type;

__device__ __forceinline__ std::uint32_t to_key(std::uint8_t v) { return v; }
__device__ __forceinline__ std::uint32_t to_key(std::uint16_t v) { return v; }
__device__ __forceinline__ std::uint32_t to_key(float v) { return ordered_key(__float_as_uint(v)); }

template <class T> __device__ __forceinline__ T from_key(std::uint32_t k);
template <> __device__ __forceinline__ std::uint8_t from_key<std::uint8_t>(std::uint32_t k) {
  return static_cast<std::uint8_t>(k);
}
template <> __device__ __forceinline__ std::uint16_t from_key<std::uint16_t>(std::uint32_t k) {
  return static_cast<std::uint16_t>(k);
}
template <> __device__ __forceinline__ float from_key<float>(std::uint32_t k) {
  return __uint_as_float(unordered_key(k));
}

// ---- geometry and launch shapes -----------------------------------------------------------------

struct Geom {
  std::int64_t nx = 1, ny = 1;
  int conn = 8;
  std::int64_t n() const { return nx * ny; }
};

constexpr int kBlockX = kGrid2dX, kBlockY = kGrid2dY;  // 2D grid-stride kernels (core/grid2d.cuh)
constexpr int kLineThreads = 128;                      // one thread per row / column (raster passes)

inline dim3 grid2d(const Geom& g) { return grid_2d(g.nx, g.ny); }
inline unsigned line_blocks(std::int64_t lines) {
  return static_cast<unsigned>(std::min<std::int64_t>((lines + kLineThreads - 1) / kLineThreads, 1 << 16));
}

// f(x, y) for every pixel, 2D grid-stride (any image height: grids are capped).
template <class F>
__device__ __forceinline__ void for_each_pixel(const Geom& g, F&& f) {
  for_each_2d(g.nx, g.ny, f);
}

// f(linear index of q) for each neighbour q of (x, y) inside the image (4 or 8 of them).
template <class F>
__device__ __forceinline__ void for_each_neighbour(const Geom& g, std::int64_t x, std::int64_t y, F&& f) {
  const std::int64_t p = y * g.nx + x;
  const bool l = x > 0, r = x + 1 < g.nx, u = y > 0, d = y + 1 < g.ny;
  if (l) f(p - 1);
  if (r) f(p + 1);
  if (u) f(p - g.nx);
  if (d) f(p + g.nx);
  if (g.conn == 8) {
    if (u && l) f(p - g.nx - 1);
    if (u && r) f(p - g.nx + 1);
    if (d && l) f(p + g.nx - 1);
    if (d && r) f(p + g.nx + 1);
  }
}

// ---- kernels shared by several variants ---------------------------------------------------------

// J = min(marker, mask) as keys (the marker may exceed the mask when Options::clip is set).
template <class T, class S>
__global__ void init_kernel(const T* __restrict__ marker, const T* __restrict__ mask, S* __restrict__ J, Geom g) {
  for_each_pixel(g, [&](std::int64_t x, std::int64_t y) {
    const std::int64_t p = y * g.nx + x;
    J[p] = static_cast<S>(min(to_key(marker[p]), to_key(mask[p])));
  });
}

template <class T, class S>
__global__ void finalize_kernel(const S* __restrict__ J, T* __restrict__ out, Geom g) {
  for_each_pixel(g, [&](std::int64_t x, std::int64_t y) {
    const std::int64_t p = y * g.nx + x;
    out[p] = from_key<T>(J[p]);
  });
}

// Karas-style separable raster passes (Algorithm 5, lines 2-15). Row passes: one thread per row
// walks it in order, taking the previous pixel of the row (N^{+,0} / N^{-,0}). Column passes: one
// thread per column walks it, taking the previous row's pixel and, with 8-connectivity, its two
// diagonal neighbours (N^{0,+} / N^{0,-}). Those diagonals belong to columns other threads are
// updating in the same pass: the read may see the old or the new value. Both are safe (values only
// grow and never exceed the reconstruction) and a pass that changed nothing anywhere read only
// final values, so "no change in a whole raster + anti-raster pass" still proves stability. The
// racing accesses are volatile so that each is one load/store the compiler cannot split or cache.
// The walks count i = 1 .. n-1 and map it to the coordinate (forward i, backward n-1-i). The
// first version stepped a signed coordinate by +-1 until it left [0, n)
// (`for (x += step; x >= 0 && x < n; x += step)`); built with nvcc 13.0 for sm_90, its backward
// instantiation left every pixel unchanged on the H100 (a 1x8 case run pass by pass showed it;
// the forward one worked). We did not isolate the cause; this form was checked the same way.
template <class T, class S, bool Forward>
__global__ void __launch_bounds__(kLineThreads)
    row_pass_kernel(S* J, const T* __restrict__ I, Geom g, unsigned* changed) {
  bool any = false;
  for (std::int64_t y = blockIdx.x * std::int64_t(kLineThreads) + threadIdx.x; y < g.ny;
       y += std::int64_t(gridDim.x) * kLineThreads) {
    S* row = J + y * g.nx;
    const T* irow = I + y * g.nx;
    std::uint32_t prev = row[Forward ? 0 : g.nx - 1];
    for (std::int64_t i = 1; i < g.nx; ++i) {
      const std::int64_t x = Forward ? i : g.nx - 1 - i;
      std::uint32_t cur = row[x];
      const std::uint32_t v = min(prev, to_key(irow[x]));
      if (v > cur) {
        row[x] = static_cast<S>(v);
        cur = v;
        any = true;
      }
      prev = cur;
    }
  }
  if (any && changed) atomicOr(changed, 1u);
}

template <class T, class S, bool Forward>
__global__ void __launch_bounds__(kLineThreads)
    col_pass_kernel(S* J, const T* __restrict__ I, Geom g, unsigned* changed) {
  volatile S* vJ = J;
  bool any = false;
  for (std::int64_t x = blockIdx.x * std::int64_t(kLineThreads) + threadIdx.x; x < g.nx;
       x += std::int64_t(gridDim.x) * kLineThreads) {
    std::uint32_t prev = vJ[(Forward ? 0 : g.ny - 1) * g.nx + x];
    for (std::int64_t i = 1; i < g.ny; ++i) {
      const std::int64_t y = Forward ? i : g.ny - 1 - i;
      const std::int64_t q = (Forward ? y - 1 : y + 1) * g.nx + x;  // the previous row, same column
      std::uint32_t n = prev;
      if (g.conn == 8) {
        if (x > 0) n = max(n, static_cast<std::uint32_t>(vJ[q - 1]));
        if (x + 1 < g.nx) n = max(n, static_cast<std::uint32_t>(vJ[q + 1]));
      }
      const std::int64_t p = y * g.nx + x;
      std::uint32_t cur = vJ[p];
      const std::uint32_t v = min(n, to_key(I[p]));
      if (v > cur) {
        vJ[p] = static_cast<S>(v);
        cur = v;
        any = true;
      }
      prev = cur;
    }
  }
  if (any && changed) atomicOr(changed, 1u);
}

// One raster + anti-raster pass: four launches. `changed` (may be null) is or-ed with 1 when any
// pixel changed.
template <class T, class S>
void raster_pass(S* J, const T* I, const Geom& g, unsigned* changed, cudaStream_t s) {
  row_pass_kernel<T, S, true><<<line_blocks(g.ny), kLineThreads, 0, s>>>(J, I, g, changed);
  REPIX_CUDA_LAUNCH();
  col_pass_kernel<T, S, true><<<line_blocks(g.nx), kLineThreads, 0, s>>>(J, I, g, changed);
  REPIX_CUDA_LAUNCH();
  row_pass_kernel<T, S, false><<<line_blocks(g.ny), kLineThreads, 0, s>>>(J, I, g, changed);
  REPIX_CUDA_LAUNCH();
  col_pass_kernel<T, S, false><<<line_blocks(g.nx), kLineThreads, 0, s>>>(J, I, g, changed);
  REPIX_CUDA_LAUNCH();
}

// FH seeds (Algorithm 5, lines 16-18): p is queued when some neighbour q has J(q) < J(p) and
// J(q) < I(q), i.e. p can still raise q. Over the whole neighbourhood, since after parallel
// raster passes the anti-raster half is not enough.
template <class T>
__global__ void seed_kernel(const std::uint32_t* __restrict__ J, const T* __restrict__ I, Geom g,
                            iwpp::QueueView q) {
  for_each_pixel(g, [&](std::int64_t x, std::int64_t y) {
    const std::int64_t p = y * g.nx + x;
    const std::uint32_t jp = J[p];
    bool frontier = false;
    for_each_neighbour(g, x, y, [&](std::int64_t n) {
      const std::uint32_t jq = J[n];
      frontier |= jq < jp && jq < to_key(I[n]);
    });
    if (frontier) iwpp::push_seed(q, static_cast<std::uint32_t>(p));
  });
}

// FH propagation (Algorithm 5, lines 21-26): raise each lower neighbour q (not yet at its mask)
// to min(J(p), I(q)) with atomicMax; queue q when this thread's update raised it. J is read with
// __ldcg (L2) because other blocks update it during the persistent kernel; a stale L1 line could
// make p propagate a value below the one it was queued with.
template <class T>
struct ReconStep {
  static constexpr int kMaxFanout = 8;
  std::uint32_t* J;
  const T* I;
  Geom g;
  template <class Emit>
  __device__ void operator()(std::uint32_t p, Emit& emit) const {
    const std::uint32_t nx = static_cast<std::uint32_t>(g.nx);
    const std::uint32_t y = p / nx, x = p - y * nx;
    const std::uint32_t jp = __ldcg(J + p);
    for_each_neighbour(g, x, y, [&](std::int64_t qi) {
      const std::uint32_t jq = __ldcg(J + qi);
      if (jq >= jp) return;
      const std::uint32_t iq = to_key(__ldg(I + qi));
      if (jq == iq) return;
      const std::uint32_t v = min(jp, iq);  // > jq: jq < jp and jq < iq
      const std::uint32_t old = atomicMax(J + qi, v);
      if (old < v) emit(static_cast<std::uint32_t>(qi));
    });
  }
};

// ---- plans --------------------------------------------------------------------------------------

inline int device_sm_count() {
  int dev = 0, sms = 0;
  REPIX_CUDA(cudaGetDevice(&dev));
  REPIX_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  return sms;
}

// One dtype's implementation of a variant. setup allocates everything compute needs; compute writes
// the result to `out` (n elements of T) and fills `st`.
template <class T>
class TypedPlan {
 public:
  virtual ~TypedPlan() = default;
  virtual void setup(const Geom& g, const Options& opt, cudaStream_t s) = 0;
  virtual void compute(const T* marker, const T* mask, T* out, Stats& st, cudaStream_t s) = 0;
};

// The DevicePlan of a variant whose typed implementation is Impl<T>.
template <template <class> class Impl>
class Plan final : public DevicePlan {
 public:
  void setup(const InputDesc& in, const Options& opt, cudaStream_t s) override {
    const DType dtype = in.dtype;
    const Shape& shape = in.shape;
    ready_ = computed_ = false;
    if (shape.size() <= 0 || shape.nz != 1 || shape.ndim > 2)
      throw Error("reconstruct: a non-empty 2D image is needed, got " + shape.str());
    if (opt.connectivity != 4 && opt.connectivity != 8)
      throw Error("reconstruct: connectivity must be 4 or 8, got " + std::to_string(opt.connectivity));
    if (shape.size() > std::int64_t(0xffffffffll))
      throw Error("reconstruct: " + shape.str() + " has more than 2^32-1 pixels (GPU variants index with 32 bits)");
    // Release the previous workspace before allocating the new one.
    run_ = nullptr;
    out_.reset();
    dtype_ = dtype;
    shape_ = shape;
    g_.nx = shape.nx;
    g_.ny = shape.ny;
    g_.conn = opt.connectivity;
    out_.allocate(static_cast<std::size_t>(shape.size()) * dtype_size(dtype));
    // The dtype's implementation, set up now; compute() calls it through run_.
    dispatch_dtype(dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      auto impl = std::make_shared<Impl<T>>();
      impl->setup(g_, opt, s);
      run_ = [impl](const void* marker, const void* mask, void* out, Stats& st, cudaStream_t st_stream) {
        impl->compute(static_cast<const T*>(marker), static_cast<const T*>(mask), static_cast<T*>(out), st, st_stream);
      };
    });
    ready_ = true;
  }
  void compute(const DeviceInputs& in, cudaStream_t s) override {
    if (!ready_) throw Error("internal: reconstruct plan compute() before setup()");
    if (in.size() != 2) throw Error("internal: reconstruct plans take {marker, mask}");
    const void* marker = in[0];
    const void* mask = in[1];
    computed_ = false;
    stats_ = Stats{};
    run_(marker, mask, out_.get(), stats_, s);
    computed_ = true;
  }
  Result result(cudaStream_t s) override {
    if (!computed_) throw Error("internal: reconstruct plan result() before compute()");
    Result res;
    res.image = HostImage(dtype_, shape_);
    REPIX_CUDA(cudaMemcpyAsync(res.image.raw(), out_.get(), res.image.bytes(), cudaMemcpyDeviceToHost, s));
    REPIX_CUDA(cudaStreamSynchronize(s));
    res.stats = stats_;
    return res;
  }
  DeviceResult device_result() const override {
    if (!computed_) throw Error("internal: reconstruct plan device_result() before compute()");
    return {out_.get(), stats_};
  }
  std::vector<DeviceOutput> device_outputs() const override {
    if (!computed_) throw Error("internal: reconstruct plan device_outputs() before compute()");
    return {image_output(out_.get(), dtype_, shape_)};
  }

 private:
  bool ready_ = false, computed_ = false;
  DType dtype_ = DType::u8;
  Shape shape_;
  Geom g_;
  Stats stats_;
  DeviceBuffer<unsigned char> out_;
  std::function<void(const void* marker, const void* mask, void* out, Stats&, cudaStream_t)> run_;
};

template <template <class> class Impl>
Result run_end_to_end(const std::string& id, const HostImage& marker, const HostImage& mask, const Options& opt) {
  check_inputs(marker, mask, opt);
  require_gpu();
  const std::string name = "reconstruct/" + id;
  nvtx::Range range(name.c_str());
  Plan<Impl> plan;
  return plan_end_to_end(plan, {&marker, &mask}, opt);
}

template <template <class> class Impl>
Variant make_variant(const std::string& id, const std::string& step, const std::string& description) {
  Variant v;
  v.id = id;
  v.gpu = true;
  v.step = step;
  v.description = description;
  v.run = [id](const HostImage& marker, const HostImage& mask, const Options& opt) {
    return run_end_to_end<Impl>(id, marker, mask, opt);
  };
  v.make_plan = [] { return std::unique_ptr<DevicePlan>(new Plan<Impl>()); };
  return v;
}

// Reads one device word after synchronising the stream.
template <class U>
U read_device(const U* d, cudaStream_t s) {
  U h{};
  REPIX_CUDA(cudaMemcpyAsync(&h, d, sizeof h, cudaMemcpyDeviceToHost, s));
  REPIX_CUDA(cudaStreamSynchronize(s));
  return h;
}

// ---- the FH_GPU queue ladder (gpu-queue-atomic / -warp-atomic / -scan / -tq) ---------------------
// init -> Options::raster_scans raster + anti-raster passes -> episodes of (seed, propagate) until
// one completes without overflow (queue.cuh) -> keys back to values. Stats::wavefront_ms is the
// propagation kernels' time (the paper's Table 1 times that phase only).

template <class T, iwpp::QueuePolicy P>
class LadderImpl final : public TypedPlan<T> {
 public:
  void setup(const Geom& g, const Options& opt, cudaStream_t) override {
    if (opt.raster_scans < 0) throw Error("reconstruct: raster_scans must be >= 0");
    g_ = g;
    raster_scans_ = opt.raster_scans;
    J_.allocate(static_cast<std::size_t>(g.n()));
    queue_.setup(g.n(), opt.queue_capacity, iwpp::propagate_blocks<P, ReconStep<T>>(g.n(), opt.queue_blocks_per_sm));
  }
  void compute(const T* marker, const T* mask, T* out, Stats& st, cudaStream_t s) override {
    {
      nvtx::Range r("init");
      init_kernel<T, std::uint32_t><<<grid2d(g_), dim3(kBlockX, kBlockY), 0, s>>>(marker, mask, J_.get(), g_);
      REPIX_CUDA_LAUNCH();
    }
    {
      nvtx::Range r("raster", raster_scans_);
      for (int i = 0; i < raster_scans_; ++i) raster_pass<T, std::uint32_t>(J_.get(), mask, g_, nullptr, s);
    }
    {
      nvtx::Range r("propagate");
      const ReconStep<T> step{J_.get(), mask, g_};
      const Geom g = g_;
      const std::uint32_t* J = J_.get();
      const iwpp::EpisodeStats es = iwpp::run_episodes<P>(
          queue_, step,
          [&](const iwpp::QueueView& q, cudaStream_t st2) {
            seed_kernel<T><<<grid2d(g), dim3(kBlockX, kBlockY), 0, st2>>>(J, mask, g, q);
            REPIX_CUDA_LAUNCH();
          },
          s);
      st.initially_queued = es.initially_queued;
      st.total_queued = es.total_queued;
      st.passes = raster_scans_ + es.rounds;
      st.overflow_reruns = es.overflow_reruns;
      st.wavefront_ms = es.propagate_ms;
    }
    finalize_kernel<T, std::uint32_t><<<grid2d(g_), dim3(kBlockX, kBlockY), 0, s>>>(J_.get(), out, g_);
    REPIX_CUDA_LAUNCH();
  }

 private:
  Geom g_;
  int raster_scans_ = 1;
  DeviceBuffer<std::uint32_t> J_;
  iwpp::QueueBuffers queue_;
};

}  // namespace repix::reconstruct::gpu
