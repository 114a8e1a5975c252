// `gpu-opt`: an exact GPU EDT (separable, like seq-exact; same distance formula, so the same bits).
//
// Phase 1, columns (no per-pixel output at all):
//   mask   thread per (column, 32-row segment): one 32-bit word of background bits;
//   scan   thread per column: for every segment, the last background row above it and the first
//          below it (int32, -1 when none).
//   The nearest background row of any pixel is then a few bit operations on its segment's word
//   plus those two values (vertical_nearest): 12 bytes per 32 pixels instead of 4 per pixel.
// Phase 2, rows, split into bands of kBand columns:
//   envelope  thread per (band, row): the lower envelope of the band's parabolas
//             (x - c)^2 + g(c)^2 over the whole row, by the same stack algorithm as seq-exact,
//             kept in global scratch laid out [band][stack slot][row] so that the 32 rows of a
//             warp (one segment word: broadcast loads) touch neighbouring addresses;
//   fill      thread per (band, row): for each pixel of its band, the minimum of its own band's
//             envelope (walked left to right) and of the other bands' envelopes (binary search),
//             visiting bands outward and stopping once (distance to the band)^2 cannot beat the
//             best: on typical inputs only the adjacent band, at worst every band of the row.
// Every kernel writes only its own threads' elements and reads what earlier kernels wrote
// (stream order): no shared memory, no atomics, no intra-kernel communication.
#include <cuda_runtime.h>

#include <limits>

#include "core/gpu.hpp"
#include "core/nvtx.hpp"
#include "iwpp/edt_detail.hpp"
#include "iwpp/edt_gpu_variants.hpp"

