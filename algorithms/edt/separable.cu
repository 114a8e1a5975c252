// The separable EDT engine (separable.cuh): the column phase, the shared envelope path, the
// workspace and plan of gpu-exact-rowfill, gpu-exact-envelope and gpu-opt, and the helpers every
// GPU edt variant runs its plan with.
#include <cuda_runtime.h>

#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <utility>

#include "core/gpu.hpp"
#include "core/nvtx.hpp"
#include "core/plan_end_to_end.hpp"
#include "edt/detail.hpp"
#include "edt/separable.cuh"
#include "edt/variants.hpp"

namespace repix::edt {
namespace separable {

using namespace gpu_opt;

int grid_for(i64 n) {
  const i64 b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(b < 65535LL * 8 ? (b < 1 ? 1 : b) : 65535LL * 8);  // grid-stride beyond
}

namespace {

// Grid-stride loops over each kernel's threads; the per-thread work is in gpu_opt_core.hpp.
template <class T>
__global__ void mask_kernel(const T* __restrict__ in, i64 nx, i64 ny, i64 nseg, unsigned* __restrict__ mask) {
  for (i64 t = blockIdx.x * (i64)blockDim.x + threadIdx.x; t < nx * nseg; t += (i64)gridDim.x * blockDim.x)
    mask[t] = mask_word(in, nx, ny, t % nx, t / nx);
}

// bounds: Options::column_bounds on the device (null: the image is whole).
__global__ void scan_kernel(const unsigned* __restrict__ mask, i64 nx, i64 nseg, const int* __restrict__ bounds,
                            int* __restrict__ up, int* __restrict__ down) {
  for (i64 x = blockIdx.x * (i64)blockDim.x + threadIdx.x; x < nx; x += (i64)gridDim.x * blockDim.x)
    scan_column(mask, nx, nseg, x, up, down, bounds ? bounds[x] : kNoRow, bounds ? bounds[nx + x] : kNoRow);
}

// Threads are (band, row) with the row fastest: a warp is 32 consecutive rows of one band, which
// read the same mask words (broadcast) and neighbouring stack slots.
__global__ void envelope_kernel(Columns cols, Envelopes env, i64 nx, i64 nbands, RowList rows) {
  const i64 n = rows.size();
  for (i64 t = blockIdx.x * (i64)blockDim.x + threadIdx.x; t < nbands * n; t += (i64)gridDim.x * blockDim.x)
    band_envelope(cols, env, nx, t / n, rows[t % n]);
}

__global__ void pixel_fill_kernel(Envelopes env, i64 nx, i64 nbands, RowList rows, float* __restrict__ dist,
                                  long long* __restrict__ sites) {
  const i64 n = rows.size();
  for (i64 t = blockIdx.x * (i64)blockDim.x + threadIdx.x; t < nx * n; t += (i64)gridDim.x * blockDim.x)
    pixel_fill(env, nx, nbands, t % nx, rows[t / nx], dist, sites);
}

}  // namespace

void launch_envelopes(const Launch& l, RowList rows, int grid, cudaStream_t stream) {
  envelope_kernel<<<grid, kThreads, 0, stream>>>(l.cols, l.env, l.nx, l.nbands, rows);
  REPIX_CUDA_LAUNCH();
}

void launch_pixel_fill(const Launch& l, RowList rows, int grid, cudaStream_t stream) {
  pixel_fill_kernel<<<grid, kThreads, 0, stream>>>(l.env, l.nx, l.nbands, rows, l.dist, l.sites);
  REPIX_CUDA_LAUNCH();
}

void select_flagged_rows(const Launch& l, cudaStream_t stream) {
  std::size_t temp = l.temp_bytes;
  REPIX_CUDA(cub::DeviceSelect::Flagged(l.temp, temp, thrust::counting_iterator<int>(0), l.flags, l.list,
                                        l.list + l.ny, static_cast<int>(l.ny), stream));
}

namespace {

class SeparablePlan final : public DevicePlan {
 public:
  explicit SeparablePlan(RowPhase phase) : phase_(phase) {}
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
    if (!opt.column_bounds.empty() && static_cast<i64>(opt.column_bounds.size()) != 2 * nx)
      throw Error("internal: edt column bounds for " + std::to_string(opt.column_bounds.size() / 2) + " columns, not " +
                  std::to_string(nx));
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
    if (!opt.column_bounds.empty()) {
      bounds_.allocate(opt.column_bounds.size());
      // Pageable source: the copy is done when it returns, so the options may go.
      REPIX_CUDA(cudaMemcpy(bounds_.get(), opt.column_bounds.data(), opt.column_bounds.size() * sizeof(int),
                            cudaMemcpyHostToDevice));
    }
    if (phase_.row_list) {
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
      scan_kernel<<<grid_for(nx), kThreads, 0, stream>>>(mask_.get(), nx, nseg_, bounds_.get(), up_.get(), down_.get());
      REPIX_CUDA_LAUNCH();
    }
    Launch l;
    l.cols = Columns{mask_.get(), up_.get(), down_.get(), nx};
    l.env = Envelopes{centre_.get(), start_.get(), row_.get(), count_.get(), ny};
    l.nx = nx;
    l.ny = ny;
    l.nbands = nbands_;
    l.dist = dist_.get();
    l.sites = want_sites_ ? sites_.get() : nullptr;
    l.flags = flags_.get();
    l.list = list_.get();
    l.temp = temp_.get();
    l.temp_bytes = temp_.bytes();
    l.list_grid = list_grid_;
    {
      nvtx::Range r(phase_.name, shape_.size());
      phase_.launch(l, stream);
    }
    computed_ = true;
  }

