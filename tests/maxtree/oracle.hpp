// A brute-force max-tree and area opening, independent of union-find and flooding: for each level
// v present in the image, the connected components of {f >= v} are labelled by breadth-first
// search; a component holding a pixel of value v is a node (canonical pixel: the smallest such
// index; area: the component's size). A pixel's node is the one of its own level; a node's parent
// is the node of the highest level below v whose component contains it. O(levels x pixels).
#pragma once
#include <algorithm>
#include <cstdint>
#include <deque>
#include <vector>

#include "core/image.hpp"

namespace repix::test {
inline namespace maxtree_tests {

class MaxtreeOracle {
 public:
  MaxtreeOracle(const HostImage& img, int connectivity) : nx_(img.shape().nx), ny_(img.shape().ny), n_(img.size()) {
    f_.resize(static_cast<std::size_t>(n_));
    visit_image(img, [&](auto v) {
      for (std::int64_t i = 0; i < n_; ++i) f_[i] = static_cast<std::uint32_t>(v.data[i]);
    });
    levels_ = f_;
    std::sort(levels_.begin(), levels_.end());
    levels_.erase(std::unique(levels_.begin(), levels_.end()), levels_.end());
    for (const std::uint32_t v : levels_) {
      Level L;
      L.label.assign(static_cast<std::size_t>(n_), -1);
      for (std::int64_t s = 0; s < n_; ++s) {
        if (f_[s] < v || L.label[s] >= 0) continue;
        const std::int64_t id = static_cast<std::int64_t>(L.size.size());
        std::int64_t size = 0, canonical = -1;
        std::deque<std::int64_t> q{s};
        L.label[s] = id;
        while (!q.empty()) {
          const std::int64_t p = q.front();
          q.pop_front();
          ++size;
          if (f_[p] == v && (canonical < 0 || p < canonical)) canonical = p;
          const std::int64_t x = p % nx_, y = p / nx_;
          for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx) {
              if ((dx == 0 && dy == 0) || (connectivity == 4 && dx != 0 && dy != 0)) continue;
              const std::int64_t X = x + dx, Y = y + dy;
              if (X < 0 || Y < 0 || X >= nx_ || Y >= ny_) continue;
              const std::int64_t r = Y * nx_ + X;
              if (f_[r] >= v && L.label[r] < 0) {
                L.label[r] = id;
                q.push_back(r);
              }
            }
        }
        L.size.push_back(size);
        L.canonical.push_back(canonical);  // -1: no pixel of value v, no node here
      }
      by_level_.push_back(std::move(L));
    }
  }

  // The normal-form parent image.
  std::vector<std::int64_t> parent() const {
    std::vector<std::int64_t> out(static_cast<std::size_t>(n_));
    for (std::int64_t p = 0; p < n_; ++p) {
      const std::size_t k = level_index(f_[p]);
      const std::int64_t c = node(k, p);
      if (p != c) {
        out[p] = c;
        continue;
      }
      out[p] = p;  // the root unless a lower node contains it
      for (std::size_t j = k; j-- > 0;)
        if (node(j, p) >= 0) {
          out[p] = node(j, p);
          break;
        }
    }
    return out;
  }

  // The area opening (the root, the lowest level, always kept).
  std::vector<std::uint32_t> area_opening(std::int64_t area) const {
    std::vector<std::uint32_t> out(static_cast<std::size_t>(n_));
    for (std::int64_t p = 0; p < n_; ++p) {
      std::size_t k = level_index(f_[p]);
      while (k > 0 && (node(k, p) < 0 || by_level_[k].size[by_level_[k].label[p]] < area)) --k;
      out[p] = levels_[k];
    }
    return out;
  }

  std::int64_t nodes() const {
    std::int64_t c = 0;
    for (const Level& L : by_level_)
      for (const std::int64_t canonical : L.canonical) c += canonical >= 0;
    return c;
  }

 private:
  struct Level {
    std::vector<std::int64_t> label, size, canonical;
  };
  std::size_t level_index(std::uint32_t v) const {
    return static_cast<std::size_t>(std::lower_bound(levels_.begin(), levels_.end(), v) - levels_.begin());
  }
  // The canonical pixel of the node at level index k containing p, or -1 (no node there).
  std::int64_t node(std::size_t k, std::int64_t p) const {
    return by_level_[k].canonical[static_cast<std::size_t>(by_level_[k].label[p])];
  }
  std::int64_t nx_, ny_, n_;
  std::vector<std::uint32_t> f_, levels_;
  std::vector<Level> by_level_;
};

// An image's values widened, to compare with the oracle's.
inline std::vector<std::uint32_t> values_of(const HostImage& img) {
  std::vector<std::uint32_t> v(static_cast<std::size_t>(img.size()));
  visit_image(img, [&](auto view) {
    for (std::int64_t i = 0; i < img.size(); ++i) v[i] = static_cast<std::uint32_t>(view.data[i]);
  });
  return v;
}

}  // namespace maxtree_tests
}  // namespace repix::test
