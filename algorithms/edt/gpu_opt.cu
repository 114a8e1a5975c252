// The exact separable GPU EDTs (same distance formula as seq-exact, so the same bits):
// `gpu-exact-rowfill`, `gpu-exact-envelope` and `gpu-opt`, in ablation order.
//
// Phase 1, columns (no per-pixel output at all):
//   mask   thread per (column, 32-row segment): one 32-bit word of background bits;
//   scan   thread per column: for every segment, the last background row above it and the first
//          below it (int32, -1 when none).
//   The nearest background row of any pixel is then a few bit operations on its segment's word
//   plus those two values (vertical_nearest): 12 bytes per 32 pixels instead of 4 per pixel.
// Phase 2, rows. The envelope path (gpu-exact-rowfill, gpu-exact-envelope), rows split into bands
// of kBand columns:
//   envelope  thread per (band, row): the lower envelope of the band's parabolas
//             (x - c)^2 + g(c)^2 over the whole row, by the same stack algorithm as seq-exact,
//             kept in global scratch laid out [band][stack slot][row] so that the 32 rows of a
//             warp (one segment word: broadcast loads) touch neighbouring addresses;
//   fill      thread per pixel (x fastest: coalesced stores): the minimum of its band's envelope
//             and of the other bands' envelopes (binary searches), visiting bands outward and
//             stopping once (distance to the band)^2 cannot beat the best: on typical inputs only
//             the adjacent band, at worst every band of the row (gpu-exact-envelope).
//             gpu-exact-rowfill fills with one thread per (band, row) instead, walking its own
//             envelope without searching, stores 32 rows apart.
// gpu-opt's phase 2 (see window_pixel in gpu_opt_core.hpp): block per 1024-pixel chunk of a
//   row, the chunk's vertical offsets plus kWindow columns each side in shared memory, thread per
//   pixel searching outward until k^2 >= best: exact when the best is within (kWindow + 1)^2,
//   which is almost every pixel of nuclei-like or moderately sparse masks, for O(distance)
//   shared-memory reads and no scratch traffic. Rows with an unresolved pixel are flagged,
//   compacted into a list (CUB DeviceSelect) and redone by the envelope path on that list only
//   (the envelope and fill kernels take an optional row list; the list's length stays on the
//   device: fixed grids, grid-stride loops, no host sync).
// Every kernel writes only its own threads' elements and reads what earlier kernels wrote
// (stream order); the per-thread work is in gpu_opt_core.hpp, which the CPU tests run thread
// by thread.
#include <cuda_runtime.h>

#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <utility>

#include "core/gpu.hpp"
#include "core/nvtx.hpp"
#include "edt/detail.hpp"
#include "edt/gpu_opt_core.hpp"
#include "edt/variants.hpp"

