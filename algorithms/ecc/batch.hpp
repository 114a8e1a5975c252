// gpu-opt over a batch of equal-shaped images (the ECC paper's Table 3: many small files, GPU
// overhead amortised). What is amortised: the device workspace (allocated once per batch shape,
// not per image), the upload (the caller puts the N images back to back in one device buffer
// and copies them with one cudaMemcpy), and launch latency across `streams` plans that take
// images round-robin on their own CUDA streams. Each image still gets its own exact curve
// (its own gpu-opt pass and VCEC read-back), so per-image results are verified against seq
// like any other variant's.
//
// Why not one kernel with per-image histograms: gpu-opt's float path bins values in a hash table
// per image; sharing one launch would need per-image tables and a segmented compaction for a gain
// that only matters below ~10 us per image, while a 128^2 image already takes a few us.
#pragma once
#include <cuda_runtime_api.h>

#include <memory>
#include <vector>

#include "ecc/ecc.hpp"

namespace repix::ecc {

class BatchRunner {
 public:
  // One gpu-opt plan per stream, set up for images of this type and shape. Needs a GPU.
  BatchRunner(DType dtype, const Shape& shape, int streams = 4);
  ~BatchRunner();
  BatchRunner(const BatchRunner&) = delete;
  BatchRunner& operator=(const BatchRunner&) = delete;

  // n images back to back in device memory (image i at d_images + i * image bytes). Returns the
  // n curves in order; synchronises the plans' streams. The upload must be complete (its stream
  // synchronised) before run(). Float images must be finite (the caller checks on the host).
  std::vector<Curve> run(const void* d_images, std::int64_t n);
  int streams() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace repix::ecc
