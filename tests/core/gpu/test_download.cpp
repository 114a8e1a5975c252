// download() (core/download.hpp) against the bytes it copies: below the staging threshold, across
// several chunks with a ragged last one, into pinned memory, and twice in a row (the staging
// buffers are reused).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "core/download.hpp"
#include "core/gpu.hpp"
#include "core/image.hpp"

namespace repix {
namespace {

std::vector<std::uint8_t> random_bytes(std::size_t n, std::uint32_t seed) {
  std::vector<std::uint8_t> v(n);
  std::mt19937 rng(seed);
  for (std::size_t i = 0; i < n; i += 4) {
    const std::uint32_t r = rng();
    for (std::size_t j = 0; j < 4 && i + j < n; ++j) v[i + j] = static_cast<std::uint8_t>(r >> (8 * j));
  }
  return v;
}

TEST(DownloadGpu, CopiesEveryByteSmallLargeRaggedAndPinned) {
  if (!gpu_available()) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason();
  CudaStream stream;
  const std::size_t sizes[] = {1, 4097, kDownloadDirectBelow - 1, kDownloadDirectBelow,
                               2 * kDownloadChunk + 12345, 3 * kDownloadChunk};
  std::uint32_t seed = 1;
  for (std::size_t n : sizes) {
    const std::vector<std::uint8_t> want = random_bytes(n, seed++);
    DeviceBuffer<std::uint8_t> d(n);
    copy_to_device_sync(d.get(), want.data(), n);
    for (int round = 0; round < 2; ++round) {
      std::vector<std::uint8_t> got(n, 0xEE);
      download(got.data(), d.get(), n, stream.get());
      ASSERT_TRUE(got == want) << n << " bytes, round " << round;
    }
    HostBuffer pinned(n, true);
    download(pinned.data(), d.get(), n, stream.get());
    ASSERT_EQ(std::memcmp(pinned.data(), want.data(), n), 0) << n << " bytes into pinned memory";
  }
}

}  // namespace
}  // namespace repix
