// The timing core. GPU work is timed with CUDA events on a dedicated stream after a warm-up;
// every raw sample is kept. Inputs that would sit in L2 between samples are defeated by
// flushing L2 (a memset over twice its size, outside the timed region) before every sample.
// Host-side work (CPU variants, end-to-end runs) is timed with a steady clock.
#pragma once
#include <cuda_runtime_api.h>

#include <functional>
#include <memory>
#include <vector>

#include "core/gpu.hpp"

namespace repix::timing {

struct Config {
  int warmup = 2;          // untimed runs first (module load, first allocations, clocks)
  int samples = 20;        // timed samples kept
  bool flush_l2 = true;    // GPU only
};

// Writes over a buffer twice the size of L2 so the next kernel starts with a cold cache.
class L2Flusher {
 public:
  L2Flusher();
  void flush(cudaStream_t stream);

 private:
  DeviceBuffer<unsigned char> buf_;
};

// One event-timed sample at a time, L2 flushed first when asked: what time_gpu loops over, and
// what the bench's kernel-scope cases call once per Google Benchmark iteration.
class GpuSampler {
 public:
  explicit GpuSampler(bool flush_l2);
  // Milliseconds between events recorded around fn(stream); waits for the stop event.
  double sample(const std::function<void(cudaStream_t)>& fn, cudaStream_t stream);

 private:
  std::unique_ptr<L2Flusher> flusher_;
  CudaEvent start_, stop_;
};

// Warm-up, then cfg.samples event-timed samples of fn(stream). Milliseconds.
std::vector<double> time_gpu(const std::function<void(cudaStream_t)>& fn, cudaStream_t stream,
                             const Config& cfg);

// Ceilings measured on this machine in this run (GB/s, 1e9 bytes per second, medians).
struct Bandwidths {
  double dram_read = 0;      // a read-only streaming kernel over 2 GiB
  double dram_copy = 0;      // device-to-device copy, (bytes read + bytes written) / time
  double h2d_pinned = 0;     // host-to-device from pinned memory, 1 GiB copies
  double d2h_pinned = 0;
};
Bandwidths measure_bandwidths();

}  // namespace repix::timing
