// The merge of row parts' max-trees (parts.hpp).
#include "maxtree/parts.hpp"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <type_traits>
#include <unordered_set>

#include "core/error.hpp"
#include "maxtree/area_levels.hpp"
#include "maxtree/detail.hpp"

namespace repix::maxtree::parts {

// ---- Border's bytes: a header of int64s, then the nodes and the edge rows -----------------------

namespace {

class Writer {
 public:
  template <class T>
  void put(const T& v) {
    const char* p = reinterpret_cast<const char*>(&v);
    bytes.insert(bytes.end(), p, p + sizeof v);
  }
  template <class T>
  void put_all(const std::vector<T>& v) {
    put(static_cast<std::int64_t>(v.size()));
    const char* p = reinterpret_cast<const char*>(v.data());
    bytes.insert(bytes.end(), p, p + v.size() * sizeof(T));
  }
  std::vector<char> bytes;
};

class Reader {
 public:
  explicit Reader(const std::vector<char>& b) : b_(b) {}
  template <class T>
  T get() {
    T v;
    take(&v, sizeof v);
    return v;
  }
  template <class T>
  std::vector<T> get_all() {
    const std::int64_t n = get<std::int64_t>();
    if (n < 0 || static_cast<std::uint64_t>(n) > (b_.size() - at_) / sizeof(T)) fail();
    std::vector<T> v(static_cast<std::size_t>(n));
    take(v.data(), v.size() * sizeof(T));
    return v;
  }
  bool done() const { return at_ == b_.size(); }
  [[noreturn]] static void fail() { throw Error("internal: a max-tree part's border arrived damaged"); }

