// core/gpu's block primitives on the GPU against the host: BlockHistogram over a window smaller
// than the bins (spills to global atomics), BlockHash with more distinct keys than its slots
// (probe failures go to the caller), and union_find.hpp's unions from many GPU threads at once.
// Skips where there is no GPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <numeric>
#include <random>
#include <vector>

#include "core/gpu.hpp"
#include "core/gpu/block_hash.cuh"
#include "core/gpu/block_histogram.cuh"
#include "core/gpu/union_find.hpp"

namespace repix {
namespace {

#define REPIX_REQUIRE_GPU() \
  if (!gpu_available()) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason()

__global__ void histogram_kernel(const std::uint32_t* bins, int n, int window, unsigned long long* global) {
  extern __shared__ int smem[];
  const gpu::BlockHistogram h(smem, window);
  h.init();
  __syncthreads();
  auto spill = [global](std::uint32_t b, int v) { atomicAdd(global + b, static_cast<unsigned long long>(v)); };
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) h.add(bins[i], 1, spill);
  __syncthreads();
  h.flush(spill);
}

TEST(BlockPrimitivesGpu, HistogramCountsEveryBinWhateverTheWindow) {
  REPIX_REQUIRE_GPU();
  const int n = 200000, nbins = 3000;
  std::mt19937 rng(7);
  std::vector<std::uint32_t> bins(n);
  for (auto& b : bins) b = rng() % nbins;
  std::vector<unsigned long long> want(nbins, 0);
  for (auto b : bins) ++want[b];
  for (int window : {0, 1, 700, nbins, 4096}) {
    DeviceBuffer<std::uint32_t> d_bins(n);
    DeviceBuffer<unsigned long long> d_out(nbins);
    copy_to_device_sync(d_bins.get(), bins.data(), n * sizeof(std::uint32_t));
    REPIX_CUDA(cudaMemset(d_out.get(), 0, nbins * sizeof(unsigned long long)));
    const int w = std::min(window, nbins);
    histogram_kernel<<<37, 256, std::max(1, w) * sizeof(int)>>>(d_bins.get(), n, w, d_out.get());
    REPIX_CUDA_LAUNCH();
    std::vector<unsigned long long> got(nbins);
    REPIX_CUDA(cudaMemcpy(got.data(), d_out.get(), nbins * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
    EXPECT_EQ(got, want) << "window " << window;
  }
}

constexpr int kLog2Slots = 9;  // 512 slots: fewer than the distinct keys below

template <class Hash>
__global__ void hash_kernel(const std::uint32_t* keys, const int* amounts, int n, unsigned long long* sums,
                            unsigned* seen, std::uint32_t nkeys_range) {
  __shared__ Hash h;
  h.init();
  __syncthreads();
  const std::uint32_t at = h.address();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const std::uint32_t slot = h.find(at, keys[i]);
    if (slot != h.kNoSlot) {
      h.add(slot, amounts[i]);
    } else {  // the caller's global path
      atomicAdd(sums + keys[i] % nkeys_range, static_cast<unsigned long long>(static_cast<long long>(amounts[i])));
      atomicOr(seen + keys[i] % nkeys_range, 1u);
    }
  }
  __syncthreads();
  h.flush([&](std::uint32_t key, int sum) {
    atomicAdd(sums + key % nkeys_range, static_cast<unsigned long long>(static_cast<long long>(sum)));
    atomicOr(seen + key % nkeys_range, 1u);
  });
}

// Every key's sum through a block hash of type Hash: `range` distinct keys k * 7919 (k < range),
// some of them more than the 512 slots hold (their updates then go to the caller's global path).
template <class Hash>
void expect_hash_keeps_every_sum(std::uint32_t range) {
  const int n = 100000;
  std::mt19937 rng(11);
  std::vector<std::uint32_t> keys(n);
  std::vector<int> amounts(n);
  std::vector<long long> want(range, 0);
  std::vector<unsigned> want_seen(range, 0);
  for (int i = 0; i < n; ++i) {
    const std::uint32_t k = rng() % range;
    keys[i] = k * 7919u;
    amounts[i] = static_cast<int>(rng() % 7) - 3;
    want[(k * 7919u) % range] += amounts[i];
    want_seen[(k * 7919u) % range] = 1;
  }
  DeviceBuffer<std::uint32_t> d_keys(n);
  DeviceBuffer<int> d_amounts(n);
  DeviceBuffer<unsigned long long> d_sums(range);
  DeviceBuffer<unsigned> d_seen(range);
  copy_to_device_sync(d_keys.get(), keys.data(), n * sizeof(std::uint32_t));
  copy_to_device_sync(d_amounts.get(), amounts.data(), n * sizeof(int));
  REPIX_CUDA(cudaMemset(d_sums.get(), 0, range * sizeof(unsigned long long)));
  REPIX_CUDA(cudaMemset(d_seen.get(), 0, range * sizeof(unsigned)));
  hash_kernel<Hash><<<13, 256>>>(d_keys.get(), d_amounts.get(), n, d_sums.get(), d_seen.get(), range);
  REPIX_CUDA_LAUNCH();
  std::vector<unsigned long long> got(range);
  std::vector<unsigned> seen(range);
  REPIX_CUDA(cudaMemcpy(got.data(), d_sums.get(), range * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
  REPIX_CUDA(cudaMemcpy(seen.data(), d_seen.get(), range * sizeof(unsigned), cudaMemcpyDeviceToHost));
  for (std::uint32_t k = 0; k < range; ++k) {
    EXPECT_EQ(static_cast<long long>(got[k]), want[k]) << k;
    EXPECT_EQ(seen[k], want_seen[k]) << k;
  }
}

TEST(BlockPrimitivesGpu, HashKeepsEveryKeysSumWhenFull) {
  REPIX_REQUIRE_GPU();
  for (std::uint32_t range : {2000u, 400u, 100u}) expect_hash_keeps_every_sum<gpu::BlockHash<kLog2Slots, 8>>(range);
}

// BucketHash::find: a key at its home slot, elsewhere in its home bucket (400 keys in 128 buckets
// of 4: many), past its bucket (inserted), and past kProbes slots (the global path: 2000 keys).
TEST(BlockPrimitivesGpu, BucketHashKeepsEveryKeysSumWhenFull) {
  REPIX_REQUIRE_GPU();
  for (std::uint32_t range : {2000u, 400u, 100u}) {
    expect_hash_keeps_every_sum<gpu::BucketHash<kLog2Slots, 8>>(range);
    expect_hash_keeps_every_sum<gpu::BucketHash<kLog2Slots, 16, 256>>(range);
  }
}

__global__ void union_kernel(std::int32_t* parent, const std::int32_t* a, const std::int32_t* b, int m) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < m; i += gridDim.x * blockDim.x) gpu::uf_union(parent, a[i], b[i]);
}
__global__ void find_kernel(std::int32_t* parent, std::int32_t* roots, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) roots[i] = gpu::uf_find(parent, i);
}

TEST(BlockPrimitivesGpu, UnionFindFromManyThreadsGivesSmallestIndexRoots) {
  REPIX_REQUIRE_GPU();
  for (std::uint32_t seed = 1; seed <= 5; ++seed) {
    const int n = 100000, m = 60000 + 20000 * static_cast<int>(seed);
    std::mt19937 rng(seed);
    std::vector<std::int32_t> a(m), b(m), parent(n);
    for (int i = 0; i < m; ++i) {
      a[i] = static_cast<std::int32_t>(rng() % n);
      b[i] = static_cast<std::int32_t>(rng() % n);
    }
    std::iota(parent.begin(), parent.end(), 0);
    // The reference: a sequential union-find with the same rule.
    std::vector<std::int32_t> ref(parent);
    auto find = [&](std::int32_t x) {
      while (ref[x] != x) x = ref[x] = ref[ref[x]];
      return x;
    };
    for (int i = 0; i < m; ++i) {
      const std::int32_t ra = find(a[i]), rb = find(b[i]);
      if (ra != rb) ref[std::max(ra, rb)] = std::min(ra, rb);
    }
    DeviceBuffer<std::int32_t> d_parent(n), d_a(m), d_b(m), d_roots(n);
    copy_to_device_sync(d_parent.get(), parent.data(), n * sizeof(std::int32_t));
    copy_to_device_sync(d_a.get(), a.data(), m * sizeof(std::int32_t));
    copy_to_device_sync(d_b.get(), b.data(), m * sizeof(std::int32_t));
    union_kernel<<<120, 256>>>(d_parent.get(), d_a.get(), d_b.get(), m);
    REPIX_CUDA_LAUNCH();
    find_kernel<<<120, 256>>>(d_parent.get(), d_roots.get(), n);
    REPIX_CUDA_LAUNCH();
    std::vector<std::int32_t> roots(n);
    REPIX_CUDA(cudaMemcpy(roots.data(), d_roots.get(), n * sizeof(std::int32_t), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i) ASSERT_EQ(roots[i], find(i)) << "element " << i << " seed " << seed;
  }
}

}  // namespace
}  // namespace repix
