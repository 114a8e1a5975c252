// ECC of a batch of equal-shaped images already in device memory (the ECC paper's Table 3: many
// small files, GPU overhead amortised). The caller puts the N images back to back in one device
// buffer (one upload); every image still gets its own exact curve, verified against seq like any
// other variant's.
//
// Two paths, because per-image overhead and per-image work trade places with the image size:
//  * small-kernel, images of at most 16384 elements (128^2, 127x129, 16x16x64, 1x1, ...): ONE
//    kernel launch per round of images, one thread block per image (gpu_batch_small.cu), and ONE
//    device-to-host copy per round (every image's pair count and (value, ECC) pairs). Rounds
//    (about 16 MiB of results each) bound the read-back buffers and let the host split round r
//    into curves while round r + 1 is computed and copied. At this size gpu-opt's fixed costs per
//    image (several launches, a host synchronisation for the float table's overflow flag, two
//    read-backs) were ~2 ms per 128^2 image on the H100 against microseconds of arithmetic.
//  * per-image, larger images (128^3 = 2M voxels): a block-per-image kernel cannot hold them in
//    shared memory, and the work per image (~0.16 ms at 128^3) dwarfs the overheads, so each
//    image gets its own gpu-opt pass; `streams` plans take images in turn on their own streams,
//    and an image's pass and read-back are queued without a host synchronisation between them
//    (OptPlan::compute_queued / collect: one wait per image, overlapping the other streams).
#pragma once
#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <vector>

#include "ecc/ecc.hpp"

namespace repix::ecc {

enum class BatchPath { automatic, small_kernel, per_image };

// "auto", "small-kernel", "per-image".
std::string batch_path_name(BatchPath path);
// Inverse of batch_path_name; throws repix::Error naming the choices.
BatchPath parse_batch_path(const std::string& name);

class BatchRunner {
 public:
  // Sets up `path` for images of this type and shape; automatic takes small-kernel where the
  // images fit it (small_kernel_fits), else per-image with `streams` gpu-opt plans. Needs a GPU.
  // Throws repix::Error when small-kernel is asked for images that do not fit it.
  BatchRunner(DType dtype, const Shape& shape, int streams = 4, BatchPath path = BatchPath::automatic);
  ~BatchRunner();
  BatchRunner(const BatchRunner&) = delete;
  BatchRunner& operator=(const BatchRunner&) = delete;

  // n images back to back in device memory (image i at d_images + i * image bytes). Returns the
  // n curves in order; synchronous. The upload must be complete (its stream synchronised) before
  // run(). Float images must be finite (the caller checks on the host).
  std::vector<Curve> run(const void* d_images, std::int64_t n);

  BatchPath path() const;  // the path taken (never automatic)
  int streams() const;     // CUDA streams the batch is spread over

  // Tests: at most this many images per small-kernel round (0 restores the automatic size), so
  // that a few images exercise several rounds and both read-back buffers. No effect on per-image.
  void set_round_images_for_tests(std::int64_t images);

  // True when images of this shape fit the small-image kernel.
  static bool small_kernel_fits(const Shape& shape);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace repix::ecc