 private:
  void take(void* dst, std::size_t n) {
    if (n > b_.size() - at_) fail();
    std::memcpy(dst, b_.data() + at_, n);
    at_ += n;
  }
  const std::vector<char>& b_;
  std::size_t at_ = 0;
};

}  // namespace

std::vector<char> Border::bytes() const {
  Writer w;
  w.put(first_row);
  w.put(last_row);
  w.put(width);
  w.put_all(nodes);
  w.put_all(top);
  w.put_all(bottom);
  return std::move(w.bytes);
}

Border Border::from_bytes(const std::vector<char>& bytes) {
  Reader r(bytes);
  Border b;
  b.first_row = r.get<std::int64_t>();
  b.last_row = r.get<std::int64_t>();
  b.width = r.get<std::int64_t>();
  b.nodes = r.get_all<BorderNode>();
  b.top = r.get_all<std::int64_t>();
  b.bottom = r.get_all<std::int64_t>();
  if (!r.done() || b.width < 1 || b.first_row >= b.last_row) Reader::fail();
  return b;
}

// ---- merge: the max-tree of the border graph ----------------------------------------------------

Merged merge(const std::vector<Border>& borders, int connectivity, std::int64_t min_area) {
  using Slot = std::size_t;
  Merged m;
  // The vertices: every part's border nodes.
  std::vector<BorderNode> node;
  for (const Border& b : borders)
    for (const BorderNode& n : b.nodes) {
      if (!m.slot.emplace(n.id, node.size()).second)
        throw Error("internal: max-tree border node " + std::to_string(n.id) + " came from two parts");
      node.push_back(n);
    }
  const Slot count = node.size();
  auto slot_of = [&](std::int64_t id) {
    const auto it = m.slot.find(id);
    if (it == m.slot.end()) throw Error("internal: max-tree node " + std::to_string(id) + " is not a border node");
    return it->second;
  };
  // The edges: each border node to its parent in its part, and the facing pixels of neighbouring
  // parts' edge rows (straight across, and diagonally at 8-connectivity).
  std::vector<std::pair<Slot, Slot>> edges;
  std::vector<Slot> part_parent(count);  // its own slot at its part's root
  for (Slot k = 0; k < count; ++k) {
    part_parent[k] = node[k].parent == node[k].id ? k : slot_of(node[k].parent);
    if (part_parent[k] != k) edges.emplace_back(k, part_parent[k]);
  }
  for (std::size_t i = 0; i + 1 < borders.size(); ++i) {
    const Border &up = borders[i], &down = borders[i + 1];
    const std::size_t w = static_cast<std::size_t>(up.width);
    if (up.last_row != down.first_row || down.width != up.width || up.bottom.size() != w || down.top.size() != w)
      throw Error("internal: max-tree parts rows [" + std::to_string(up.first_row) + ", " +
                  std::to_string(up.last_row) + ") and [" + std::to_string(down.first_row) + ", " +
                  std::to_string(down.last_row) + ") do not meet");
    for (std::size_t x = 0; x < w; ++x) {
      const Slot a = slot_of(up.bottom[x]);
      edges.emplace_back(a, slot_of(down.top[x]));
      if (connectivity == 8) {
        if (x > 0) edges.emplace_back(a, slot_of(down.top[x - 1]));
        if (x + 1 < w) edges.emplace_back(a, slot_of(down.top[x + 1]));
      }
    }
  }
  // Adjacency lists (CSR).
  std::vector<Slot> first(count + 1, 0), next(edges.size() * 2);
  for (const auto& [a, b] : edges) {
    ++first[a + 1];
    ++first[b + 1];
  }
  std::partial_sum(first.begin(), first.end(), first.begin());
  {
    std::vector<Slot> fill(first.begin(), first.end() - 1);
    for (const auto& [a, b] : edges) {
      next[fill[a]++] = b;
      next[fill[b]++] = a;
    }
  }
  // Berger et al.'s union-find, levels descending (ties by id: the same order on every rank).
  auto lv = [&](Slot v) { return node[v].level; };
  std::vector<Slot> order(count);
  std::iota(order.begin(), order.end(), Slot(0));
  std::sort(order.begin(), order.end(),
            [&](Slot a, Slot b) { return lv(a) != lv(b) ? lv(a) > lv(b) : node[a].id < node[b].id; });
  constexpr Slot kUnseen = ~Slot(0);
  std::vector<Slot> par(count, kUnseen), zpar(count, kUnseen);
  auto find = [&](Slot v) {
    while (zpar[v] != v) {
      zpar[v] = zpar[zpar[v]];  // path halving
      v = zpar[v];
    }
    return v;
  };
  for (const Slot v : order) {
    par[v] = zpar[v] = v;
    for (Slot e = first[v]; e < first[v + 1]; ++e) {
      const Slot u = next[e];
      if (zpar[u] == kUnseen) continue;  // not yet processed (a lower level)
      const Slot r = find(u);
      if (r != v) par[r] = zpar[r] = v;
    }
  }
  // Canonical form, root first: each vertex points to its node's level root, a level root to its
  // parent node's (the last-processed vertex of a node is its level root).
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Slot& p = par[*it];
    if (lv(par[p]) == lv(p)) p = par[p];
  }
  auto level_root = [&](Slot v) { return lv(par[v]) == lv(v) ? par[v] : v; };
  // Per node (at its level root): the smallest id, the area its border nodes add (each its part's
  // subtree less its border children's), then its subtree's, children (higher levels) first.
  std::vector<std::int64_t> smallest(count, -1), total(count, 0), adds(count);
  for (Slot k = 0; k < count; ++k) adds[k] = node[k].area;
  for (Slot k = 0; k < count; ++k)
    if (part_parent[k] != k) adds[part_parent[k]] -= node[k].area;
  for (Slot k = 0; k < count; ++k) {
    const Slot r = level_root(k);
    if (smallest[r] < 0 || node[k].id < smallest[r]) smallest[r] = node[k].id;
    total[r] += adds[k];
  }
  for (const Slot v : order) {
    if (level_root(v) != v) continue;
    ++m.nodes;
    if (par[v] != v) total[par[v]] += total[v];
  }
  std::vector<std::uint32_t> kept(min_area > 0 ? count : 0);
  if (min_area > 0)
    for (auto it = order.rbegin(); it != order.rend(); ++it) {  // parents (lower levels) first
      const Slot v = *it;
      if (level_root(v) != v) continue;
      kept[v] = (par[v] == v || total[v] >= min_area) ? lv(v) : kept[par[v]];
    }
  m.canonical.resize(count);
  m.parent.resize(count);
  m.area.resize(count);
  if (min_area > 0) m.kept.resize(count);
  for (Slot k = 0; k < count; ++k) {
    const Slot r = level_root(k);
    m.canonical[k] = smallest[r];
    m.parent[k] = smallest[par[r]];
    m.area[k] = total[r];
    if (min_area > 0) m.kept[k] = kept[r];
  }
  return m;
}

