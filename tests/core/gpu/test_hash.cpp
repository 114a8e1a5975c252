// core/gpu/hash.hpp on the host: BucketHash's probe sequence (bucket_probe) starts at the home slot,
// covers the home bucket in its first 4 probes, and visits every slot of the table exactly once.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "core/gpu/hash.hpp"

namespace repix {
namespace {

TEST(BucketProbe, StartsHomeCoversItsBucketThenEverySlotOnce) {
  for (int lg : {2, 3, 9, 12}) {
    const std::uint32_t slots = 1u << lg;
    for (std::uint32_t h = 0; h < slots; ++h) {
      SCOPED_TRACE(::testing::Message() << "log2 " << lg << " home " << h);
      ASSERT_EQ(gpu::bucket_probe(h, 0, lg), h);
      for (int p = 0; p < 4; ++p) ASSERT_EQ(gpu::bucket_probe(h, p, lg) / 4, h / 4) << "probe " << p;
      std::vector<int> seen(slots, 0);
      for (int p = 0; p < static_cast<int>(slots); ++p) ++seen[gpu::bucket_probe(h, p, lg)];
      for (std::uint32_t s = 0; s < slots; ++s) ASSERT_EQ(seen[s], 1) << "slot " << s;
      if (lg > 2) ASSERT_EQ(gpu::bucket_probe(h, 4, lg) / 4, (h / 4 + 1) % (slots / 4));  // then the next bucket
    }
  }
}

}  // namespace
}  // namespace repix
