// uniform's generator on the GPU (uniform_gpu.cu): the values uniform.cpp's fill gives, made in
// device memory, for pipelines that stream a generated input through a GPU (ECC's gpu-stream in
// a distributed run) and would otherwise make it on the host and copy it over PCIe.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/image.hpp"

namespace repix::datasets::detail {

// Elements [begin, end) of uniform with `seed` into `dst` (device memory, dtype `dtype`), on
// `stream`: levels > 0: integers 0..levels-1 (as floats for float32); levels == 0 (float32
// only): float32 in [0, 1). Element i is word i % 4 of the Philox block i / 4, as on the host.
void fill_uniform_on_device(std::uint64_t seed, std::uint32_t levels, DType dtype, std::int64_t begin, std::int64_t end,
                            void* dst, cudaStream_t stream);

}  // namespace repix::datasets::detail