namespace repix::edt {
namespace {

constexpr int kSeg = 32;      // rows per mask word
constexpr int kBand = 256;    // columns per band in phase 2
constexpr int kThreads = 256;

using i64 = long long;

int grid_for(i64 n) {
  const i64 b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(b < 65535LL * 8 ? (b < 1 ? 1 : b) : 65535LL * 8);  // grid-stride beyond
}

template <class T>
__global__ void mask_kernel(const T* __restrict__ in, i64 nx, i64 ny, i64 nseg, unsigned* __restrict__ mask) {
  for (i64 t = blockIdx.x * (i64)blockDim.x + threadIdx.x; t < nx * nseg; t += (i64)gridDim.x * blockDim.x) {
    const i64 x = t % nx, s = t / nx, y0 = s * kSeg;
    const int rows = (int)(ny - y0 < kSeg ? ny - y0 : kSeg);
    unsigned m = 0;
    for (int i = 0; i < rows; ++i)
      if (in[(y0 + i) * nx + x] == T(0)) m |= 1u << i;
    mask[t] = m;
  }
}

__global__ void scan_kernel(const unsigned* __restrict__ mask, i64 nx, i64 nseg, int* __restrict__ up,
                            int* __restrict__ down) {
  for (i64 x = blockIdx.x * (i64)blockDim.x + threadIdx.x; x < nx; x += (i64)gridDim.x * blockDim.x) {
    int last = -1;
    for (i64 s = 0; s < nseg; ++s) {
      up[s * nx + x] = last;
      const unsigned m = mask[s * nx + x];
      if (m) last = (int)(s * kSeg + 31 - __clz(m));
    }
    int next = -1;
    for (i64 s = nseg - 1; s >= 0; --s) {
      down[s * nx + x] = next;
      const unsigned m = mask[s * nx + x];
      if (m) next = (int)(s * kSeg + __ffs(m) - 1);
    }
  }
}

struct Columns {
  const unsigned* mask;
  const int* up;
  const int* down;
  i64 nx;
};

// Nearest background row to (x, y) in column x (above wins a tie, as in seq-exact), -1 if none.
__device__ __forceinline__ int vertical_nearest(const Columns& c, i64 x, i64 y) {
  const i64 s = y / kSeg, i = s * c.nx + x;
  const int b = (int)(y - s * kSeg);
  const unsigned m = __ldg(c.mask + i);
  const unsigned le = m & (0xffffffffu >> (31 - b));
  const unsigned ge = m & (0xffffffffu << b);
  const int a = le ? (int)(s * kSeg + 31 - __clz(le)) : __ldg(c.up + i);
  const int d = ge ? (int)(s * kSeg + __ffs(ge) - 1) : __ldg(c.down + i);
  if (a < 0) return d;
  if (d < 0) return a;
  return (d - y < y - a) ? d : a;
}

__device__ __forceinline__ i64 floor_div(i64 a, i64 b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

struct Envelopes {
  int* centre;  // [band][slot][row]
  int* start;
  int* row;     // the centre column's nearest background row
  int* count;   // [band][row]
  i64 ny;
  __device__ __forceinline__ i64 at(i64 band, i64 k, i64 y) const { return (band * kBand + k) * ny + y; }
};

__global__ void envelope_kernel(Columns cols, Envelopes env, i64 nx, i64 ny, i64 nbands) {
  for (i64 t = blockIdx.x * (i64)blockDim.x + threadIdx.x; t < nbands * ny; t += (i64)gridDim.x * blockDim.x) {
    const i64 y = t % ny, band = t / ny, lo = band * kBand, hi = lo + kBand < nx ? lo + kBand : nx;
    int k = -1;
    i64 tc = 0, ts = 0, tg = 0;  // the top of the stack, in registers
    for (i64 u = lo; u < hi; ++u) {
      const int r = vertical_nearest(cols, u, y);
      if (r < 0) continue;
      const i64 gu = (y - r) * (y - r);
      i64 w = 0;
      while (k >= 0) {
        const i64 C = u * u - tc * tc + gu - tg;  // f_u(p) - f_tc(p) = C - 2 p (u - tc)
        if (C < 2 * ts * (u - tc)) {              // u strictly lower from tc's start on: pop
          if (--k >= 0) {
            const i64 j = env.at(band, k, y);
            tc = env.centre[j];
            ts = env.start[j];
            const i64 tr = env.row[j];
            tg = (y - tr) * (y - tr);
          }
          continue;
        }
        w = floor_div(C, 2 * (u - tc)) + 1;
        break;
      }
      if (w >= nx) continue;
      ++k;
      const i64 j = env.at(band, k, y);
      env.centre[j] = (int)u;
      env.start[j] = (int)w;
      env.row[j] = r;
      tc = u;
      ts = w;
      tg = gu;
    }
    env.count[band * ny + y] = k + 1;
  }
}

// Value and site of band b's envelope at pixel p (count > 0): the last slot whose start <= p
// (slot 0 starts at 0).
__device__ __forceinline__ i64 eval_band(const Envelopes& env, i64 b, int count, i64 p, i64 y, i64& c, i64& r) {
  int lo = 0, hi = count - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) >> 1;
    if (env.start[env.at(b, mid, y)] <= p) lo = mid;
    else hi = mid - 1;
  }
  const i64 j = env.at(b, lo, y);
  c = env.centre[j];
  r = env.row[j];
  return (p - c) * (p - c) + (y - r) * (y - r);
}

__global__ void fill_kernel(Envelopes env, i64 nx, i64 ny, i64 nbands, float* __restrict__ dist,
                            long long* __restrict__ sites) {
  constexpr i64 kNone = 0x7fffffffffffffffLL;
  for (i64 t = blockIdx.x * (i64)blockDim.x + threadIdx.x; t < nbands * ny; t += (i64)gridDim.x * blockDim.x) {
    const i64 y = t % ny, band = t / ny, lo = band * kBand, hi = lo + kBand < nx ? lo + kBand : nx;
    const int own = env.count[band * ny + y];
    int j = 0;
    for (i64 p = lo; p < hi; ++p) {
      i64 best = kNone, bc = -1, br = -1;
      if (own > 0) {
        while (j + 1 < own && env.start[env.at(band, j + 1, y)] <= p) ++j;
        const i64 s = env.at(band, j, y);
        bc = env.centre[s];
        br = env.row[s];
        best = (p - bc) * (p - bc) + (y - br) * (y - br);
      }
      for (i64 b = band - 1; b >= 0; --b) {  // bands to the left, nearest first
        const i64 dx = p - (b * kBand + kBand - 1);
        if (dx * dx >= best) break;
        const int cnt = env.count[b * ny + y];
        if (cnt == 0) continue;
        i64 c, r;
        const i64 d = eval_band(env, b, cnt, p, y, c, r);
        if (d < best) best = d, bc = c, br = r;
      }
      for (i64 b = band + 1; b < nbands; ++b) {  // bands to the right
        const i64 dx = b * kBand - p;
        if (dx * dx >= best) break;
        const int cnt = env.count[b * ny + y];
        if (cnt == 0) continue;
        i64 c, r;
        const i64 d = eval_band(env, b, cnt, p, y, c, r);
        if (d < best) best = d, bc = c, br = r;
      }
      const i64 i = y * nx + p;
      dist[i] = best == kNone ? __int_as_float(0x7f800000) : distance_from_sq(best);
      if (sites) sites[i] = best == kNone ? -1 : br * nx + bc;
    }
  }
}

class GpuOptPlan final : public DevicePlan {
 public:
  void setup(DType dtype, const Shape& shape, const Options& opt, cudaStream_t) override {
    ready_ = computed_ = false;
    if (shape.size() <= 0 || shape.ndim != 2) throw Error("edt: gpu-opt needs a non-empty 2D image");
    if (shape.nx > kMaxSide || shape.ny > kMaxSide) throw Error("edt: image has a side over 2^30 pixels");
    dtype_ = dtype;
    shape_ = shape;
    want_sites_ = opt.want_sites;
    const i64 nx = shape.nx, ny = shape.ny;
    nseg_ = (ny + kSeg - 1) / kSeg;
    nbands_ = (nx + kBand - 1) / kBand;
    release();  // the previous shape's workspace first
    const auto seg = static_cast<std::size_t>(nseg_ * nx), slots = static_cast<std::size_t>(nbands_ * kBand * ny);
    mask_.allocate(seg);
    up_.allocate(seg);
    down_.allocate(seg);
    centre_.allocate(slots);
    start_.allocate(slots);
    row_.allocate(slots);
    count_.allocate(static_cast<std::size_t>(nbands_ * ny));
    dist_.allocate(static_cast<std::size_t>(shape.size()));
    if (want_sites_) sites_.allocate(static_cast<std::size_t>(shape.size()));
    ready_ = true;
  }

