// The maxtree family's shared functions: input checks, the node count and the area opening on a
// parent image in normal form (the area attribute accumulated leaf to root, then the filter root
// to leaf), sequential or OpenMP.
#include <omp.h>

#include <vector>

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

template <class I>
struct Segment {
  I begin, end;   // a range of the level-sorted nodes
  bool parallel;  // one large level: its nodes in parallel; otherwise a run of small levels, in order
};

// Runs fn(node) over the level-sorted nodes `order` (level v: [start[v], start[v + 1])), level by
// level, descending or ascending: each level sees the effects of all levels before it. A level of
// many nodes is shared among the threads; a run of small levels is walked by one of them (a
// barrier per level would cost more than the work at 16 bits).
template <class I, class Fn>
void for_levels(const std::vector<I>& start, const std::vector<I>& order, bool descending, int threads, Fn&& fn) {
  constexpr I kBig = 4096;
  const std::size_t L = start.size() - 1;
  std::vector<Segment<I>> segs;
  for (std::size_t k = 0; k < L; ++k) {
    const std::size_t v = descending ? L - 1 - k : k;
    const I b = start[v], e = start[v + 1];
    if (b == e) continue;
    const bool big = threads > 1 && e - b >= kBig;
    if (!big && !segs.empty() && !segs.back().parallel) {
      if (descending) segs.back().begin = b;
      else segs.back().end = e;
    } else {
      segs.push_back({b, e, big});
    }
  }
  auto walk = [&](const Segment<I>& s) {
    if (descending)
      for (I i = s.end; i-- > s.begin;) fn(order[i]);
    else
      for (I i = s.begin; i < s.end; ++i) fn(order[i]);
  };
  if (threads <= 1) {
    for (const auto& s : segs) walk(s);
    return;
  }
#pragma omp parallel num_threads(threads)
  for (const auto& s : segs) {
    if (s.parallel) {
#pragma omp for schedule(static)
      for (I i = s.begin; i < s.end; ++i) fn(order[i]);
    } else {
#pragma omp single
      walk(s);
    }
  }
}

template <class T, class I>
void area_open_typed(const T* f, const I* parent, I n, std::int64_t A, int threads, T* out) {
  constexpr std::size_t L = detail::levels_of<T>();
  auto canonical = [&](I p) {
    const I q = parent[p];
    return q == p || f[q] != f[p];
  };
  // 1. Proper pixels per node, at its canonical pixel (runs of one node along a row added at once).
  std::vector<std::int64_t> area(static_cast<std::size_t>(n), 0);
#pragma omp parallel num_threads(threads)
  {
    I last = -1;
    std::int64_t count = 0;
#pragma omp for schedule(static)
    for (I p = 0; p < n; ++p) {
      const I c = canonical(p) ? p : parent[p];
      if (c != last) {
        if (last >= 0) __atomic_fetch_add(&area[last], count, __ATOMIC_RELAXED);
        last = c;
        count = 0;
      }
      ++count;
    }
    if (last >= 0) __atomic_fetch_add(&area[last], count, __ATOMIC_RELAXED);
  }
  // 2. The nodes sorted by level (a counting sort, per thread then merged).
  std::vector<I> hist(static_cast<std::size_t>(threads) * L, 0), start(L + 1, 0), order;
#pragma omp parallel num_threads(threads)
  {
    I* h = hist.data() + static_cast<std::size_t>(omp_get_thread_num()) * L;
#pragma omp for schedule(static)
    for (I p = 0; p < n; ++p)
      if (canonical(p)) ++h[f[p]];
#pragma omp single
    {
      I running = 0;
      for (std::size_t v = 0; v < L; ++v) {
        start[v] = running;
        for (int t = 0; t < threads; ++t) {
          const I c = hist[t * L + v];
          hist[t * L + v] = running;
          running += c;
        }
      }
      start[L] = running;
      order.resize(static_cast<std::size_t>(running));
    }
#pragma omp for schedule(static)  // the same split as the count above
    for (I p = 0; p < n; ++p)
      if (canonical(p)) order[static_cast<std::size_t>(h[f[p]]++)] = p;
  }
  // 3. Leaf to root: each node's area into its parent's (children are of higher levels).
  std::int64_t* a = area.data();
  for_levels(start, order, /*descending=*/true, threads, [&](I c) {
    const I q = parent[c];
    if (q != c) __atomic_fetch_add(a + q, a[c], __ATOMIC_RELAXED);
  });
  // 4. Root to leaf: a node's output level is its own if kept (area >= A, or the root), else its
  //    parent's (of a lower level, so already set).
  for_levels(start, order, /*descending=*/false, threads, [&](I c) {
    const I q = parent[c];
    out[c] = (q == c || a[c] >= A) ? f[c] : out[q];
  });
  // 5. Every other pixel: its node's level.
#pragma omp parallel for num_threads(threads) schedule(static)
  for (I p = 0; p < n; ++p)
    if (!canonical(p)) out[p] = out[parent[p]];
}

// Calls fn(f, parent) with the image's element type and the parent image's index type.
template <class Fn>
void visit(const HostImage& image, const ParentImage& parent, Fn&& fn) {
  if (image.shape() != parent.shape) throw Error("internal: parent image shape differs from the image's");
  dispatch_dtype(image.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (sizeof(T) <= 2) {
      if (parent.wide) fn(image.data<T>(), parent.wide_.data());
      else fn(image.data<T>(), parent.narrow.data());
    } else {
      throw Error("maxtree needs a uint8 or uint16 image; got " + dtype_name(image.dtype()));
    }
  });
}

}  // namespace

HostImage area_opening(const HostImage& image, const ParentImage& parent, std::int64_t area, int threads) {
  if (area < 1) throw Error("area opening needs an area threshold >= 1; got " + std::to_string(area));
  HostImage out(image.dtype(), image.shape());
  visit(image, parent, [&](const auto* f, const auto* par) {
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
  visit(image, parent, [&](const auto* f, const auto* par) {
    for (std::int64_t p = 0; p < image.size(); ++p) nodes += par[p] == p || f[par[p]] != f[p];
  });
  return nodes;
}

}  // namespace repix::maxtree
