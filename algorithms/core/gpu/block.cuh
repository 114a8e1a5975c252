// A thread's place in its block, for block-strided loops over shared-memory arrays in blocks of
// any shape (the ECC ladder kernels use 3D blocks).
#pragma once
#include <cuda_runtime.h>

namespace repix::gpu {

__device__ __forceinline__ int block_thread_rank() {
  return static_cast<int>(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z));
}

__device__ __forceinline__ int block_thread_count() {
  return static_cast<int>(blockDim.x * blockDim.y * blockDim.z);
}

}  // namespace repix::gpu