namespace repix::edt {
namespace {

using namespace gpu_opt;
constexpr int kThreads = 256;

int grid_for(i64 n) {
  const i64 b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(b < 65535LL * 8 ? (b < 1 ? 1 : b) : 65535LL * 8);  // grid-stride beyond
}

// Grid-stride loops over each kernel's threads; the per-thread work is in gpu_opt_core.hpp.
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

// The rows phase 2 works on: rows[0 .. *nrows) when `rows` is set (gpu-opt's fallback list,
// whose length only the device knows), else every row.
struct RowList {
  const int* rows;
  const int* nrows;
  i64 ny;
  __device__ i64 size() const { return rows ? *nrows : ny; }
  __device__ i64 operator[](i64 i) const { return rows ? rows[i] : i; }
};

// Threads are (band, row) with the row fastest: a warp is 32 consecutive rows of one band, which
// read the same mask words (broadcast) and neighbouring stack slots.
__global__ void envelope_kernel(Columns cols, Envelopes env, i64 nx, i64 nbands, RowList rows) {
  const i64 n = rows.size();
  for (i64 t = blockIdx.x * (i64)blockDim.x + threadIdx.x; t < nbands * n; t += (i64)gridDim.x * blockDim.x)
    band_envelope(cols, env, nx, t / n, rows[t % n]);
}

__global__ void band_fill_kernel(Envelopes env, i64 nx, i64 nbands, RowList rows, float* __restrict__ dist,
                                 long long* __restrict__ sites) {
  const i64 n = rows.size();
  for (i64 t = blockIdx.x * (i64)blockDim.x + threadIdx.x; t < nbands * n; t += (i64)gridDim.x * blockDim.x)
    band_fill(env, nx, nbands, t / n, rows[t % n], dist, sites);
}

__global__ void pixel_fill_kernel(Envelopes env, i64 nx, i64 nbands, RowList rows, float* __restrict__ dist,
                                  long long* __restrict__ sites) {
  const i64 n = rows.size();
  for (i64 t = blockIdx.x * (i64)blockDim.x + threadIdx.x; t < nx * n; t += (i64)gridDim.x * blockDim.x)
    pixel_fill(env, nx, nbands, t % nx, rows[t / nx], dist, sites);
}

// gpu-opt: block per (row, chunk); see window_pixel. A row with an unresolved pixel gets its flag
// set (every writer stores 1: no atomics needed).
__global__ void __launch_bounds__(kThreads) window_fill_kernel(Columns cols, i64 nx, i64 ny, float* __restrict__ dist,
                                                               long long* __restrict__ sites, int* __restrict__ unresolved_row) {
  __shared__ int off[kChunk + 2 * kWindow];
  const i64 nchunks = (nx + kChunk - 1) / kChunk;
  for (i64 task = blockIdx.x; task < nchunks * ny; task += gridDim.x) {
    const i64 y = task / nchunks, x0 = (task % nchunks) * kChunk;
    __syncthreads();  // the previous task's reads of `off` are done
    for (int j = threadIdx.x; j < kChunk + 2 * kWindow; j += kThreads) off[j] = window_entry(cols, nx, y, x0, j);
    __syncthreads();
    bool missed = false;
    for (int j = threadIdx.x; j < kChunk && x0 + j < nx; j += kThreads)
      missed |= !window_pixel(off + kWindow + j, nx, x0 + j, y, dist, sites);
    if (__syncthreads_or(missed) && threadIdx.x == 0) unresolved_row[y] = 1;
  }
}

class SeparablePlan final : public DevicePlan {
 public:
  explicit SeparablePlan(SeparableFill fill) : fill_(fill) {}
  void setup(const InputDesc& in, const Options& opt, cudaStream_t stream) override {
    const DType dtype = in.dtype;
    const Shape& shape = in.shape;
    ready_ = computed_ = false;
    if (shape.size() <= 0 || shape.ndim != 2) throw Error("edt: this variant needs a non-empty 2D image");
    if (shape.nx > kMaxSide || shape.ny > kMaxSide) throw Error("edt: image has a side over 2^30 pixels");
    dtype_ = dtype;
    shape_ = shape;
    want_sites_ = opt.want_sites;
    const i64 nx = shape.nx, ny = shape.ny;
    nseg_ = (ny + kSeg - 1) / kSeg;
    nbands_ = (nx + kBand - 1) / kBand;
    release();  // the previous shape's workspace first
    int dev = 0, sms = 0;
    REPIX_CUDA(cudaGetDevice(&dev));
    REPIX_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    list_grid_ = 8 * sms;
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
    if (fill_ == SeparableFill::window) {
      flags_.allocate(static_cast<std::size_t>(ny));
      list_.allocate(static_cast<std::size_t>(ny) + 1);  // the rows, then their count
      std::size_t temp = 0;
      REPIX_CUDA(cub::DeviceSelect::Flagged(nullptr, temp, thrust::counting_iterator<int>(0), flags_.get(), list_.get(),
                                            list_.get() + ny, static_cast<int>(ny), stream));
      temp_.allocate(std::max<std::size_t>(temp, 1));
    }
    ready_ = true;
  }

