// Input checks on device-resident data (the Python module's CuPy path, where the input is never
// copied to the host): the smallest index where a condition holds, so that the error names the
// same element as the host check of the same input, whatever the launch shape. Each call
// synchronises `stream` (the caller needs the answer to go on).
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/image.hpp"

namespace repix::gpu {

// The first index in [0, n) where data[i] is NaN or infinite, or n; *is_nan says which it was.
std::int64_t first_nonfinite(const float* data, std::int64_t n, bool* is_nan, cudaStream_t stream);

// The first index where data[i] > limit, or n; *value is that element.
std::int64_t first_above(const std::uint16_t* data, std::int64_t n, std::uint16_t limit, std::uint16_t* value,
                         cudaStream_t stream);

// The first index where a[i] > b[i] (both of `dtype`), or n; *a_value and *b_value are the two
// elements there, as doubles (exact for every DType).
std::int64_t first_greater(DType dtype, const void* a, const void* b, std::int64_t n, double* a_value,
                           double* b_value, cudaStream_t stream);

}  // namespace repix::gpu
