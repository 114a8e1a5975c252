// uniform's GPU generator (datasets/uniform_gpu.cu) against its host fill: the same bytes for
// every dtype and levels, on slab ranges whose element bounds fall at every offset in a Philox
// block; and ECC's gpu-stream with the chunks made on the GPU against the host-made ones.
// Skips without a GPU.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/gpu.hpp"
#include "datasets/datasets.hpp"
#include "datasets/io.hpp"
#include "ecc/ecc.hpp"

namespace repix {
namespace {

#define REPIX_NEED_GPU() \
  if (!gpu_available()) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason()

TEST(UniformOnGpu, SameBytesAsTheHostFill) {
  REPIX_NEED_GPU();
  // 7-element slabs: slab s starts at element 7s, so the bounds fall at every offset in a block.
  for (const char* spec : {"uniform:7x9:levels=256:dtype=uint8:seed=3", "uniform:7x9:levels=1000:dtype=uint16:seed=4",
                           "uniform:7x9:levels=70000:dtype=float32:seed=5", "uniform:7x9:dtype=float32:seed=6",
                           "uniform:7x9x3:levels=5:dtype=uint8:seed=7"}) {
    const datasets::Spec s = datasets::spec_of(spec);
    ASSERT_TRUE(datasets::generates_on_device(s)) << spec;
    auto src = datasets::open_source(s);
    const Shape sh = src->shape();
    const std::size_t slab_bytes = static_cast<std::size_t>(slab_elems(sh)) * dtype_size(src->dtype());
    const std::int64_t slabs = slab_count(sh);
    for (std::int64_t a = 0; a < slabs; ++a)
      for (std::int64_t b = a + 1; b <= slabs; ++b) {
        const std::size_t bytes = static_cast<std::size_t>(b - a) * slab_bytes;
        std::vector<unsigned char> host(bytes), back(bytes, 0xAB);
        src->read(a, b, host.data());
        DeviceBuffer<unsigned char> dev(bytes);
        ASSERT_TRUE(src->read_on_device(a, b, dev.get(), nullptr));
        REPIX_CUDA(cudaMemcpy(back.data(), dev.get(), bytes, cudaMemcpyDeviceToHost));
        ASSERT_EQ(0, std::memcmp(host.data(), back.data(), bytes)) << spec << " slabs [" << a << ", " << b << ")";
      }
  }
  EXPECT_FALSE(datasets::generates_on_device(datasets::spec_of("grf:16x16:alpha=3")));
  EXPECT_FALSE(datasets::generates_on_device(datasets::spec_of("const:4x4:value=1")));
}

TEST(UniformOnGpu, EccStreamSameCurve) {
  REPIX_NEED_GPU();
  for (const char* spec : {"uniform:33x17x29:levels=40:dtype=float32:seed=1", "uniform:64x61:levels=256:dtype=uint8:seed=2",
                           "uniform:20x20x20:dtype=float32:seed=3"}) {
    ecc::Options host_made, gpu_made;
    host_made.chunk_bytes = gpu_made.chunk_bytes = 3000;  // several chunks, odd slab counts
    gpu_made.generate_on_device = true;
    auto a = datasets::open_source(datasets::spec_of(spec));
    auto b = datasets::open_source(datasets::spec_of(spec));
    const ecc::Curve want = ecc::run_gpu_stream_slabs(*a, host_made, 0, slab_count(a->shape()));
    EXPECT_EQ(ecc::run_gpu_stream_slabs(*b, gpu_made, 0, slab_count(b->shape())), want) << spec;
    // A part's curve from the GPU-made slabs: the same as from the host-made ones.
    const std::int64_t half = slab_count(a->shape()) / 2;
    EXPECT_EQ(ecc::run_gpu_stream_slabs(*b, gpu_made, half, half + 2), ecc::run_gpu_stream_slabs(*a, host_made, half, half + 2))
        << spec;
  }
}

}  // namespace
}  // namespace repix
