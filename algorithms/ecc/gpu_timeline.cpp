#include "ecc/gpu_timeline.hpp"

namespace repix::ecc {

namespace {
thread_local std::optional<EndToEndTimeline> last_timeline;
}  // namespace

std::optional<EndToEndTimeline> take_timeline() {
  std::optional<EndToEndTimeline> t;
  t.swap(last_timeline);
  return t;
}

TimelineRecorder::TimelineRecorder(bool on) : t0_(std::chrono::steady_clock::now()) {
  last_timeline.reset();  // a call without a recorded timeline leaves none behind
  if (on) events_ = std::make_unique<Events>();
}

double TimelineRecorder::host_us() const {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0_).count();
}

void TimelineRecorder::start(cudaStream_t s) {
  if (events_) events_->start.record(s);
}
void TimelineRecorder::uploaded(cudaStream_t s) {
  if (events_) events_->uploaded.record(s);
}
void TimelineRecorder::uploaded_by(const CudaEvent& e) {
  if (events_) events_->uploaded_elsewhere = &e;
}
void TimelineRecorder::kernels(cudaStream_t s) {
  if (!events_) return;
  events_->kernels.record(s);
  events_->kernels_recorded = true;
}
void TimelineRecorder::finished_then_wait(cudaStream_t s) {
  if (!events_) return;
  events_->finished.record(s);
  t_.host_issued_us = host_us();
  REPIX_CUDA(cudaEventSynchronize(events_->finished.get()));
  t_.host_woken_us = host_us();
}
void TimelineRecorder::returned(std::int64_t chunks, double curve_work_us) {
  if (!events_) return;
  t_.host_returned_us = host_us();
  t_.chunks = chunks;
  t_.host_curve_work_us = curve_work_us;
  // Every event has completed: the finishing kernel is the last of them on the GPU.
  const CudaEvent& uploaded = events_->uploaded_elsewhere ? *events_->uploaded_elsewhere : events_->uploaded;
  t_.gpu_uploaded_us = 1000.0 * uploaded.ms_since(events_->start);
  t_.gpu_kernels_us = events_->kernels_recorded ? 1000.0 * events_->kernels.ms_since(events_->start) : -1;
  t_.gpu_finished_us = 1000.0 * events_->finished.ms_since(events_->start);
  last_timeline = t_;
}

}  // namespace repix::ecc
