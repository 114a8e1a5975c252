// texture: a real grey texture mirrored up to any 2-D size. The tiles are the four CC0 images
// scikit-image ships (camera, brick, grass, gravel; 512x512 uint8), written once to
// datasets/textures/NAME.npy by scripts/texture-images and committed, so no machine needs
// scikit-image. Element (x, y) is tile element (m(x, W), m(y, H)) with m(v, n) reflecting v into
// 0..n-1 (v mod 2n, mirrored in its second half): neighbouring copies meet at mirror images of
// each other, so the large image has no seams a texture feature would see as edges, and any
// chunk can be produced alone (chunk-addressable), as for the AMI thesis's 8192^2 sizes.
// dtype=uint16 gives the same image as uint16 with every value times 257 (0..255 -> 0..65535), the
// 16-bit natural images of Blin et al.'s max-tree benchmark (luma x 257).
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#include "datasets/datasets.hpp"
#include "datasets/io.hpp"
#include "datasets/kind.hpp"

namespace repix::datasets::detail {
namespace {

const char* const kNames[] = {"camera", "brick", "grass", "gravel"};

std::string tile_path(const std::string& name) {
  return std::string(REPIX_SOURCE_DIR) + "/datasets/textures/" + name + ".npy";
}

// Each tile read once per process (the generators run in parallel on chunks).
std::shared_ptr<const HostImage> tile(const std::string& name) {
  static std::mutex m;
  static std::map<std::string, std::shared_ptr<const HostImage>> cache;
  const std::lock_guard<std::mutex> lock(m);
  auto& slot = cache[name];
  if (!slot) {
    HostImage img = read_npy(tile_path(name));
    if (img.dtype() != DType::u8 || img.shape().nz != 1 || img.size() == 0)
      throw Error("texture tile '" + tile_path(name) + "' is not a 2-D uint8 image (rewrite it: scripts/texture-images)");
    slot = std::make_shared<const HostImage>(std::move(img));
  }
  return slot;
}

void canonicalise(Spec& s) {
  auto& p = s.params;
  const std::string name = p.count("name") ? p["name"] : "camera";
  bool known = false;
  for (const char* n : kNames) known = known || name == n;
  if (!known) throw Error("name=" + name + " is not a texture (camera, brick, grass, gravel)");
  p["name"] = name;
  if (p.count("dtype")) {
    if (p["dtype"] == "uint8") p.erase("dtype");  // the default: spelled the same with or without
    else if (p["dtype"] != "uint16") throw Error("texture dtype=" + p["dtype"] + " is not uint8 or uint16");
  }
  (void)tile(name);  // a missing or damaged tile is the spec's error, not a generator's
}

// v reflected into 0..n-1: ... 2 1 0 | 0 1 2 ... n-1 | n-1 n-2 ...
inline std::int64_t mirror(std::int64_t v, std::int64_t n) {
  const std::int64_t m = v % (2 * n);
  return m < n ? m : 2 * n - 1 - m;
}

Elementwise make_texture(const Spec& s) {
  const std::shared_ptr<const HostImage> t = tile(s.params.at("name"));
  const std::int64_t tw = t->shape().nx, th = t->shape().ny, nx = s.shape.nx;
  const bool wide = s.params.count("dtype") != 0;  // uint16 (canonicalise kept nothing else)
  Elementwise g;
  g.dtype = wide ? DType::u16 : DType::u8;
  g.fill = [t, tw, th, nx, wide](std::int64_t b, std::int64_t e, void* dst) {
    const auto* src = static_cast<const std::uint8_t*>(t->raw());
    auto* out8 = static_cast<std::uint8_t*>(dst);
    auto* out16 = static_cast<std::uint16_t*>(dst);
    std::int64_t x = b % nx, y = b / nx;
    for (std::int64_t i = b; i < e; ++i) {
      const std::uint8_t v = src[mirror(y, th) * tw + mirror(x, tw)];
      if (wide) *out16++ = static_cast<std::uint16_t>(v * 257);
      else *out8++ = v;
      if (++x == nx) {
        x = 0;
        ++y;
      }
    }
  };
  return g;
}

}  // namespace

Kind texture_kind() {
  Kind k = elementwise_kind("texture",
                            "uint8 2D real grey texture (name=camera|brick|grass|gravel, scikit-image's CC0 512^2 "
                            "images) mirrored to the shape; dtype=uint16: the same times 257",
                            {"name", "dtype"}, canonicalise, make_texture);
  k.two_d_only = true;
  return k;
}

}  // namespace repix::datasets::detail
