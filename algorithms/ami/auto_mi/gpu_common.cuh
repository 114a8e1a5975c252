// What the auto-mi GPU variants share: a plan (LagPlan) that walks the lags of both directions in
// batches whose joint histograms (k x k uint32 each) live together in global memory, zeroes them,
// has the variant count the batch's pairs into them (the one thing a variant supplies: count()),
// then turns every lag's histogram into its NMI with one block per lag through the canonical
// nmi_from_columns (the thesis's "reduction kernel"). The lags are summed on the host in lag
// order, as seq does.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "ami/auto_mi/auto_mi.hpp"
#include "ami/auto_mi/nmi_core.hpp"
#include "core/gpu.hpp"

namespace repix::ami::auto_mi::gpu {

// One batch: the histograms of lags lag0 .. lag0 + lags - 1 of one direction.
struct Batch {
  const void* labels = nullptr;
  bool u16 = false;             // labels are uint16 (k = 257), else uint8 (k = 256)
  std::int64_t h = 0, w = 0;
  int direction = kHorizontal;
  std::int64_t lag0 = 1;
  int lags = 0;
  int k = 256;
  std::uint32_t* hist = nullptr;            // lags x k x k, zeroed; lag lag0 + j at j * k * k
  unsigned long long* hot_flushes = nullptr;  // gpu-shared-hist / gpu-opt count their flush rounds here
  std::uint32_t flush_level = kMaxFlushLevel;
};

// A label as a bin index. uint16 labels are clamped to 256 so that an invalid one can never write
// outside the histogram (the plan reports it from its own check: the result is an error).
template <class T>
__device__ __forceinline__ std::uint32_t label_at(const T* l, std::int64_t i) {
  const std::uint32_t v = __ldg(l + i);
  return sizeof(T) == 1 ? v : min(v, 256u);
}

// The batched kernels' grid: x = the lag within the batch, y = the chunk of that lag's pairs.
// Lags vary fastest, so the blocks resident together count the same rows (and, vertically, nearby
// partner rows) for neighbouring lags and find them in L2: the image is read from DRAM about once
// per wave of lags instead of once per lag.
inline dim3 batch_grid(const Batch& b, std::int64_t chunks) {
  return dim3(static_cast<unsigned>(b.lags), static_cast<unsigned>(chunks));
}
__device__ __forceinline__ LagGeometry block_lag(const Batch& b) {
  return lag_geometry(b.h, b.w, b.direction, b.lag0 + blockIdx.x);
}
__device__ __forceinline__ std::int64_t block_chunk() { return blockIdx.y; }
__device__ __forceinline__ std::uint32_t* block_hist(const Batch& b) {
  return b.hist + static_cast<std::size_t>(blockIdx.x) * b.k * b.k;
}

class LagPlan : public DevicePlan {
 public:
  void setup(const InputDesc& in, const Options& opt, cudaStream_t stream) override;
  void compute(const DeviceInputs& in, cudaStream_t stream) override;
  Features result(cudaStream_t stream) override;
  Stats stats() const override;

 protected:
  // Counts every pair of the batch's lags into b.hist (asynchronous on `stream`).
  virtual void count(const Batch& b, cudaStream_t stream) = 0;

 private:
  InputDesc in_;
  Options opt_;
  int k_ = 256;
  int batch_lags_ = 1;
  DeviceBuffer<std::uint32_t> hist_;
  DeviceBuffer<double> nmi_;                    // horizontal lags, then vertical
  DeviceBuffer<unsigned long long> counters_;   // [0] hot flushes, [1] a label above 256 was seen
  Stats stats_;
};

// A GPU variant over a LagPlan subclass: end to end through run_plan_end_to_end, and the plan
// for the bench's kernel scope.
template <class Plan>
Variant make_lag_variant(const std::string& id, const std::string& step, const std::string& description) {
  const std::string range = "auto-mi/" + id;
  return {id, true, step, description,
          [range](const HostImage& img, const Options& opt) {
            Plan plan;
            return run_plan_end_to_end(plan, img, opt, range.c_str());
          },
          [] { return std::make_unique<Plan>(); }};
}

}  // namespace repix::ami::auto_mi::gpu
