// The end-to-end paths' EndToEndTimeline (ecc.hpp, Options::timeline): where a call's time goes,
// the upload, the last chunk's kernels, the finishing kernel, the host's wake-up and the curve.
// Nsight Systems does not run on the GPU host we measured on, and the end
// to end tail (the call's time beyond its upload) is what the PCIe targets of issue 15 miss.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>

#include "core/gpu.hpp"
#include "ecc/ecc.hpp"

namespace repix::ecc {

// Records one call's timeline when `on` (every method is a no-op otherwise): GPU events with
// timing on the streams given, host clocks from construction.
class TimelineRecorder {
 public:
  explicit TimelineRecorder(bool on);
  void start(cudaStream_t s);     // the GPU's zero: before the first upload, on its stream
  void uploaded(cudaStream_t s);  // after the last upload, on its stream
  // Or the last upload's time from `e`, an event a CUDA graph records (with timing) each launch.
  void uploaded_by(const CudaEvent& e);
  void kernels(cudaStream_t s);   // after every accumulation kernel (a stream that waited for them all)
  // After the finishing kernel, the host's last GPU operation, on its stream: records it, notes the
  // host's issue time, and waits for it (collect() then finds it done).
  void finished_then_wait(cudaStream_t s);
  // The curve is made (`curve_work_us` of the host's time since the wait: Engine::collect_work_us):
  // the timeline becomes take_timeline()'s.
  void returned(std::int64_t chunks, double curve_work_us);

 private:
  struct Events {
    CudaEvent start, uploaded, kernels, finished;
    bool kernels_recorded = false;
    const CudaEvent* uploaded_elsewhere = nullptr;  // uploaded_by()
  };
  std::unique_ptr<Events> events_;
  std::chrono::steady_clock::time_point t0_;
  EndToEndTimeline t_;
  double host_us() const;
};

}  // namespace repix::ecc
