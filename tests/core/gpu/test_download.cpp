// download() (core/download.hpp) against the bytes it copies: below the staging threshold, across
// several chunks with a ragged last one, into pinned memory, and twice in a row (the staging
// buffers are reused); prefault() against the pages it must touch.
#include <gtest/gtest.h>

#include <algorithm>
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

// prefault() writes one byte of every 4 KB page the range touches, the first and the last page
// of an unaligned range included, and nothing outside the range (no GPU needed).
TEST(Prefault, WritesEveryPageOfTheRangeAndNothingElse) {
  constexpr std::size_t kPage = 4096;
  for (const std::size_t offset : {std::size_t(0), std::size_t(1), std::size_t(100), kPage - 1})
    for (const std::size_t bytes : {std::size_t(1), std::size_t(2), kPage - 1, kPage, kPage + 1, 10 * kPage + 17}) {
      std::vector<std::uint8_t> buffer(bytes + 4 * kPage, 0xAB);
      const auto base = reinterpret_cast<std::uintptr_t>(buffer.data());
      const std::size_t aligned = (kPage - base % kPage) % kPage;  // the first page boundary in the buffer
      std::uint8_t* range = buffer.data() + aligned + offset;
      prefault(range, bytes);
      const auto first_page = (reinterpret_cast<std::uintptr_t>(range)) / kPage;
      const auto last_page = (reinterpret_cast<std::uintptr_t>(range) + bytes - 1) / kPage;
      for (auto page = first_page; page <= last_page; ++page) {
        bool written = false;
        for (std::size_t i = 0; i < bytes; ++i)
          if ((reinterpret_cast<std::uintptr_t>(range) + i) / kPage == page && range[i] == 0) written = true;
        EXPECT_TRUE(written) << "page " << page - first_page << " of " << bytes << " bytes at offset " << offset;
      }
      for (std::uint8_t* p = buffer.data(); p < range; ++p) ASSERT_EQ(*p, 0xAB) << "before the range";
      for (std::uint8_t* p = range + bytes; p < buffer.data() + buffer.size(); ++p) ASSERT_EQ(*p, 0xAB) << "after the range";
    }
}

// The staged download's chunk: an eighth of the bytes in whole MiB, within [8 MiB, kDownloadChunk].
TEST(DownloadChunk, AnEighthInWholeMiBBetween8MiBAndTheStagingSize) {
  constexpr std::size_t kMiB = std::size_t(1) << 20;
  EXPECT_EQ(download_chunk(kDownloadDirectBelow), 8 * kMiB);
  EXPECT_EQ(download_chunk(96000000), 12 * kMiB);  // 6000x4000 int32: 12 MB an eighth, rounded up
  EXPECT_EQ(download_chunk(100 * kMiB), 13 * kMiB);
  EXPECT_EQ(download_chunk(512 * kMiB), 64 * kMiB);
  EXPECT_EQ(download_chunk(std::size_t(3200) * kMiB), kDownloadChunk);
  for (std::size_t bytes = kDownloadDirectBelow; bytes < (std::size_t(1) << 33); bytes = bytes * 3 / 2 + 12345) {
    const std::size_t c = download_chunk(bytes);
    ASSERT_TRUE(c % kMiB == 0 && c >= 8 * kMiB && c <= kDownloadChunk) << bytes;
    ASSERT_LE((bytes + c - 1) / c, std::max<std::size_t>(8, bytes / kDownloadChunk + 1)) << bytes;
  }
}

TEST(DownloadGpu, CopiesEveryByteSmallLargeRaggedAndPinned) {
  if (!gpu_available()) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason();
  CudaStream stream;
  // Staged: 32 MiB in 8 MiB chunks, 96,000,000 bytes in 12 MiB ones, 128 MiB + 12345 in 17 MiB ones
  // (ragged lasts), 192 MiB in 24 MiB ones (download_chunk's clamp to 64 MiB is tested above).
  const std::size_t sizes[] = {1, 4097, kDownloadDirectBelow - 1, kDownloadDirectBelow, 96000000,
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
