// pinned_host_pool() (core/pinned_pool.hpp) on the device: blocks of at least kPinnedPoolMinBytes
// pinned (a DMA target), a released block served again for the same size, smaller requests and
// foreign pointers left to the heap; a device-to-host copy into a pool-backed vector.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "core/download.hpp"
#include "core/gpu.hpp"
#include "core/pinned_pool.hpp"

namespace repix {
namespace {

TEST(PinnedPool, WithoutAGpuServesNothing) {
  if (gpu_available()) GTEST_SKIP() << "a GPU is here: the pool serves";
  EXPECT_EQ(pinned_host_pool().allocate(kPinnedPoolMinBytes), nullptr);
}

class PinnedPoolOnTheGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpu_available()) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason();
  }
};

TEST_F(PinnedPoolOnTheGpu, PinsLargeBlocksAndServesAReleasedOneAgain) {
  HostMemorySource& pool = pinned_host_pool();
  const std::size_t bytes = kPinnedPoolMinBytes + 4096 * 3 + 5;  // a size no other test asks for
  const PinnedPoolCounters before = pinned_pool_counters();
  void* a = pool.allocate(bytes);
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(is_pinned(a));
  EXPECT_EQ(pinned_pool_counters().pinned, before.pinned + 1);
  void* b = pool.allocate(bytes);  // a is live: another block
  ASSERT_NE(b, nullptr);
  EXPECT_NE(a, b);
  EXPECT_TRUE(pool.release(a, bytes));
  EXPECT_GE(pinned_pool_counters().cached_bytes, bytes);
  EXPECT_EQ(pool.allocate(bytes), a);  // back from the cache, not pinned again
  EXPECT_EQ(pinned_pool_counters().pinned, before.pinned + 2);
  EXPECT_EQ(pinned_pool_counters().reused, before.reused + 1);
  EXPECT_TRUE(pool.release(a, bytes));
  EXPECT_TRUE(pool.release(b, bytes));
  EXPECT_FALSE(pool.release(a, bytes)) << "a block released twice";
}

TEST_F(PinnedPoolOnTheGpu, LeavesSmallRequestsAndForeignPointersToTheHeap) {
  HostMemorySource& pool = pinned_host_pool();
  EXPECT_EQ(pool.allocate(kPinnedPoolMinBytes - 1), nullptr);
  std::vector<unsigned char> heap(64);
  EXPECT_FALSE(pool.release(heap.data(), heap.size()));
}

TEST_F(PinnedPoolOnTheGpu, AVectorOnThePoolTakesADeviceCopy) {
  const std::size_t n = kPinnedPoolMinBytes / sizeof(std::int32_t) + 1001;
  std::vector<std::int32_t> want(n);
  std::iota(want.begin(), want.end(), -17);
  DeviceBuffer<std::int32_t> d(n);
  copy_to_device_sync(d.get(), want.data(), n * sizeof(std::int32_t));
  UninitializedVector<std::int32_t> v{DefaultInitAllocator<std::int32_t>(&pinned_host_pool())};
  v.resize(n);
  ASSERT_TRUE(is_pinned(v.data()));
  CudaStream s;
  download(v.data(), d.get(), n * sizeof(std::int32_t), s.get());
  EXPECT_TRUE(std::equal(want.begin(), want.end(), v.begin()));
}

}  // namespace
}  // namespace repix
