// seq-flood: Salembier, Oliveras & Garrido 1998, flooding with hierarchical queues, written without
// recursion (the recursion's levels kept as a stack of open levels), then the canonicalisation to
// the normal form (its node representatives are the first pixel reached, not the smallest index).
#include <vector>

#include "core/nvtx.hpp"
#include "maxtree/detail.hpp"
#include "maxtree/variants.hpp"

namespace repix::maxtree {

namespace {

template <class T, class I>
void flood(const T* f, std::int64_t W, std::int64_t H, int connectivity, I* parent) {
  constexpr std::size_t L = detail::levels_of<T>();
  const I n = static_cast<I>(W * H);
  // Hierarchical queues: every pixel is queued once, so level v's FIFO is a fixed segment of one
  // array, [start[v], start[v + 1]), read at head[v] and written at tail[v].
  std::vector<I> start(L + 1, 0), head(L), tail(L), queue(static_cast<std::size_t>(n));
  for (I p = 0; p < n; ++p) ++start[static_cast<std::size_t>(f[p]) + 1];
  for (std::size_t v = 1; v <= L; ++v) start[v] += start[v - 1];
  for (std::size_t v = 0; v < L; ++v) head[v] = tail[v] = start[v];
  std::vector<I> levroot(L, I(-1));  // the representative of the open node at each level
  std::vector<std::uint8_t> seen(static_cast<std::size_t>(n), 0);
  // The open levels, ascending: the recursion of the original algorithm. The top is the level
  // being flooded; each level below it is the node its node will hang from.
  std::vector<std::size_t> open;
  I first = 0;  // a pixel of the lowest level: the root's level stays open to the end
  for (I p = 1; p < n; ++p)
    if (f[p] < f[first]) first = p;
  seen[first] = 1;
  queue[tail[f[first]]++] = first;
  levroot[f[first]] = first;
  open.push_back(f[first]);
  const detail::Rect whole{0, 0, W, H};
  while (!open.empty()) {
    const std::size_t h = open.back();
    bool higher = false;
    while (head[h] != tail[h] && !higher) {
      // The front pixel stays queued until all its neighbours are seen: a higher neighbour is
      // flooded at once (as the recursion does), and the pixel's other neighbours after it.
      const I p = queue[head[h]];
      parent[p] = levroot[h];
      const std::int64_t x = p % W, y = p / W;
      detail::for_each_neighbour(x, y, whole, connectivity, [&](std::int64_t nx, std::int64_t ny) {
        const I q = static_cast<I>(ny * W + nx);
        if (higher || seen[q]) return;
        seen[q] = 1;
        const std::size_t v = f[q];
        queue[tail[v]++] = q;
        if (levroot[v] < 0) {
          levroot[v] = q;
          auto at = open.end();  // sorted insert; a higher level goes on top
          while (at != open.begin() && *(at - 1) > v) --at;
          open.insert(at, v);
        }
        if (v > h) higher = true;
      });
      if (!higher) ++head[h];
    }
    if (higher) continue;
    // Level h is flooded: its node hangs from the highest open level below it.
    open.pop_back();
    const I node = levroot[h];
    parent[node] = open.empty() ? node : levroot[open.back()];
    levroot[h] = -1;
  }
}

}  // namespace

Result run_seq_flood(const HostImage& image, const Options& opt) {
  nvtx::Range range("maxtree/seq-flood");
  return detail::run_typed(image, opt, [&](auto f, auto& parent, Stats& stats) {
    auto t0 = std::chrono::steady_clock::now();
    {
      nvtx::Range r("build");
      flood(f.data, f.shape.nx, f.shape.ny, opt.connectivity, parent.data());
    }
    stats.build_ms = detail::ms_since(t0);
    t0 = std::chrono::steady_clock::now();
    nvtx::Range r("canonical");
    detail::canonicalize(f.data, parent, 1);
    stats.canonical_ms = detail::ms_since(t0);
  });
}

}  // namespace repix::maxtree
