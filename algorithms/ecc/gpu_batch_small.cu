// The batched small-image ECC kernel: one launch for a whole round of images, one thread block per
// image. The block stages its image in shared memory, turns every voxel into a (sort key, change)
// pair, sorts the pairs with cub::BlockRadixSort, and reduces the runs of equal keys with one
// cub::BlockScan into the image's (value, ECC) pairs (gpu_batch_small_core.cuh). The image, the
// sort and the reduce use the same shared memory one after the other, so the largest block shape
// (1024 threads x 16 items, 128^2 float32) needs 66 KiB. Its 1024 threads get 64 registers each
// (ptxas, sm_90: ~600 bytes of spills in the sort and reduce), one block per SM; the smaller
// shapes (256 x 8: 75 registers, 64 x 4: 40) run several blocks per SM.
//
// Why not gpu-opt per image: at 128^2 its few microseconds of kernel come with several launches,
// a host synchronisation for the float hash table's overflow flag and per-image read-backs,
// milliseconds per image in all (ECC Table 3 on the H100, 2.0 ms per image device-resident).
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_scan.cuh>

#include <utility>

#include "core/gpu.hpp"
#include "ecc/gpu_batch_small.cuh"
#include "ecc/gpu_batch_small_core.cuh"

namespace repix::ecc::small_batch {
namespace {

template <class T, int kThreads, int kItems>
struct BlockShape {
  using Sort = cub::BlockRadixSort<std::uint32_t, kThreads, kItems, signed char>;
  using Scan = cub::BlockScan<RunTotals, kThreads>;
  // The three phases' shared memory, one after the other (barriers between them).
  union Shared {
    T image[kThreads * kItems];
    typename Sort::TempStorage sort;
    struct {
      typename Scan::TempStorage scan;
      std::uint32_t first_key[kThreads];  // each thread's first sorted key: its predecessor's successor
    } reduce;
  };
};

template <class T, int kThreads, int kItems>
__global__ void __launch_bounds__(kThreads)
    small_batch_kernel(const T* __restrict__ images, gpu::Geometry g, int n, int dims, Output out) {
  using Block = BlockShape<T, kThreads, kItems>;
  extern __shared__ __align__(16) unsigned char smem[];
  auto& sh = *reinterpret_cast<typename Block::Shared*>(smem);
  const int t = threadIdx.x;
  const T* img = images + static_cast<std::size_t>(blockIdx.x) * n;
  for (int i = t; i < n; i += kThreads) sh.image[i] = __ldg(img + i);
  __syncthreads();

  std::uint32_t keys[kItems];
  signed char changes[kItems];
  thread_items<T, kItems>(sh.image, g, n, dims, t, kThreads, keys, changes);
  __syncthreads();  // the image's storage becomes the sort's

  typename Block::Sort(sh.sort).Sort(keys, changes, 0, SortKey<T>::kEndBit);
  __syncthreads();  // and then the reduce's

  sh.reduce.first_key[t] = keys[0];
  __syncthreads();
  const std::uint32_t successor = t + 1 < kThreads ? sh.reduce.first_key[t + 1] : SortKey<T>::kSentinel;
  RunTotals before, total;
  typename Block::Scan(sh.reduce.scan)
      .ExclusiveScan(thread_totals(keys, changes, successor, SortKey<T>::kSentinel), before, RunTotals{},
                     AddRunTotals{}, total);
  std::uint32_t* slot = out.slots + static_cast<std::size_t>(blockIdx.x) * 2 * n;
  thread_emit<T, kItems>(keys, changes, successor, before, slot, reinterpret_cast<std::int32_t*>(slot + n));
  if (t == 0) out.counts[blockIdx.x] = static_cast<std::uint32_t>(total.runs);
}

using KernelFn = void (*)(const void*, gpu::Geometry, int, int, Output);

struct KernelInfo {
  KernelFn fn;
  std::size_t smem_bytes;
};

template <class T, int kTier>
KernelInfo kernel_info() {
  constexpr Tier tier = kTiers[kTier];
  return {reinterpret_cast<KernelFn>(&small_batch_kernel<T, tier.threads, tier.items>),
          sizeof(typename BlockShape<T, tier.threads, tier.items>::Shared)};
}

template <class T, std::size_t... I>
KernelInfo kernel_info(int tier, std::index_sequence<I...>) {
  const KernelInfo table[] = {kernel_info<T, static_cast<int>(I)>()...};
  return table[tier];
}

KernelInfo kernel_info(DType dtype, int tier) {
  const auto tiers = std::make_index_sequence<kTierCount>();
  return dispatch_dtype(dtype, [&](auto tag) { return kernel_info<typename decltype(tag)::type>(tier, tiers); });
}

}  // namespace

std::int64_t Launcher::max_elements() { return kMaxElements; }

bool Launcher::fits(const Shape& shape) { return shape.size() >= 1 && tier_for(shape.size()) >= 0; }

Launcher::Launcher(DType dtype, const Shape& shape) : dtype_(dtype), shape_(shape), elements_(shape.size()) {
  if (!fits(shape))
    throw Error("internal: the batched small-image ECC kernel takes images of 1 to " +
                std::to_string(kMaxElements) + " elements, not " + shape.str());
  if (!gpu_available()) throw Error("batch ECC needs a GPU: " + gpu_unavailable_reason());
  tier_ = tier_for(elements_);
  const KernelInfo k = kernel_info(dtype_, tier_);
  smem_bytes_ = k.smem_bytes;
  REPIX_CUDA(cudaFuncSetAttribute(reinterpret_cast<const void*>(k.fn), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(smem_bytes_)));
}

int Launcher::block_threads() const { return kTiers[tier_].threads; }

std::size_t Launcher::counts_bytes(std::int64_t images) {
  return (static_cast<std::size_t>(images) * sizeof(std::uint32_t) + 15) / 16 * 16;
}

Output Launcher::layout(void* buffer, std::int64_t images) const {
  Output o;
  o.counts = static_cast<std::uint32_t*>(buffer);
  o.slots = reinterpret_cast<std::uint32_t*>(static_cast<unsigned char*>(buffer) + counts_bytes(images));
  return o;
}

void Launcher::launch(const void* d_images, std::int64_t m, const Output& out, cudaStream_t stream) const {
  if (m <= 0) return;
  const KernelInfo k = kernel_info(dtype_, tier_);
  gpu::Geometry g = gpu::Geometry::of(shape_);
  int n = static_cast<int>(elements_), dims = gpu::rule_dims(shape_);
  Output o = out;
  void* args[] = {const_cast<void**>(&d_images), &g, &n, &dims, &o};
  REPIX_CUDA(cudaLaunchKernel(reinterpret_cast<const void*>(k.fn), dim3(static_cast<unsigned>(m)),
                              dim3(static_cast<unsigned>(block_threads())), args, smem_bytes_, stream));
}

}  // namespace repix::ecc::small_batch