// ---- PartTree -----------------------------------------------------------------------------------

struct PartTree::Impl {
  const HostImage* rows_ = nullptr;
  ParentImage parent;
  std::int64_t first_row = 0, image_rows = 0, width = 0, offset = 0;
  detail::NodeAreas<std::int32_t> areas32;
  detail::NodeAreas<std::int64_t> areas64;
  bool with_areas = false;

  const HostImage& rows() const {
    if (!rows_) throw Error("internal: a part's tree used before it was built");
    return *rows_;
  }

  // fn(f, par, areas) with the image's element type and the part's index type (`self` const or
  // not: build() fills the areas).
  template <class Self, class Fn>
  static void visit(Self& self, Fn&& fn) {
    detail::visit(self.rows(), self.parent, [&](const auto* f, const auto* par) {
      if constexpr (sizeof(*par) == sizeof(std::int64_t)) fn(f, par, self.areas64);
      else fn(f, par, self.areas32);
    });
  }
};

namespace {

// p's node: its canonical pixel (the normal form's same-level parent, or p).
template <class T, class I>
inline I node_of(const T* f, const I* par, I p) {
  const I q = par[p];
  return (q != p && f[q] == f[p]) ? q : p;
}

// Which of the part's pixels are border nodes' canonical pixels (one bit a pixel), for the passes
// over every pixel: most pixels' nodes are not, and a bit test spares them the hash look-up.
class BorderBits {
 public:
  BorderBits(const Merged& m, std::int64_t offset, std::int64_t n) : bits_((n + 63) / 64, 0) {
    for (const auto& [node, k] : m.slot) {
      (void)k;
      const std::int64_t p = node - offset;
      if (p >= 0 && p < n) {
        bits_[static_cast<std::size_t>(p >> 6)] |= std::uint64_t(1) << (p & 63);
        any_ = true;
      }
    }
  }
  bool has(std::int64_t p) const { return (bits_[static_cast<std::size_t>(p >> 6)] >> (p & 63)) & 1; }
  bool empty() const { return !any_; }

 private:
  std::vector<std::uint64_t> bits_;
  bool any_ = false;
};

}  // namespace

PartTree::PartTree() : impl_(new Impl) {}

void PartTree::build(const HostImage& rows, ParentImage parent, std::int64_t first_row, std::int64_t image_rows,
                     bool with_areas, int threads) {
  if (parent.shape != rows.shape()) throw Error("internal: a part's parent image differs from its rows in shape");
  Impl& d = *impl_;
  d.rows_ = &rows;
  d.parent = std::move(parent);
  d.first_row = first_row;
  d.image_rows = image_rows;
  d.width = rows.shape().nx;
  d.offset = first_row * d.width;
  d.with_areas = with_areas;
  if (!with_areas) return;
  const int t = detail::thread_count(threads);
  Impl::visit(d, [&](const auto* f, const auto* par, auto& areas) {
    using I = std::decay_t<decltype(*par)>;
    using T = std::decay_t<decltype(*f)>;
    detail::node_areas<T, I>(f, par, static_cast<I>(rows.size()), t, areas);
  });
}

PartTree::~PartTree() = default;
PartTree::PartTree(PartTree&&) noexcept = default;
PartTree& PartTree::operator=(PartTree&&) noexcept = default;

Border PartTree::border() const {
  const Impl& d = *impl_;
  Border b;
  b.first_row = d.first_row;
  b.last_row = d.first_row + d.rows().shape().ny;
  b.width = d.width;
  Impl::visit(d, [&](const auto* f, const auto* par, const auto& areas) {
    using I = std::decay_t<decltype(*par)>;
    std::unordered_set<I> seen;
    auto climb = [&](I p) {
      I c = node_of(f, par, p);
      const std::int64_t id = c + d.offset;
      for (;;) {
        if (!seen.insert(c).second) break;
        const I q = par[c];
        b.nodes.push_back({c + d.offset, q + d.offset, d.with_areas ? areas.area[static_cast<std::size_t>(c)] : 0,
                           static_cast<std::uint32_t>(f[c])});
        if (q == c) break;
        c = q;
      }
      return id;
    };
    const I w = static_cast<I>(d.width), last = static_cast<I>(d.rows().size()) - w;
    if (b.first_row > 0)
      for (I x = 0; x < w; ++x) b.top.push_back(climb(x));
    if (b.last_row < d.image_rows)
      for (I x = 0; x < w; ++x) b.bottom.push_back(climb(last + x));
  });
  return b;
}

