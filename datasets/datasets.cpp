// Dispatch from specs to the generators, and the slab sources over them.
#include "datasets/datasets.hpp"

#include <omp.h>

#include "datasets/generators.hpp"
#include "datasets/io.hpp"

namespace repix::datasets {
namespace {

bool elementwise_kind(const std::string& kind) {
  return kind == "uniform" || kind == "const" || kind == "checker" || kind == "ramp" || kind == "sparse";
}

detail::Elementwise make_elementwise(const Spec& s) {
  if (s.kind == "sparse") return detail::make_sparse(s);
  return s.kind == "uniform" ? detail::make_uniform(s) : detail::make_simple(s);
}

// Fills [begin, end) in fixed chunks spread over threads; every element depends on its index
// only, so the result does not depend on the split.
void parallel_fill(const detail::Elementwise& g, std::int64_t begin, std::int64_t end, void* dst) {
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
  ElementwiseSource(detail::Elementwise g, Shape shape) : g_(std::move(g)), shape_(shape) {}
  DType dtype() const override { return g_.dtype; }
  Shape shape() const override { return shape_; }
  void read(std::int64_t s0, std::int64_t s1, void* dst) override {
    if (s0 < 0 || s1 < s0 || s1 > slab_count(shape_))
      throw Error("internal: slab range [" + std::to_string(s0) + ", " + std::to_string(s1) + ") outside 0.." +
                  std::to_string(slab_count(shape_)));
    const std::int64_t per = slab_elems(shape_);
    parallel_fill(g_, s0 * per, s1 * per, dst);
  }

 private:
  detail::Elementwise g_;
  Shape shape_;
};

}  // namespace

HostImage generate(const Spec& spec, bool pinned) {
  const Spec s = canonical(spec);
  if (s.is_file()) return load_file(s, pinned);
  if (s.kind == "grf") return detail::generate_grf(s, pinned);
  if (s.kind == "blobs") return detail::generate_blobs(s, pinned);
  if (s.kind == "noise-mask" || s.kind == "tissue") return detail::generate_mask_kind(s, pinned);
  const detail::Elementwise g = make_elementwise(s);
  HostImage img(g.dtype, s.shape, pinned);
  parallel_fill(g, 0, img.size(), img.raw());
  return img;
}

HostImage generate(const std::string& spec, bool pinned) { return generate(Spec::parse(spec), pinned); }

std::unique_ptr<SlabSource> open_source(const Spec& spec) {
  const Spec s = canonical(spec);
  if (s.is_file()) return open_file_source(s);
  if (elementwise_kind(s.kind)) return std::make_unique<ElementwiseSource>(make_elementwise(s), s.shape);
  return detail::make_owned_source(generate(s));  // grf, blobs, masks: whole image, then slabs
}

bool is_chunk_addressable(const Spec& spec) {
  const Spec s = canonical(spec);
  if (elementwise_kind(s.kind)) return true;
  if (!s.is_file()) return false;
  const std::string ext = detail::extension(s.path);
  return ext == ".npy" || ext == ".raw" || ext == ".dat" || (s.has("shape") && s.has("dtype") && ext != ".png" &&
         ext != ".pgm" && ext != ".pnm" && ext != ".tif" && ext != ".tiff");
}

DType spec_dtype(const Spec& spec) {
  const Spec s = canonical(spec);
  if (s.is_file()) return open_file_source(s)->dtype();
  if (s.kind == "grf") return DType::f32;
  if (s.kind == "blobs" || s.kind == "noise-mask" || s.kind == "tissue") return DType::u8;
  return make_elementwise(s).dtype;
}

Shape spec_shape(const Spec& spec) {
  const Spec s = canonical(spec);
  return s.is_file() ? open_file_source(s)->shape() : s.shape;
}

bool is_marker_spec(const Spec& spec) { return canonical(spec).has("marker"); }

Spec mask_spec(const Spec& marker_spec) {
  Spec s = canonical(marker_spec);
  for (const char* key : {"marker", "radius", "h"}) s.params.erase(key);
  return canonical(s);
}

std::vector<std::pair<std::string, std::string>> kinds() { return spec_kinds(); }

}  // namespace repix::datasets
