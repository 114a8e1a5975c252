// Building blocks of the kinds: the elementwise and whole-image shapes, and their slab sources.
#include "datasets/kind.hpp"

#include <omp.h>

#include <cstring>
#include <utility>

namespace repix::datasets::detail {
namespace {

void check_slab_range(std::int64_t s0, std::int64_t s1, const Shape& shape) {
  if (s0 < 0 || s1 < s0 || s1 > slab_count(shape))
    throw Error("internal: slab range [" + std::to_string(s0) + ", " + std::to_string(s1) + ") outside 0.." +
                std::to_string(slab_count(shape)));
}

// Fills [begin, end) in fixed chunks spread over threads; every element depends on its index
// only, so the result does not depend on the split.
void parallel_fill(const Elementwise& g, std::int64_t begin, std::int64_t end, void* dst) {
  constexpr std::int64_t kChunk = 1 << 18;
  const std::int64_t chunks = (end - begin + kChunk - 1) / kChunk;
  const std::size_t esize = dtype_size(g.dtype);
  if (chunks <= 1) {
    g.fill(begin, end, dst);
    return;
  }
#pragma omp parallel for schedule(static)
  for (std::int64_t c = 0; c < chunks; ++c) {
    const std::int64_t b = begin + c * kChunk;
    const std::int64_t e = b + kChunk < end ? b + kChunk : end;
    g.fill(b, e, static_cast<char*>(dst) + static_cast<std::size_t>(b - begin) * esize);
  }
}

class ElementwiseSource final : public SlabSource {
 public:
  ElementwiseSource(Elementwise g, Shape shape) : g_(std::move(g)), shape_(shape) {}
  DType dtype() const override { return g_.dtype; }
  Shape shape() const override { return shape_; }
  void read(std::int64_t s0, std::int64_t s1, void* dst) override {
    check_slab_range(s0, s1, shape_);
    const std::int64_t per = slab_elems(shape_);
    parallel_fill(g_, s0 * per, s1 * per, dst);
  }
  bool read_on_device(std::int64_t s0, std::int64_t s1, void* device_dst, cudaStream_t stream) override {
    if (!g_.fill_on_device) return false;
    check_slab_range(s0, s1, shape_);
    const std::int64_t per = slab_elems(shape_);
    g_.fill_on_device(s0 * per, s1 * per, device_dst, stream);
    return true;
  }

 private:
  Elementwise g_;
  Shape shape_;
};

class OwnedSource final : public SlabSource {
 public:
  explicit OwnedSource(HostImage img) : img_(std::move(img)) {}
  DType dtype() const override { return img_.dtype(); }
  Shape shape() const override { return img_.shape(); }
  void read(std::int64_t s0, std::int64_t s1, void* dst) override {
    check_slab_range(s0, s1, img_.shape());
    const std::size_t slab_bytes = static_cast<std::size_t>(slab_elems(img_.shape())) * dtype_size(img_.dtype());
    std::memcpy(dst, static_cast<const char*>(img_.raw()) + s0 * slab_bytes, (s1 - s0) * slab_bytes);
  }

 private:
  HostImage img_;
};

Shape spec_shape_of(const Spec& s) { return s.shape; }

}  // namespace

std::unique_ptr<SlabSource> make_owned_source(HostImage img) { return std::make_unique<OwnedSource>(std::move(img)); }

Kind elementwise_kind(std::string name, std::string description, std::vector<std::string> keys,
                      std::function<void(Spec&)> canonicalise, std::function<Elementwise(const Spec&)> make) {
  Kind k;
  k.name = std::move(name);
  k.description = std::move(description);
  k.keys = std::move(keys);
  k.canonicalise = std::move(canonicalise);
  k.generate = [make](const Spec& s, bool pinned) {
    const Elementwise g = make(s);
    HostImage img(g.dtype, s.shape, pinned);
    parallel_fill(g, 0, img.size(), img.raw());
    return img;
  };
  k.open_source = [make](const Spec& s) -> std::unique_ptr<SlabSource> {
    return std::make_unique<ElementwiseSource>(make(s), s.shape);
  };
  k.chunk_addressable = [](const Spec&) { return true; };
  k.generates_on_device = [make](const Spec& s) { return static_cast<bool>(make(s).fill_on_device); };
  k.dtype = [make](const Spec& s) { return make(s).dtype; };
  k.shape = spec_shape_of;
  return k;
}

Kind whole_image_kind(std::string name, std::string description, std::vector<std::string> keys,
                      std::function<void(Spec&)> canonicalise, DType dtype,
                      std::function<HostImage(const Spec&, bool pinned)> generate) {
  Kind k;
  k.name = std::move(name);
  k.description = std::move(description);
  k.keys = std::move(keys);
  k.canonicalise = std::move(canonicalise);
  k.open_source = [generate](const Spec& s) { return make_owned_source(generate(s, false)); };
  k.generate = std::move(generate);
  k.chunk_addressable = [](const Spec&) { return false; };
  k.dtype = [dtype](const Spec&) { return dtype; };
  k.shape = spec_shape_of;
  return k;
}

}  // namespace repix::datasets::detail
