#include "core/image.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "core/download.hpp"  // is_pinned
#include "core/gpu.hpp"

namespace repix {

std::string dtype_name(DType t) {
  switch (t) {
    case DType::u8: return "uint8";
    case DType::u16: return "uint16";
    case DType::f32: return "float32";
  }
  return "?";
}

DType parse_dtype(const std::string& s) {
  if (s == "u8" || s == "uint8") return DType::u8;
  if (s == "u16" || s == "uint16") return DType::u16;
  if (s == "f32" || s == "float32") return DType::f32;
  throw Error("unsupported dtype '" + s + "' (expected uint8, uint16 or float32)");
}

std::string Shape::str() const {
  std::ostringstream o;
  o << nx;
  if (ndim >= 2) o << 'x' << ny;
  if (ndim >= 3) o << 'x' << nz;
  return o.str();
}

Shape Shape::parse(const std::string& s) {
  std::vector<std::int64_t> dims;
  std::size_t pos = 0;
  while (pos <= s.size()) {
    std::size_t end = s.find('x', pos);
    if (end == std::string::npos) end = s.size();
    const std::string tok = s.substr(pos, end - pos);
    if (tok.empty() || tok.find_first_not_of("0123456789") != std::string::npos || tok.size() > 12)
      throw Error("bad shape '" + s + "' (expected e.g. 512x512 or 128x128x64)");
    dims.push_back(std::stoll(tok));
    pos = end + 1;
  }
  if (dims.empty() || dims.size() > 3)
    throw Error("bad shape '" + s + "': 1 to 3 dimensions are supported");
  for (auto d : dims)
    if (d <= 0) throw Error("bad shape '" + s + "': every dimension must be positive");
  Shape sh;
  sh.ndim = static_cast<int>(dims.size());
  sh.nx = dims[0];
  sh.ny = dims.size() > 1 ? dims[1] : 1;
  sh.nz = dims.size() > 2 ? dims[2] : 1;
  return sh;
}

HostBuffer::HostBuffer(std::size_t bytes, bool pinned) : bytes_(bytes) {
  if (bytes == 0) return;
  if (pinned && gpu_available()) {
    if (cudaHostAlloc(&ptr_, bytes, cudaHostAllocPortable) == cudaSuccess) {
      pinned_ = true;
      return;
    }
    cudaGetLastError();  // clear the sticky-free error; fall back to pageable memory
    ptr_ = nullptr;
  }
  const std::size_t rounded = (bytes + 63) / 64 * 64;
  ptr_ = std::aligned_alloc(64, rounded);
  if (!ptr_) throw Error("out of host memory allocating " + std::to_string(bytes) + " bytes");
}

HostBuffer::HostBuffer(std::size_t bytes, HostMemorySource& source) : bytes_(bytes) {
  if (bytes == 0) return;
  if ((ptr_ = source.allocate(bytes))) {
    source_ = &source;
    pinned_ = is_pinned(ptr_);
    return;
  }
  *this = HostBuffer(bytes, false);
}

HostBuffer::HostBuffer(HostBuffer&& o) noexcept
    : ptr_(o.ptr_), bytes_(o.bytes_), pinned_(o.pinned_), source_(o.source_) {
  o.ptr_ = nullptr;
  o.bytes_ = 0;
  o.pinned_ = false;
  o.source_ = nullptr;
}

HostBuffer& HostBuffer::operator=(HostBuffer&& o) noexcept {
  if (this != &o) {
    release();
    ptr_ = o.ptr_;
    bytes_ = o.bytes_;
    pinned_ = o.pinned_;
    source_ = o.source_;
    o.ptr_ = nullptr;
    o.bytes_ = 0;
    o.pinned_ = false;
    o.source_ = nullptr;
  }
  return *this;
}

HostBuffer::~HostBuffer() { release(); }

void HostBuffer::release() {
  if (!ptr_) return;
  if (source_) source_->release(ptr_, bytes_);
  else if (pinned_) cudaFreeHost(ptr_);
  else std::free(ptr_);
  ptr_ = nullptr;
  source_ = nullptr;
}

namespace {
// The storage of an image of that shape (none for an empty one: the constructors then throw).
std::size_t image_bytes(DType dtype, const Shape& shape) {
  return static_cast<std::size_t>(std::max<std::int64_t>(shape.size(), 0)) * dtype_size(dtype);
}
}  // namespace

HostImage::HostImage(DType dtype, Shape shape, bool pinned)
    : dtype_(dtype), shape_(shape), buf_(image_bytes(dtype, shape), pinned) {
  if (shape.size() <= 0) throw Error("empty image (shape " + shape.str() + ")");
}

HostImage::HostImage(DType dtype, Shape shape, HostMemorySource& source)
    : dtype_(dtype), shape_(shape), buf_(image_bytes(dtype, shape), source) {
  if (shape.size() <= 0) throw Error("empty image (shape " + shape.str() + ")");
}

std::uint64_t fnv1a64(const void* data, std::size_t bytes, std::uint64_t h) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < bytes; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

std::uint64_t HostImage::content_hash() const {
  const std::string head = dtype_name(dtype_) + ":" + shape_.str() + ":";
  return fnv1a64(raw(), bytes(), fnv1a64(head.data(), head.size()));
}

}  // namespace repix

#include <cstring>
#include "core/slab_source.hpp"

namespace repix {
void ImageSlabSource::read(std::int64_t s0, std::int64_t s1, void* dst) {
  const std::size_t slab_bytes = static_cast<std::size_t>(slab_elems(img_.shape())) * dtype_size(img_.dtype());
  std::memcpy(dst, static_cast<const char*>(img_.raw()) + s0 * slab_bytes, (s1 - s0) * slab_bytes);
}
}  // namespace repix