  void compute(const DeviceInputs& in, cudaStream_t stream) override {
    if (!ready_) throw Error("internal: edt plan compute() before setup()");
    const void* d_input = in.at(0);
    computed_ = false;
    const i64 nx = shape_.nx, ny = shape_.ny;
    {
      nvtx::Range r("columns", shape_.size());
      const int g = grid_for(nx * nseg_);
      dispatch_dtype(dtype_, [&](auto tag) {
        using T = typename decltype(tag)::type;
        mask_kernel<<<g, kThreads, 0, stream>>>(static_cast<const T*>(d_input), nx, ny, nseg_, mask_.get());
      });
      REPIX_CUDA_LAUNCH();
      scan_kernel<<<grid_for(nx), kThreads, 0, stream>>>(mask_.get(), nx, nseg_, up_.get(), down_.get());
      REPIX_CUDA_LAUNCH();
    }
    const Columns cols{mask_.get(), up_.get(), down_.get(), nx};
    long long* sites = want_sites_ ? sites_.get() : nullptr;
    RowList rows{nullptr, nullptr, ny};
    int grid_rows = grid_for(nbands_ * ny), grid_pixels = grid_for(nx * ny);
    if (fill_ == SeparableFill::window) {
      nvtx::Range r("window", shape_.size());
      REPIX_CUDA(cudaMemsetAsync(flags_.get(), 0, flags_.bytes(), stream));
      const i64 tasks = ((nx + kChunk - 1) / kChunk) * ny;
      window_fill_kernel<<<static_cast<int>(std::min<i64>(tasks, 1 << 20)), kThreads, 0, stream>>>(cols, nx, ny, dist_.get(),
                                                                                                   sites, flags_.get());
      REPIX_CUDA_LAUNCH();
      std::size_t temp = temp_.bytes();
      REPIX_CUDA(cub::DeviceSelect::Flagged(temp_.get(), temp, thrust::counting_iterator<int>(0), flags_.get(),
                                            list_.get(), list_.get() + ny, static_cast<int>(ny), stream));
      rows = RowList{list_.get(), list_.get() + ny, ny};
      grid_rows = grid_pixels = list_grid_;
    }
    {
      nvtx::Range r(fill_ == SeparableFill::window ? "fallback rows" : "rows", shape_.size());
      const Envelopes env{centre_.get(), start_.get(), row_.get(), count_.get(), ny};
      envelope_kernel<<<grid_rows, kThreads, 0, stream>>>(cols, env, nx, nbands_, rows);
      REPIX_CUDA_LAUNCH();
      if (fill_ == SeparableFill::band)
        band_fill_kernel<<<grid_rows, kThreads, 0, stream>>>(env, nx, nbands_, rows, dist_.get(), sites);
      else
        pixel_fill_kernel<<<grid_pixels, kThreads, 0, stream>>>(env, nx, nbands_, rows, dist_.get(), sites);
      REPIX_CUDA_LAUNCH();
    }
    computed_ = true;
  }

  Result result(cudaStream_t stream) override {
    if (!computed_) throw Error("internal: edt plan result() before compute()");
    // gpu-opt: the fallback row list's length, copied before download_result's stream sync.
    int fallback_rows = 0;
    if (fill_ == SeparableFill::window)
      REPIX_CUDA(cudaMemcpyAsync(&fallback_rows, list_.get() + shape_.ny, sizeof(int), cudaMemcpyDeviceToHost, stream));
    Result r = download_result(shape_, dist_.get(), want_sites_ ? sites_.get() : nullptr, stream);
    r.stats.passes = 2;
    r.stats.fallback_rows = fallback_rows;
    return r;
  }

 private:
  void release() {
    mask_.reset(); up_.reset(); down_.reset(); centre_.reset(); start_.reset(); row_.reset();
    count_.reset(); dist_.reset(); sites_.reset(); flags_.reset(); list_.reset(); temp_.reset();
  }
  SeparableFill fill_;
  DType dtype_ = DType::u8;
  Shape shape_;
  bool want_sites_ = true, ready_ = false, computed_ = false;
  i64 nseg_ = 0, nbands_ = 0;
  int list_grid_ = 0;
  DeviceBuffer<unsigned> mask_;
  DeviceBuffer<int> up_, down_, centre_, start_, row_, count_, flags_, list_;
  DeviceBuffer<unsigned char> temp_;
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
    plan.setup({input.dtype(), input.shape()}, opt, stream.get());
  }
  {
    nvtx::Range r("h2d", static_cast<std::int64_t>(input.bytes()));
    REPIX_CUDA(cudaMemcpyAsync(d_in.get(), input.raw(), input.bytes(), cudaMemcpyHostToDevice, stream.get()));
  }
  {
    nvtx::Range r("kernel");
    plan.compute({d_in.get()}, stream.get());
  }
  nvtx::Range r("d2h");
  return plan.result(stream.get());
}

Result run_gpu_variant(const char* nvtx_name, DevicePlan&& plan, const HostImage& input, const Options& opt) {
  nvtx::Range range(nvtx_name);
  check_input(input);
  if (!gpu_available()) throw Error("this variant needs a GPU: " + gpu_unavailable_reason());
  return run_plan_end_to_end(std::move(plan), input, opt);
}

Variant separable_variant(const char* id, const char* step, const char* description, SeparableFill fill) {
  const std::string nvtx_name = std::string("edt/") + id;
  return {{id, true, step, description,
           [=](const HostImage& in, const Options& o) { return run_gpu_variant(nvtx_name.c_str(), SeparablePlan(fill), in, o); },
           [=] { return std::unique_ptr<DevicePlan>(new SeparablePlan(fill)); }},
          /*exact=*/true};
}

Variant gpu_opt_variant() {
  return separable_variant("gpu-opt", "beyond-paper",
                           "exact EDT: column bit-words + segment scan, then a windowed row search in shared memory "
                           "(+-64 columns, exact when the site is that close); rows it cannot settle are redone by "
                           "the envelope path",
                           SeparableFill::window);
}

}  // namespace repix::edt