  void compute(const void* d_input, cudaStream_t stream) override {
    if (!ready_) throw Error("internal: edt plan compute() before setup()");
    computed_ = false;
    const i64 nx = shape_.nx, ny = shape_.ny;
    {
      nvtx::Range r("columns", shape_.size());
      const int g = grid_for(nx * nseg_);
      switch (dtype_) {
        case DType::u8:
          mask_kernel<<<g, kThreads, 0, stream>>>(static_cast<const unsigned char*>(d_input), nx, ny, nseg_, mask_.get());
          break;
        case DType::u16:
          mask_kernel<<<g, kThreads, 0, stream>>>(static_cast<const unsigned short*>(d_input), nx, ny, nseg_, mask_.get());
          break;
        case DType::f32:
          mask_kernel<<<g, kThreads, 0, stream>>>(static_cast<const float*>(d_input), nx, ny, nseg_, mask_.get());
          break;
      }
      REPIX_CUDA_LAUNCH();
      scan_kernel<<<grid_for(nx), kThreads, 0, stream>>>(mask_.get(), nx, nseg_, up_.get(), down_.get());
      REPIX_CUDA_LAUNCH();
    }
    {
      nvtx::Range r("rows", shape_.size());
      const Columns cols{mask_.get(), up_.get(), down_.get(), nx};
      const Envelopes env{centre_.get(), start_.get(), row_.get(), count_.get(), ny};
      envelope_kernel<<<grid_for(nbands_ * ny), kThreads, 0, stream>>>(cols, env, nx, ny, nbands_);
      REPIX_CUDA_LAUNCH();
      fill_kernel<<<grid_for(nbands_ * ny), kThreads, 0, stream>>>(env, nx, ny, nbands_, dist_.get(),
                                                                   want_sites_ ? sites_.get() : nullptr);
      REPIX_CUDA_LAUNCH();
    }
    computed_ = true;
  }

  Result result(cudaStream_t stream) override {
    if (!computed_) throw Error("internal: edt plan result() before compute()");
    Result r;
    r.distance = HostImage(DType::f32, shape_);
    REPIX_CUDA(cudaMemcpyAsync(r.distance.raw(), dist_.get(), dist_.bytes(), cudaMemcpyDeviceToHost, stream));
    if (want_sites_) {
      r.sites.resize(static_cast<std::size_t>(shape_.size()));
      REPIX_CUDA(cudaMemcpyAsync(r.sites.data(), sites_.get(), sites_.bytes(), cudaMemcpyDeviceToHost, stream));
    }
    REPIX_CUDA(cudaStreamSynchronize(stream));
    r.stats.passes = 2;
    return r;
  }

 private:
  void release() {
    mask_.reset(); up_.reset(); down_.reset(); centre_.reset(); start_.reset(); row_.reset();
    count_.reset(); dist_.reset(); sites_.reset();
  }
  DType dtype_ = DType::u8;
  Shape shape_;
  bool want_sites_ = true, ready_ = false, computed_ = false;
  i64 nseg_ = 0, nbands_ = 0;
  DeviceBuffer<unsigned> mask_;
  DeviceBuffer<int> up_, down_, centre_, start_, row_, count_;
  DeviceBuffer<float> dist_;
  DeviceBuffer<long long> sites_;
};

Result run_gpu_opt(const HostImage& input, const Options& opt) {
  nvtx::Range range("edt/gpu-opt");
  check_input(input);
  if (!gpu_available()) throw Error("this variant needs a GPU: " + gpu_unavailable_reason());
  return run_plan_end_to_end(GpuOptPlan(), input, opt);
}

}  // namespace

Result run_plan_end_to_end(DevicePlan&& plan, const HostImage& input, const Options& opt) {
  CudaStream stream;
  DeviceBuffer<unsigned char> d_in;
  {
    nvtx::Range r("init");
    d_in.allocate(input.bytes());
    plan.setup(input.dtype(), input.shape(), opt, stream.get());
  }
  {
    nvtx::Range r("h2d", static_cast<std::int64_t>(input.bytes()));
    REPIX_CUDA(cudaMemcpyAsync(d_in.get(), input.raw(), input.bytes(), cudaMemcpyHostToDevice, stream.get()));
  }
  {
    nvtx::Range r("kernel");
    plan.compute(d_in.get(), stream.get());
  }
  nvtx::Range r("d2h");
  return plan.result(stream.get());
}

Variant gpu_opt_variant() {
  return {"gpu-opt", true, true, "beyond-paper",
          "exact separable EDT: column bit-words + per-segment scan, banded parabola envelopes per row",
          run_gpu_opt, [] { return std::unique_ptr<DevicePlan>(new GpuOptPlan()); }};
}

}  // namespace repix::edt