  Result result(cudaStream_t stream) override {
    if (!computed_) throw Error("internal: edt plan result() before compute()");
    // A row-list phase (gpu-opt): the list's length, its fallback rows, copied before
    // download_result's stream sync.
    int fallback_rows = 0;
    if (phase_.row_list)
      REPIX_CUDA(cudaMemcpyAsync(&fallback_rows, list_.get() + shape_.ny, sizeof(int), cudaMemcpyDeviceToHost, stream));
    Result r = download_result(shape_, dist_.get(), want_sites_ ? sites_.get() : nullptr, stream);
    r.stats.passes = 2;
    r.stats.fallback_rows = fallback_rows;
    return r;
  }
  std::vector<DeviceOutput> device_outputs() const override {
    if (!computed_) throw Error("internal: edt plan device_outputs() before compute()");
    return device_outputs_of(shape_, dist_.get(), want_sites_ ? sites_.get() : nullptr);
  }

 private:
  void release() {
    mask_.reset(); up_.reset(); down_.reset(); centre_.reset(); start_.reset(); row_.reset();
    count_.reset(); dist_.reset(); sites_.reset(); flags_.reset(); list_.reset(); temp_.reset(); bounds_.reset();
  }
  RowPhase phase_;
  DType dtype_ = DType::u8;
  Shape shape_;
  bool want_sites_ = true, ready_ = false, computed_ = false;
  i64 nseg_ = 0, nbands_ = 0;
  int list_grid_ = 0;
  DeviceBuffer<unsigned> mask_;
  DeviceBuffer<int> up_, down_, centre_, start_, row_, count_, flags_, list_, bounds_;
  DeviceBuffer<unsigned char> temp_;
  DeviceBuffer<float> dist_;
  DeviceBuffer<long long> sites_;
};

}  // namespace

Variant variant(const char* id, const char* step, const char* description, RowPhase phase) {
  const std::string nvtx_name = std::string("edt/") + id;
  return {{id, true, step, description,
           [=](const HostImage& in, const Options& o) { return run_gpu_variant(nvtx_name.c_str(), SeparablePlan(phase), in, o); },
           [=] { return std::unique_ptr<DevicePlan>(new SeparablePlan(phase)); }},
          /*exact=*/true};
}

}  // namespace separable

std::vector<DeviceOutput> device_outputs_of(const Shape& shape, const float* d_distance, const void* d_linear_sites) {
  std::vector<DeviceOutput> out{image_output(d_distance, "<f4", sizeof(float), shape)};
  if (d_linear_sites) out.push_back(image_output(d_linear_sites, "<i8", sizeof(std::int64_t), shape));
  return out;
}

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

Result run_gpu_variant(const char* nvtx_name, DevicePlan&& plan, const HostImage& input, const Options& opt) {
  nvtx::Range range(nvtx_name);
  check_input(input);
  require_gpu();
  return plan_end_to_end(plan, input, opt);
}

}  // namespace repix::edt
