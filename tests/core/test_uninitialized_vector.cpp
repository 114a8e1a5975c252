// HostBuffer and HostImage on a HostMemorySource too (core/image.hpp), moves included.
// UninitializedVector's allocator with a HostMemorySource (core/uninitialized_vector.hpp): memory
// from the source where it serves, the heap where it does not, each block given back where it came
// from; copies on the heap, moves and swaps carrying the source with the memory. A fake source that
// hands out blocks of its own arena and records every call stands for the pinned pool.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "core/image.hpp"
#include "core/uninitialized_vector.hpp"

namespace repix {
namespace {

class ArenaSource final : public HostMemorySource {
 public:
  explicit ArenaSource(std::size_t serve_from) : serve_from_(serve_from) {}
  void* allocate(std::size_t bytes) override {
    if (bytes < serve_from_) return nullptr;
    blocks_.push_back(std::vector<unsigned char>(bytes));
    void* p = blocks_.back().data();
    live_[p] = bytes;
    return p;
  }
  bool release(void* p, std::size_t bytes) noexcept override {
    const auto it = live_.find(p);
    if (it == live_.end()) return false;
    EXPECT_EQ(it->second, bytes) << "released with another size than allocated";
    live_.erase(it);
    ++released_;
    return true;
  }
  bool owns(const void* p) const { return live_.count(const_cast<void*>(p)) != 0; }
  std::size_t live() const { return live_.size(); }
  int released() const { return released_; }

 private:
  std::size_t serve_from_;
  std::vector<std::vector<unsigned char>> blocks_;  // kept to the end: their storage stays valid
  std::map<void*, std::size_t> live_;
  int released_ = 0;
};

using Vec = UninitializedVector<std::int32_t>;

TEST(UninitializedVector, TakesItsMemoryFromTheSourceAndGivesItBack) {
  ArenaSource source(64);
  {
    Vec v{DefaultInitAllocator<std::int32_t>(&source)};
    v.resize(100);  // 400 bytes: the source's
    EXPECT_TRUE(source.owns(v.data()));
    for (int i = 0; i < 100; ++i) v[i] = i;
    EXPECT_EQ(v[99], 99);
  }
  EXPECT_EQ(source.live(), 0u);
  EXPECT_EQ(source.released(), 1);
}

TEST(UninitializedVector, FallsBackToTheHeapWhereTheSourceDoesNotServe) {
  ArenaSource source(1 << 20);
  {
    Vec v{DefaultInitAllocator<std::int32_t>(&source)};
    v.resize(100);  // below what the source serves: the heap's, and freed there (ASan-clean)
    EXPECT_FALSE(source.owns(v.data()));
    v[0] = 7;
  }
  EXPECT_EQ(source.released(), 0);
}

TEST(UninitializedVector, ACopyTakesHeapMemoryAndAMoveKeepsTheSourcesBlock) {
  ArenaSource source(64);
  Vec v{DefaultInitAllocator<std::int32_t>(&source)};
  v.resize(100);
  for (int i = 0; i < 100; ++i) v[i] = 3 * i;
  const Vec copy = v;
  EXPECT_FALSE(source.owns(copy.data()));
  EXPECT_EQ(copy.get_allocator().source(), nullptr);
  EXPECT_EQ(copy, v);
  const std::int32_t* block = v.data();
  Vec moved = std::move(v);
  EXPECT_EQ(moved.data(), block);
  EXPECT_EQ(moved.get_allocator().source(), &source);
  Vec assigned;  // the heap's allocator, then the moved-in source's with its memory
  assigned = std::move(moved);
  EXPECT_EQ(assigned.data(), block);
  EXPECT_EQ(assigned.get_allocator().source(), &source);
  Vec other;
  other.resize(5);
  std::swap(assigned, other);
  EXPECT_EQ(other.data(), block);
  EXPECT_EQ(other.get_allocator().source(), &source);
  EXPECT_EQ(other[99], 297);
  other = Vec();  // the block back to the source, the heap vector's memory back to the heap
  EXPECT_EQ(source.live(), 0u);
  EXPECT_EQ(source.released(), 1);
}

TEST(UninitializedVector, AllocatorsCompareEqualExactlyWhenTheirSourcesAre) {
  ArenaSource a(64), b(64);
  EXPECT_EQ(DefaultInitAllocator<int>(), DefaultInitAllocator<int>());
  EXPECT_EQ(DefaultInitAllocator<int>(&a), DefaultInitAllocator<long>(&a));
  EXPECT_NE(DefaultInitAllocator<int>(&a), DefaultInitAllocator<int>(&b));
  EXPECT_NE(DefaultInitAllocator<int>(&a), DefaultInitAllocator<int>());
}

TEST(HostBufferOnASource, TakesItsBlockFromTheSourceAndGivesItBackOnce) {
  ArenaSource source(64);
  {
    HostImage image(DType::u16, Shape::d2(10, 5), source);  // 100 bytes: the source's
    EXPECT_TRUE(source.owns(image.raw()));
    EXPECT_FALSE(image.pinned());  // the arena is plain memory (the pinned pool's blocks say pinned)
    image.data<std::uint16_t>()[49] = 7;
    HostImage moved = std::move(image);
    EXPECT_EQ(moved.data<std::uint16_t>()[49], 7);
    EXPECT_EQ(source.released(), 0);
  }
  EXPECT_EQ(source.live(), 0u);
  EXPECT_EQ(source.released(), 1);
}

TEST(HostBufferOnASource, FallsBackToTheHeapWhereTheSourceDoesNotServe) {
  ArenaSource source(1 << 20);
  HostBuffer buffer(100, source);
  ASSERT_NE(buffer.data(), nullptr);
  EXPECT_FALSE(source.owns(buffer.data()));
  EXPECT_EQ(buffer.bytes(), 100u);
}

}  // namespace
}  // namespace repix
