// The batched small-image ECC kernel: host-side API (no device code; includable from plain C++).
// One launch computes the curves of many equal-shaped images, one thread block per image; the
// per-thread logic and its description are in gpu_batch_small_core.cuh. BatchRunner (batch.cpp)
// drives it: rounds of images, one read-back per round.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "core/image.hpp"

namespace repix::ecc::small_batch {

// Where a launch writes: counts[i] pairs for image i, in slot i of `slots`: slot_elems() value
// bits (uint32, the float32 the curve reports) then slot_elems() ECC values (int32), ascending
// by value, compact from the slot's start. One contiguous buffer: slots follow the counts.
struct Output {
  std::uint32_t* counts = nullptr;
  std::uint32_t* slots = nullptr;
};

class Launcher {
 public:
  // Largest image (elements) the kernel takes: 16384 (128^2 float32 in shared memory).
  static std::int64_t max_elements();
  // True when images of this shape fit the kernel (1 to max_elements() elements, any ndim).
  static bool fits(const Shape& shape);
  // Picks the block shape for the image size and opts the kernel into the shared memory it
  // needs. Throws repix::Error when the shape does not fit or there is no GPU.
  Launcher(DType dtype, const Shape& shape);

  // uint32 words of one image's slot (values, then ECC): 2 * elements.
  std::size_t slot_words() const { return 2 * static_cast<std::size_t>(elements_); }
  // Bytes of the counts of `images` images, rounded up to 16 so that the slots start aligned.
  static std::size_t counts_bytes(std::int64_t images);
  // Layout of a buffer for `images` images: counts, then the slots.
  Output layout(void* buffer, std::int64_t images) const;

  // Enqueues the kernel for images [0, m) of `d_images` (back to back, elements() each) on
  // `stream`, writing `out` (laid out for at least m images).
  void launch(const void* d_images, std::int64_t m, const Output& out, cudaStream_t stream) const;

  std::int64_t elements() const { return elements_; }
  std::size_t image_bytes() const { return static_cast<std::size_t>(elements_) * dtype_size(dtype_); }
  int block_threads() const;

 private:
  DType dtype_;
  Shape shape_;
  std::int64_t elements_ = 0;
  int tier_ = 0;
  std::size_t smem_bytes_ = 0;
};

}  // namespace repix::ecc::small_batch
