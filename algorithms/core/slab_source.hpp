// A source of image slabs along the slowest axis (z in 3D, y in 2D and 1D), produced on demand:
// files read as they stream, or generators that compute any slab independently. Lets the
// streaming variants process images larger than host or device memory.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/image.hpp"

namespace repix {

// Slowest-axis length and elements per slab (2D images slab along y).
inline std::int64_t slab_count(const Shape& s) { return s.ndim == 3 ? s.nz : s.ny; }
inline std::int64_t slab_elems(const Shape& s) { return s.ndim == 3 ? s.nx * s.ny : s.nx; }

class SlabSource {
 public:
  virtual ~SlabSource() = default;
  virtual DType dtype() const = 0;
  virtual Shape shape() const = 0;
  // Writes slabs [s0, s1) to dst (slab_elems(shape()) elements each, dtype()).
  // Throws repix::Error on a read failure (truncated file, ...).
  virtual void read(std::int64_t s0, std::int64_t s1, void* dst) = 0;
  // The same slabs written into device memory on `stream` (asynchronously), where the source can
  // make them there: a counter-based generator computes the very values read() gives. Returns
  // false where it cannot (files, images in memory): the caller reads on the host and copies.
  virtual bool read_on_device(std::int64_t /*s0*/, std::int64_t /*s1*/, void* /*device_dst*/, cudaStream_t /*stream*/) {
    return false;
  }
};

// Serves slabs of an image already in host memory.
class ImageSlabSource final : public SlabSource {
 public:
  explicit ImageSlabSource(const HostImage& img) : img_(img) {}
  DType dtype() const override { return img_.dtype(); }
  Shape shape() const override { return img_.shape(); }
  void read(std::int64_t s0, std::int64_t s1, void* dst) override;
  const HostImage& image() const { return img_; }

 private:
  const HostImage& img_;
};

}  // namespace repix
