// Image<T>: 1-3 dimensional images, x fastest, then y, then z (C order of a numpy array with
// shape (nz, ny, nx)). HostImage owns untyped storage plus a dtype; ImageView<T> is the typed,
// non-owning view the algorithms take.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/uninitialized_vector.hpp"  // HostMemorySource

namespace repix {

enum class DType { u8, u16, f32 };

constexpr std::size_t dtype_size(DType t) { return t == DType::u8 ? 1 : t == DType::u16 ? 2 : 4; }
std::string dtype_name(DType t);          // "uint8", "uint16", "float32"
DType parse_dtype(const std::string& s);  // accepts u8/uint8, u16/uint16, f32/float32

template <class T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<std::uint8_t>() { return DType::u8; }
template <> constexpr DType dtype_of<std::uint16_t>() { return DType::u16; }
template <> constexpr DType dtype_of<float>() { return DType::f32; }

struct Shape {
  int ndim = 2;  // 1, 2 or 3
  std::int64_t nx = 0, ny = 1, nz = 1;

  static Shape d1(std::int64_t nx) { return {1, nx, 1, 1}; }
  static Shape d2(std::int64_t nx, std::int64_t ny) { return {2, nx, ny, 1}; }
  static Shape d3(std::int64_t nx, std::int64_t ny, std::int64_t nz) { return {3, nx, ny, nz}; }

  std::int64_t size() const { return nx * ny * nz; }
  std::int64_t slice_size() const { return nx * ny; }
  bool operator==(const Shape& o) const {
    return ndim == o.ndim && nx == o.nx && ny == o.ny && nz == o.nz;
  }
  bool operator!=(const Shape& o) const { return !(*this == o); }
  std::string str() const;           // "8192x8192" / "512x512x512" (x first, as in specs)
  static Shape parse(const std::string& s);  // inverse of str(); throws repix::Error
};

template <class T>
struct ImageView {
  const T* data = nullptr;
  Shape shape;
  std::int64_t size() const { return shape.size(); }
  const T& operator()(std::int64_t x, std::int64_t y = 0, std::int64_t z = 0) const {
    return data[x + shape.nx * (y + shape.ny * z)];
  }
};

// Host storage. Pinned (page-locked) storage is used when asked for and a CUDA device exists,
// so that host-to-device copies run at full PCIe speed; otherwise 64-byte aligned heap memory.
// Or a block of a HostMemorySource (core/uninitialized_vector.hpp; e.g. the pinned pool of
// core/pinned_pool.hpp, whose blocks are pinned once and reused), given back to it at the end;
// the heap's where it cannot serve.
class HostBuffer {
 public:
  HostBuffer() = default;
  explicit HostBuffer(std::size_t bytes, bool pinned = false);
  HostBuffer(std::size_t bytes, HostMemorySource& source);
  HostBuffer(HostBuffer&&) noexcept;
  HostBuffer& operator=(HostBuffer&&) noexcept;
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  ~HostBuffer();

  void* data() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }
  bool pinned() const { return pinned_; }

 private:
  void release();
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
  bool pinned_ = false;
  HostMemorySource* source_ = nullptr;  // where ptr_ came from, if not from here
};

class HostImage {
 public:
  HostImage() = default;
  HostImage(DType dtype, Shape shape, bool pinned = false);
  HostImage(DType dtype, Shape shape, HostMemorySource& source);  // its storage from `source` (HostBuffer)

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  std::int64_t size() const { return shape_.size(); }
  std::size_t bytes() const { return static_cast<std::size_t>(size()) * dtype_size(dtype_); }
  bool pinned() const { return buf_.pinned(); }
  void* raw() { return buf_.data(); }
  const void* raw() const { return buf_.data(); }

  template <class T> T* data() { check<T>(); return static_cast<T*>(buf_.data()); }
  template <class T> const T* data() const { check<T>(); return static_cast<const T*>(buf_.data()); }
  template <class T> ImageView<T> view() const { return {data<T>(), shape_}; }

  // FNV-1a 64 over dtype, shape and bytes: the content hash recorded in reports.
  std::uint64_t content_hash() const;

 private:
  template <class T> void check() const {
    if (dtype_of<T>() != dtype_) throw Error("internal: image is " + dtype_name(dtype_) +
                                             ", accessed as " + dtype_name(dtype_of<T>()));
  }
  DType dtype_ = DType::f32;
  Shape shape_;
  HostBuffer buf_;
};

// The element type of a DType as a value, for generic lambdas (C++17 has no templated ones):
//   dispatch_dtype(dt, [&](auto tag) { using T = typename decltype(tag)::type; ... });
// The one switch over the element types; everything else dispatches through it.
template <class T>
struct TypeTag {
  using type = T;
};
template <class F>
decltype(auto) dispatch_dtype(DType dt, F&& f) {
  switch (dt) {
    case DType::u8: return f(TypeTag<std::uint8_t>{});
    case DType::u16: return f(TypeTag<std::uint16_t>{});
    case DType::f32: break;
  }
  return f(TypeTag<float>{});
}

// Calls f(ImageView<T>) with the image's real element type.
template <class F>
decltype(auto) visit_image(const HostImage& img, F&& f) {
  return dispatch_dtype(img.dtype(), [&](auto tag) -> decltype(auto) {
    return f(img.view<typename decltype(tag)::type>());
  });
}

std::uint64_t fnv1a64(const void* data, std::size_t bytes, std::uint64_t h = 1469598103934665603ull);

}  // namespace repix
