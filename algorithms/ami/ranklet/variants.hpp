// The ranklet variants' entry points, for the registry (register.cpp): CPU variants as functions,
// GPU ones as factories, one file each named after the variant id; and what they share.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "ami/ranklet/ranklet.hpp"
#include "core/gpu.hpp"

namespace repix::ami::ranklet {

// ---- CPU (common.cpp) ----------------------------------------------------------------------------

// out[o] points at row y of orientation o's plane of window r; fill out[o][0, W).
using RowFn = std::function<void(int r, std::int64_t y, float* const out[kOrientations])>;
// Checks the input and windows, then calls row() for every window and row; rows in parallel
// (OpenMP, dynamic schedule) unless threads == 1 (0: OpenMP's default).
Result run_rows(const HostImage& input, const Options& opt, int threads, const RowFn& row);

// Moves a[root] down the max-heap a[0, end).
REPIX_HD void sift_down(std::uint8_t* a, int root, int end) {
  while (2 * root + 1 < end) {
    int child = 2 * root + 1;
    if (child + 1 < end && a[child] < a[child + 1]) ++child;
    if (a[root] >= a[child]) return;
    const std::uint8_t t = a[root];
    a[root] = a[child];
    a[child] = t;
    root = child;
  }
}

// Heap sort of a[0, n) ascending: gpu-naive's per-thread sort (no recursion, no extra memory).
REPIX_HD void heap_sort(std::uint8_t* a, int n) {
  for (int i = n / 2 - 1; i >= 0; --i) sift_down(a, i, n);
  for (int end = n - 1; end > 0; --end) {
    const std::uint8_t t = a[0];
    a[0] = a[end];
    a[end] = t;
    sift_down(a, 0, end);
  }
}

Result run_seq(const HostImage& input, const Options& opt);       // seq.cpp
// seq's row of window r (sort each window, midranks), which omp runs on several threads: seq.cpp.
void sorted_row(const HostImage& input, int r, std::int64_t y, float* const out[kOrientations]);
Result run_seq_hist(const HostImage& input, const Options& opt);  // seq_hist.cpp
// seq-hist's row of window r (sliding quadrant histograms), which omp-hist runs on several
// threads: seq_hist.cpp.
void hist_row(const HostImage& input, int r, std::int64_t y, float* const out[kOrientations]);
Result run_omp(const HostImage& input, const Options& opt);       // omp.cpp
Result run_omp_hist(const HostImage& input, const Options& opt);  // omp_hist.cpp

// ---- GPU (gpu_plan.cpp) ---------------------------------------------------------------------------

// Base of the GPU plans: setup() checks the input description and the windows and allocates the
// output planes; compute() calls launch() once per window; result() copies the planes back.
class PlanBase : public DevicePlan {
 public:
  void setup(const InputDesc& in, const Options& opt, cudaStream_t stream) override;
  void compute(const DeviceInputs& in, cudaStream_t stream) override;
  Result result(cudaStream_t stream) override;
  Stats stats() const override;
  std::vector<DeviceOutput> device_outputs() const override;
  // The planes of the last compute(), on the device (window w, orientation o at (3w + o) H W
  // floats): for a pipeline that quantises them there (quantise()) instead of downloading them.
  const float* device_output() const { return out_.get(); }

 protected:
  // Writes window r's three planes (H, V, D; each width * height floats, consecutive) at `out`.
  virtual void launch(const std::uint8_t* d_in, std::int64_t width, std::int64_t height, int r, float* out,
                      const Options& opt, cudaStream_t stream) = 0;

 private:
  Options opt_;
  Shape shape_;
  bool ready_ = false, computed_ = false;
  DeviceBuffer<float> out_;  // the device planes, window by window
  std::unique_ptr<CudaEvent> start_, stop_;  // around compute()'s launches
};

// A GPU variant end to end under the NVTX range "ami/ranklet/<id>" (phases init, h2d, kernel, d2h),
// and make_plan for the kernel scope.
Variant make_gpu_variant(std::string id, std::string step, std::string description,
                         std::function<std::unique_ptr<DevicePlan>()> make_plan);

Variant gpu_naive_variant();  // gpu_naive.cu
Variant gpu_opt_variant();    // gpu_opt.cu
// gpu-opt's plan typed as a PlanBase (device_output() for the ami pipeline): gpu_opt.cu.
std::unique_ptr<PlanBase> make_gpu_opt_plan();

}  // namespace repix::ami::ranklet
