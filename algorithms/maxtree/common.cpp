// The maxtree family's shared functions: input checks, the node count and the area opening on a
// parent image in normal form (the area attribute accumulated leaf to root, then the filter root
// to leaf), sequential or OpenMP.
#include <omp.h>

#include <vector>

#include "maxtree/area_levels.hpp"
#include "maxtree/detail.hpp"
#include "maxtree/maxtree.hpp"

namespace repix::maxtree {

void check_input(const InputDesc& in, const Options& opt) {
  if (in.shape.ndim != 2)
    throw Error("maxtree needs a 2-D image; got " + std::to_string(in.shape.ndim) + "-D " + in.shape.str());
  if (in.shape.size() == 0) throw Error("maxtree needs a non-empty image; got " + in.shape.str());
  if (in.dtype != DType::u8 && in.dtype != DType::u16)
    throw Error("maxtree needs a uint8 or uint16 image; got " + dtype_name(in.dtype));
  if (opt.connectivity != 4 && opt.connectivity != 8)
    throw Error("maxtree connectivity must be 4 or 8; got " + std::to_string(opt.connectivity));
}

void check_input(const HostImage& image, const Options& opt) { check_input(InputDesc{image.dtype(), image.shape()}, opt); }

void check_area_input(const InputDesc& in, const Options& opt) {
  check_input(in, opt);
  if (opt.area < 1) throw Error("area opening needs an area threshold >= 1; got " + std::to_string(opt.area));
}

void check_area_input(const HostImage& image, const Options& opt) {
  check_area_input(InputDesc{image.dtype(), image.shape()}, opt);
}

namespace {

template <class T, class I>
void area_open_typed(const T* f, const I* parent, I n, std::int64_t A, int threads, T* out) {
  detail::NodeAreas<I> nodes;
  detail::node_areas<T, I>(f, parent, n, threads, nodes);
  detail::area_filter<T, I>(f, parent, n, nodes, A, threads, out, [](I, T&) { return false; });
}

}  // namespace

HostImage area_opening(const HostImage& image, const ParentImage& parent, std::int64_t area, int threads) {
  if (area < 1) throw Error("area opening needs an area threshold >= 1; got " + std::to_string(area));
  HostImage out(image.dtype(), image.shape());
  detail::visit(image, parent, [&](const auto* f, const auto* par) {
    using T = std::decay_t<decltype(*f)>;
    using I = std::decay_t<decltype(*par)>;
    area_open_typed<T, I>(f, par, static_cast<I>(image.size()), area, detail::thread_count(threads), out.data<T>());
  });
  return out;
}

ParentImage normal_form_of(const HostImage& image, const std::vector<std::int64_t>& parent) {
  check_input(image, Options{});
  const std::int64_t n = image.size();
  if (static_cast<std::int64_t>(parent.size()) != n)
    throw Error("the parent image has " + std::to_string(parent.size()) + " entries for " + std::to_string(n) + " pixels");
  ParentImage out;
  out.shape = image.shape();
  out.wide = n >= (std::int64_t(1) << 31);
  dispatch_dtype(image.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (sizeof(T) <= 2) {
      const T* f = image.data<T>();
      for (std::int64_t p = 0; p < n; ++p) {
        const std::int64_t q = parent[static_cast<std::size_t>(p)];
        if (q < 0 || q >= n) throw Error("the parent image points outside the image at pixel " + std::to_string(p));
        if (f[q] > f[p]) throw Error("the parent image has a parent above its child at pixel " + std::to_string(p));
      }
      // Each pixel's level root (the end of its same-level chain), with path compression; a chain
      // longer than n links is a cycle.
      std::vector<std::int64_t> root(static_cast<std::size_t>(n), -1);
      std::vector<std::int64_t> path;
      for (std::int64_t p = 0; p < n; ++p) {
        std::int64_t r = p;
        path.clear();
        while (root[static_cast<std::size_t>(r)] < 0) {
          const std::int64_t q = parent[static_cast<std::size_t>(r)];
          if (q == r || f[q] != f[r]) {
            root[static_cast<std::size_t>(r)] = r;
            break;
          }
          path.push_back(r);
          if (static_cast<std::int64_t>(path.size()) > n)
            throw Error("the parent image has a same-level cycle through pixel " + std::to_string(p));
          r = q;
        }
        r = root[static_cast<std::size_t>(r)];
        for (const std::int64_t c : path) root[static_cast<std::size_t>(c)] = r;
      }
      // The canonical pixel of each node: its smallest index (kept at the level root).
      std::vector<std::int64_t> canon(static_cast<std::size_t>(n), -1);
      for (std::int64_t p = 0; p < n; ++p) {
        std::int64_t& c = canon[static_cast<std::size_t>(root[static_cast<std::size_t>(p)])];
        if (c < 0) c = p;  // p ascending: the first pixel seen is the smallest
      }
      auto write = [&](auto& dst) {
        dst.resize(static_cast<std::size_t>(n));
        for (std::int64_t p = 0; p < n; ++p) {
          const std::int64_t r = root[static_cast<std::size_t>(p)], c = canon[static_cast<std::size_t>(r)];
          std::int64_t v = c;
          if (p == c) {
            const std::int64_t q = parent[static_cast<std::size_t>(r)];
            v = q == r ? c : canon[static_cast<std::size_t>(root[static_cast<std::size_t>(q)])];
          }
          dst[static_cast<std::size_t>(p)] = static_cast<typename std::decay_t<decltype(dst)>::value_type>(v);
        }
      };
      if (out.wide) write(out.wide_);
      else write(out.narrow);
    }
  });
  return out;
}

std::int64_t count_nodes(const HostImage& image, const ParentImage& parent) {
  std::int64_t nodes = 0;
  detail::visit(image, parent, [&](const auto* f, const auto* par) {
    for (std::int64_t p = 0; p < image.size(); ++p) nodes += par[p] == p || f[par[p]] != f[p];
  });
  return nodes;
}

}  // namespace repix::maxtree
