// core/gpu/union_find.hpp on the CPU, concurrently: many OpenMP threads join random pairs of one
// shared parent array at once (the same code the GPU runs, with GCC's atomics), and every element
// must end under its component's smallest index, as a sequential union-find says; the parents
// must only ever point to smaller indices (no cycle can form).
#include <gtest/gtest.h>
#include <omp.h>

#include <cstdint>
#include <numeric>
#include <random>
#include <utility>
#include <vector>

#include "core/gpu/union_find.hpp"

namespace repix {
namespace {

// The smallest index of each element's component, sequentially.
template <class I>
std::vector<I> reference_roots(std::size_t n, const std::vector<std::pair<I, I>>& edges) {
  std::vector<I> p(n);
  std::iota(p.begin(), p.end(), I(0));
  auto find = [&](I x) {
    while (p[x] != x) x = p[x] = p[p[x]];
    return x;
  };
  for (const auto& [a, b] : edges) {
    const I ra = find(a), rb = find(b);
    if (ra != rb) p[std::max(ra, rb)] = std::min(ra, rb);
  }
  std::vector<I> roots(n);
  for (std::size_t i = 0; i < n; ++i) roots[i] = find(static_cast<I>(i));
  return roots;
}

template <class I>
void check_concurrent_unions(std::size_t n, std::size_t edges_count, std::uint32_t seed, int threads) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::uint64_t> pick(0, n - 1);
  std::vector<std::pair<I, I>> edges(edges_count);
  for (auto& e : edges) e = {static_cast<I>(pick(rng)), static_cast<I>(pick(rng))};
  std::vector<I> parent(n);
  std::iota(parent.begin(), parent.end(), I(0));
  const auto m = static_cast<std::int64_t>(edges.size());
#pragma omp parallel for num_threads(threads) schedule(dynamic, 64)
  for (std::int64_t i = 0; i < m; ++i) gpu::uf_union(parent.data(), edges[i].first, edges[i].second);
  for (std::size_t i = 0; i < n; ++i) ASSERT_LE(parent[i], static_cast<I>(i)) << "parent above its child at " << i;
  const std::vector<I> want = reference_roots(n, edges);
  for (std::size_t i = 0; i < n; ++i)
    ASSERT_EQ(gpu::uf_find(parent.data(), static_cast<I>(i)), want[i]) << "element " << i << " seed " << seed;
}

TEST(UnionFind, ConcurrentUnionsGiveEachSetItsSmallestIndex) {
  const int threads = std::max(4, omp_get_max_threads());
  for (std::uint32_t seed = 1; seed <= 20; ++seed) {
    // Sparse (many sets), around the giant component's threshold, dense (one set).
    check_concurrent_unions<std::int32_t>(5000, 1500, seed, threads);
    check_concurrent_unions<std::uint32_t>(5000, 2600, seed + 100, threads);
    check_concurrent_unions<std::int64_t>(3000, 20000, seed + 200, threads);
  }
}

TEST(UnionFind, ChainsAndStarsBuiltFromBothEnds) {
  // A chain joined from both ends at once and a star onto its last element: long paths that the
  // finds must halve while other threads relink them.
  const std::size_t n = 20000;
  std::vector<std::pair<std::int32_t, std::int32_t>> edges;
  for (std::int32_t i = 1; i < static_cast<std::int32_t>(n / 2); ++i) edges.push_back({i, i - 1});
  for (std::int32_t i = static_cast<std::int32_t>(n) - 1; i > static_cast<std::int32_t>(n / 2); --i)
    edges.push_back({i - 1, i});
  edges.push_back({0, static_cast<std::int32_t>(n) - 1});
  std::vector<std::int32_t> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  const auto m = static_cast<std::int64_t>(edges.size());
#pragma omp parallel for num_threads(std::max(4, omp_get_max_threads())) schedule(static, 1)
  for (std::int64_t i = 0; i < m; ++i) gpu::uf_union(parent.data(), edges[i].first, edges[i].second);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(gpu::uf_find(parent.data(), static_cast<std::int32_t>(i)), 0) << i;
}

TEST(UnionFind, FindHalvesPaths) {
  // 0 <- 1 <- 2 <- ... <- 9: a find from 9 reaches 0 and leaves 9 pointing at least two up.
  std::vector<std::int32_t> parent(10);
  for (std::int32_t i = 0; i < 10; ++i) parent[i] = i == 0 ? 0 : i - 1;
  EXPECT_EQ(gpu::uf_find(parent.data(), 9), 0);
  EXPECT_LE(parent[9], 7);
  for (std::int32_t i = 1; i < 10; ++i) EXPECT_LT(parent[i], i);
}

}  // namespace
}  // namespace repix
