#include <algorithm>

#include "core/timing.hpp"
#include "core/image.hpp"
#include "core/nvtx.hpp"

namespace repix::timing {

L2Flusher::L2Flusher() {
  int dev = 0, l2 = 0;
  REPIX_CUDA(cudaGetDevice(&dev));
  REPIX_CUDA(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  buf_.allocate(static_cast<std::size_t>(std::max(l2, 1 << 20)) * 2);
}

void L2Flusher::flush(cudaStream_t stream) {
  REPIX_CUDA(cudaMemsetAsync(buf_.get(), 0, buf_.bytes(), stream));
}

GpuSampler::GpuSampler(bool flush_l2) {
  if (flush_l2) flusher_ = std::make_unique<L2Flusher>();
}

double GpuSampler::sample(const std::function<void(cudaStream_t)>& fn, cudaStream_t stream) {
  if (flusher_) flusher_->flush(stream);
  start_.record(stream);
  fn(stream);
  stop_.record(stream);
  REPIX_CUDA(cudaEventSynchronize(stop_.get()));
  return stop_.ms_since(start_);
}

std::vector<double> time_gpu(const std::function<void(cudaStream_t)>& fn, cudaStream_t stream,
                             const Config& cfg) {
  {
    nvtx::Range r("warmup");
    for (int i = 0; i < cfg.warmup; ++i) fn(stream);
    REPIX_CUDA(cudaStreamSynchronize(stream));
  }
  GpuSampler sampler(cfg.flush_l2);
  std::vector<double> ms;
  ms.reserve(cfg.samples);
  for (int i = 0; i < cfg.samples; ++i) ms.push_back(sampler.sample(fn, stream));
  return ms;
}

namespace {

// Sums 16-byte vectors with a grid-stride loop: the fastest way to only read memory. The sum
// goes to one word per block so the compiler cannot drop the loads.
__global__ void read_kernel(const uint4* __restrict__ p, std::size_t n, unsigned* __restrict__ out) {
  unsigned acc = 0;
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const uint4 v = __ldcs(p + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) out[blockIdx.x] = acc;  // practically never taken; keeps the loads live
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

Bandwidths measure_bandwidths() {
  nvtx::Range range("bandwidth");
  Bandwidths b;
  const std::size_t bytes = std::size_t(2) << 30;
  CudaStream stream;
  DeviceBuffer<unsigned char> a(bytes), c(bytes);
  DeviceBuffer<unsigned> sink(4096);
  REPIX_CUDA(cudaMemsetAsync(a.get(), 1, bytes, stream.get()));
  int dev = 0, sms = 0;
  REPIX_CUDA(cudaGetDevice(&dev));
  REPIX_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  Config cfg;
  cfg.warmup = 3;
  cfg.samples = 15;
  cfg.flush_l2 = false;  // 2 GiB is 40x L2
  const auto read_ms = time_gpu([&](cudaStream_t s) {
    read_kernel<<<sms * 8, 512, 0, s>>>(reinterpret_cast<const uint4*>(a.get()), bytes / 16, sink.get());
    REPIX_CUDA_LAUNCH();
  }, stream.get(), cfg);
  b.dram_read = bytes / (median(read_ms) * 1e-3) / 1e9;
  const auto copy_ms = time_gpu([&](cudaStream_t s) {
    REPIX_CUDA(cudaMemcpyAsync(c.get(), a.get(), bytes, cudaMemcpyDeviceToDevice, s));
  }, stream.get(), cfg);
  b.dram_copy = 2.0 * bytes / (median(copy_ms) * 1e-3) / 1e9;

  const std::size_t hbytes = std::size_t(1) << 30;
  HostBuffer host(hbytes, /*pinned=*/true);
  if (host.pinned()) {
    Config hc;
    hc.warmup = 1;
    hc.samples = 7;
    hc.flush_l2 = false;
    const auto h2d = time_gpu([&](cudaStream_t s) {
      REPIX_CUDA(cudaMemcpyAsync(a.get(), host.data(), hbytes, cudaMemcpyHostToDevice, s));
    }, stream.get(), hc);
    const auto d2h = time_gpu([&](cudaStream_t s) {
      REPIX_CUDA(cudaMemcpyAsync(host.data(), a.get(), hbytes, cudaMemcpyDeviceToHost, s));
    }, stream.get(), hc);
    b.h2d_pinned = hbytes / (median(h2d) * 1e-3) / 1e9;
    b.d2h_pinned = hbytes / (median(d2h) * 1e-3) / 1e9;
  }
  return b;
}

}  // namespace repix::timing