void PartTree::whole_image_parents(const Merged& m, int threads, ParentImage& out) const {
  const Impl& d = *impl_;
  const std::int64_t n = d.rows().size(), off = d.offset;
  const BorderBits border(m, off, n);
  out.shape = d.rows().shape();
  out.wide = d.width * d.image_rows >= (std::int64_t(1) << 31);
  const int t = detail::thread_count(threads);
  Impl::visit(d, [&](const auto*, const auto* par, const auto&) {
    using I = std::decay_t<decltype(*par)>;
    auto fill = [&](auto& dst) {
      using O = std::decay_t<decltype(dst[0])>;
      dst.resize(static_cast<std::size_t>(n));
      O* o = dst.data();
      if (border.empty()) {  // one part alone: its tree is the whole image's
#pragma omp parallel for num_threads(t) schedule(static)
        for (std::int64_t p = 0; p < n; ++p) o[p] = static_cast<O>(par[p] + off);
        return;
      }
#pragma omp parallel num_threads(t)
      {
        // The last border node looked up: a node's pixels come in runs along a row, and the
        // root's alone can be a good part of the image.
        I cached = -1;
        std::size_t cached_slot = 0;
        auto slot = [&](I node) {
          if (node != cached) {
            cached = node;
            cached_slot = m.slot.at(node + off);
          }
          return cached_slot;
        };
        // No level is read: a border node's ancestors are border nodes, so
        // - p a border node's canonical pixel: its node's place in the whole image's tree;
        // - else p's parent q a border node (p a pixel of that node, or the canonical pixel of a
        //   child node inside the part): q's node's canonical pixel in the whole image;
        // - else p and q inside the part: q, as an index of the whole image.
#pragma omp for schedule(static)
        for (std::int64_t p = 0; p < n; ++p) {
          const I q = par[p];
          std::int64_t v;
          if (border.has(p)) {
            const std::size_t k = slot(static_cast<I>(p));
            const std::int64_t canon = m.canonical[k];
            v = canon == p + off ? m.parent[k] : canon;
          } else if (border.has(q)) {
            v = m.canonical[slot(q)];
          } else {
            v = q + off;
          }
          o[p] = static_cast<O>(v);
        }
      }
    };
    if (out.wide) fill(out.wide_);
    else fill(out.narrow);
  });
}

void PartTree::area_opening(const Merged& m, std::int64_t min_area, int threads, HostImage& out) const {
  const Impl& d = *impl_;
  if (!d.with_areas) throw Error("internal: a part's area opening without its areas");
  if (min_area < 1) throw Error("area opening needs an area threshold >= 1; got " + std::to_string(min_area));
  if (m.kept.size() != m.canonical.size()) throw Error("internal: a part's area opening without the merged levels");
  const std::int64_t n = d.rows().size(), off = d.offset;
  const BorderBits border(m, off, n);
  if (out.dtype() != d.rows().dtype() || out.shape() != d.rows().shape()) out = HostImage(d.rows().dtype(), d.rows().shape());
  Impl::visit(d, [&](const auto* f, const auto* par, const auto& areas) {
    using I = std::decay_t<decltype(*par)>;
    using T = std::decay_t<decltype(*f)>;
    detail::area_filter<T, I>(f, par, static_cast<I>(n), areas, min_area, detail::thread_count(threads), out.data<T>(),
                              [&](I c, T& level) {
                                if (!border.has(c)) return false;
                                level = static_cast<T>(m.kept[m.slot.at(c + off)]);
                                return true;
                              });
  });
}

std::int64_t PartTree::nodes() const { return count_nodes(impl_->rows(), impl_->parent); }

}  // namespace repix::maxtree::parts
