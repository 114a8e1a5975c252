// The GPU area opening's per-thread cores (algorithms/maxtree/area_core.hpp) run on the CPU, pass by
// pass as gpu_engine.cuh's area_filter launches them: on seq's normal form, with the leaves' climbs
// in order, shuffled, and from several real threads at once, then the links and the pointer jumping
// between two buffers. Every outcome must equal maxtree::area_opening (itself tested against the
// brute-force oracle) for thresholds from 1 to above the image's area.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <thread>
#include <vector>

#include "maxtree/area_core.hpp"
#include "maxtree/gpu_core.hpp"
#include "maxtree/maxtree.hpp"
#include "maxtree/test_images.hpp"

namespace repix::maxtree {
namespace {

// The CPU's atomics for the cores' Mem parameter (sequentially consistent: at least the GPU's
// fenced adds and relaxed loads).
template <class I>
struct HostAdds {
  I add(I* p, I v) const { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
  I load(const I* p) const { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
};

enum class Climbs { in_order, shuffled, threads };

template <class T, class I>
HostImage gpu_area_opening(const HostImage& image, const ParentImage& normal, std::int64_t min_area, Climbs how,
                           std::uint64_t seed) {
  const T* f = image.data<T>();
  const I* par = normal.narrow.data();
  const I n = static_cast<I>(image.size());
  std::vector<I> area(static_cast<std::size_t>(n), 0), pending(static_cast<std::size_t>(n), 0);
  const HostAdds<I> mem;
  for (I p = 0; p < n; ++p) area_core::own_area(f, par, area.data(), pending.data(), p, mem);
  for (I p = 0; p < n; ++p) area_core::mark_leaf(f, par, pending.data(), p);
  std::vector<I> leaves;
  for (I p = 0; p < n; ++p)
    if (area_core::is_leaf(f, par, pending.data(), p, mem)) leaves.push_back(p);
  EXPECT_FALSE(leaves.empty());
  std::mt19937_64 rng(seed);
  if (how != Climbs::in_order) std::shuffle(leaves.begin(), leaves.end(), rng);
  if (how == Climbs::threads) {
    constexpr int kThreads = 4;
    std::vector<std::thread> pool;
    for (int t = 0; t < kThreads; ++t)
      pool.emplace_back([&, t] {
        for (std::size_t k = static_cast<std::size_t>(t); k < leaves.size(); k += kThreads)
          area_core::accumulate_from_leaf(par, area.data(), pending.data(), leaves[k], mem);
      });
    for (std::thread& th : pool) th.join();
  } else {
    for (const I c : leaves) area_core::accumulate_from_leaf(par, area.data(), pending.data(), c, mem);
  }
  // Every count spent: each node's children all came, and the root has the image's area.
  for (I p = 0; p < n; ++p) {
    if (gpu_core::same_level_parent(f, par, p) != p) continue;
    EXPECT_TRUE(pending[static_cast<std::size_t>(p)] == 0 || pending[static_cast<std::size_t>(p)] == area_core::leaf_mark<I>())
        << "node " << p;
    if (par[p] == p) EXPECT_EQ(area[static_cast<std::size_t>(p)], n) << "the root's area";
  }
  // The links, then pointer jumping between two buffers until a round changes nothing.
  std::vector<I> cur(static_cast<std::size_t>(n)), next(static_cast<std::size_t>(n));
  for (I p = 0; p < n; ++p) cur[static_cast<std::size_t>(p)] = area_core::filter_link(f, par, area.data(), p, min_area);
  for (bool changed = true; changed;) {
    changed = false;
    for (I p = 0; p < n; ++p) {
      next[static_cast<std::size_t>(p)] = gpu_core::jump(cur.data(), p);
      changed |= next[static_cast<std::size_t>(p)] != cur[static_cast<std::size_t>(p)];
    }
    std::swap(cur, next);
  }
  HostImage out(image.dtype(), image.shape());
  for (I p = 0; p < n; ++p) out.data<T>()[p] = f[cur[static_cast<std::size_t>(p)]];
  return out;
}

bool same_pixels(const HostImage& a, const HostImage& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::equal(static_cast<const unsigned char*>(a.raw()), static_cast<const unsigned char*>(a.raw()) + a.bytes(),
                    static_cast<const unsigned char*>(b.raw()));
}

template <class T>
void check_area_steps(const test::Input& in, std::uint64_t seed) {
  const std::int64_t n = in.image.size();
  for (const int c : {4, 8}) {
    Options o;
    o.connectivity = c;
    const ParentImage normal = find_variant("seq").run(in.image, o).parent;
    ASSERT_FALSE(normal.wide);
    for (const std::int64_t a : {std::int64_t(1), std::int64_t(2), std::int64_t(5), std::int64_t(40), n / 2, n, n + 1}) {
      if (a < 1) continue;
      const HostImage want = area_opening(in.image, normal, a, 1);
      for (const Climbs how : {Climbs::in_order, Climbs::shuffled, Climbs::threads})
        ASSERT_TRUE(same_pixels(gpu_area_opening<T, std::int32_t>(in.image, normal, a, how, seed), want))
            << in.name << ", connectivity " << c << ", A = " << a << ", climbs " << static_cast<int>(how);
    }
  }
}

TEST(MaxtreeAreaCore, EveryStepAsTheGpuRunsItEqualsTheAreaOpening) {
  for (const std::uint64_t seed : {3u, 4u}) {
    std::vector<test::Input> inputs = test::small_inputs(seed);
    inputs.push_back({"u8-4levels-130x70", test::random_image(DType::u8, 130, 70, 4, seed + 10)});
    inputs.push_back({"u16-full-90x50", test::random_image(DType::u16, 90, 50, 65536, seed + 11)});
    inputs.push_back({"const-u16-40x40", test::const_image(DType::u16, 40, 40, 7)});
    for (const test::Input& in : inputs) {
      if (in.image.dtype() == DType::u8) check_area_steps<std::uint8_t>(in, seed);
      else check_area_steps<std::uint16_t>(in, seed);
    }
  }
}

// A node is climbed by exactly one thread, its last child's: on a deep chain (a ramp: every pixel
// its own node, each the only child of the one below) the climb from the single leaf adds up the
// whole image, and the counts all end spent.
TEST(MaxtreeAreaCore, RampIsOneClimbFromItsOnlyLeaf) {
  HostImage ramp(DType::u16, Shape::d2(300, 1));
  for (int x = 0; x < 300; ++x) ramp.data<std::uint16_t>()[x] = static_cast<std::uint16_t>(x * 100);
  const ParentImage normal = find_variant("seq").run(ramp, Options{}).parent;
  const std::uint16_t* f = ramp.data<std::uint16_t>();
  std::vector<std::int32_t> area(300, 0), pending(300, 0);
  const HostAdds<std::int32_t> mem;
  for (std::int32_t p = 0; p < 300; ++p) area_core::own_area(f, normal.narrow.data(), area.data(), pending.data(), p, mem);
  for (std::int32_t p = 0; p < 300; ++p) area_core::mark_leaf(f, normal.narrow.data(), pending.data(), p);
  int leaves = 0;
  for (std::int32_t p = 0; p < 300; ++p) leaves += area_core::is_leaf(f, normal.narrow.data(), pending.data(), p, mem);
  EXPECT_EQ(leaves, 1);
  area_core::accumulate_from_leaf(normal.narrow.data(), area.data(), pending.data(), 299, mem);
  for (std::int32_t p = 0; p < 300; ++p) EXPECT_EQ(area[static_cast<std::size_t>(p)], 300 - p) << "pixel " << p;
  EXPECT_EQ(area_opening(ramp, normal, 150, 1).data<std::uint16_t>()[299], 150 * 100);
}

}  // namespace
}  // namespace repix::maxtree
