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
//   fill      thread per pixel (x fastest: coalesced stores): the minimum of its band's envelope
//             and of the other bands' envelopes (binary searches), visiting bands outward and
//             stopping once (distance to the band)^2 cannot beat the best: on typical inputs only
//             the adjacent band, at worst every band of the row.
//             `gpu-exact-rowfill` (the ablation) fills with one thread per (band, row) instead,
//             walking its own envelope without searching, stores 32 rows apart.
// Every kernel writes only its own threads' elements and reads what earlier kernels wrote
// (stream order): no shared memory, no atomics, no intra-kernel communication. The per-thread
// work is in edt_gpu_opt_core.hpp, which the CPU tests run thread by thread.
#include <cuda_runtime.h>

#include <utility>

#include "core/gpu.hpp"
#include "core/nvtx.hpp"
#include "iwpp/edt_detail.hpp"
#include "iwpp/edt_gpu_opt_core.hpp"
#include "iwpp/edt_gpu_variants.hpp"

namespace repix::edt {
namespace {

using namespace gpu_opt;
constexpr int kThreads = 256;

int grid_for(i64 n) {
  const i64 b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(b < 65535LL * 8 ? (b < 1 ? 1 : b) : 65535LL * 8);  // grid-stride beyond
}

// Grid-stride loops over each kernel's threads; the per-thread work is in edt_gpu_opt_core.hpp.
template <class T>
__global__ void mask_kernel(const T* __restrict__ in, i64 nx, i64 ny, i64 nseg, unsigned* __restrict__ mask) {
  for (i64 t = blockIdx.x * (i64)blockDim.x + threadIdx.x; t < nx * nseg; t += (i64)gridDim.x * blockDim.x)
    mask[t] = mask_word(in, nx, ny, t % nx, t / nx);
}

__global__ void scan_kernel(const unsigned* __restrict__ mask, i64 nx, i64 nseg, int* __restrict__ up,
                            int* __restrict__ down) {
  for (i64 x = blockIdx.x * (i64)blockDim.x + threadIdx.x; x < nx; x += (i64)gridDim.x * blockDim.x)
    scan_column(mask, nx, nseg, x, up, down);
}

// Threads are (band, row) with the row fastest: a warp is 32 consecutive rows of one band, which
// read the same mask words (broadcast) and neighbouring stack slots.
__global__ void envelope_kernel(Columns cols, Envelopes env, i64 nx, i64 ny, i64 nbands) {
  for (i64 t = blockIdx.x * (i64)blockDim.x + threadIdx.x; t < nbands * ny; t += (i64)gridDim.x * blockDim.x)
    band_envelope(cols, env, nx, t / ny, t % ny);
}

__global__ void band_fill_kernel(Envelopes env, i64 nx, i64 ny, i64 nbands, float* __restrict__ dist,
                                 long long* __restrict__ sites) {
  for (i64 t = blockIdx.x * (i64)blockDim.x + threadIdx.x; t < nbands * ny; t += (i64)gridDim.x * blockDim.x)
    band_fill(env, nx, nbands, t / ny, t % ny, dist, sites);
}

__global__ void pixel_fill_kernel(Envelopes env, i64 nx, i64 ny, i64 nbands, float* __restrict__ dist,
                                  long long* __restrict__ sites) {
  for (i64 t = blockIdx.x * (i64)blockDim.x + threadIdx.x; t < nx * ny; t += (i64)gridDim.x * blockDim.x)
    pixel_fill(env, nx, nbands, t % nx, t / nx, dist, sites);
}

class GpuOptPlan final : public DevicePlan {
 public:
  // pixel_fill: gpu-opt (thread per pixel in the fill); else gpu-exact-rowfill (thread per band
  // and row). Everything else is shared.
  explicit GpuOptPlan(bool pixel_fill) : pixel_fill_(pixel_fill) {}
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
      long long* sites = want_sites_ ? sites_.get() : nullptr;
      if (pixel_fill_)
        pixel_fill_kernel<<<grid_for(nx * ny), kThreads, 0, stream>>>(env, nx, ny, nbands_, dist_.get(), sites);
      else
        band_fill_kernel<<<grid_for(nbands_ * ny), kThreads, 0, stream>>>(env, nx, ny, nbands_, dist_.get(), sites);
      REPIX_CUDA_LAUNCH();
    }
    computed_ = true;
  }

  Result result(cudaStream_t stream) override {
    if (!computed_) throw Error("internal: edt plan result() before compute()");
    Result r = download_result(shape_, dist_.get(), want_sites_ ? sites_.get() : nullptr, stream);
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
  bool pixel_fill_ = true, want_sites_ = true, ready_ = false, computed_ = false;
  i64 nseg_ = 0, nbands_ = 0;
  DeviceBuffer<unsigned> mask_;
  DeviceBuffer<int> up_, down_, centre_, start_, row_, count_;
  DeviceBuffer<float> dist_;
  DeviceBuffer<long long> sites_;
};

}  // namespace

Result download_result(const Shape& shape, const float* d_distance, const void* d_linear_sites, cudaStream_t stream) {
  static_assert(sizeof(long long) == sizeof(std::int64_t), "sites are 64-bit on host and device");
  Result r;
  r.distance = HostImage(DType::f32, shape);
  REPIX_CUDA(cudaMemcpyAsync(r.distance.raw(), d_distance, r.distance.bytes(), cudaMemcpyDeviceToHost, stream));
  if (d_linear_sites) {
    r.sites.resize(static_cast<std::size_t>(shape.size()));
    REPIX_CUDA(cudaMemcpyAsync(r.sites.data(), d_linear_sites, r.sites.size() * sizeof(std::int64_t),
                               cudaMemcpyDeviceToHost, stream));
  }
  REPIX_CUDA(cudaStreamSynchronize(stream));
  return r;
}

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

std::unique_ptr<DevicePlan> make_separable_plan(bool pixel_fill) {
  return std::unique_ptr<DevicePlan>(new GpuOptPlan(pixel_fill));
}

Result run_gpu_variant(const char* nvtx_name, DevicePlan&& plan, const HostImage& input, const Options& opt) {
  nvtx::Range range(nvtx_name);
  check_input(input);
  if (!gpu_available()) throw Error("this variant needs a GPU: " + gpu_unavailable_reason());
  return run_plan_end_to_end(std::move(plan), input, opt);
}

Result run_separable(const HostImage& input, const Options& opt, bool pixel_fill, const char* nvtx_name) {
  return run_gpu_variant(nvtx_name, GpuOptPlan(pixel_fill), input, opt);
}

Variant gpu_opt_variant() {
  return {"gpu-opt", true, true, "beyond-paper",
          "exact separable EDT: column bit-words + segment scan, banded parabola envelopes, thread-per-pixel fill",
          [](const HostImage& in, const Options& o) { return run_separable(in, o, true, "edt/gpu-opt"); },
          [] { return make_separable_plan(true); }};
}

}  // namespace repix::edt
