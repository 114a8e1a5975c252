// `gpu-naive`: Blin et al.'s concurrent union with no tiles. One thread per pixel (grid-stride)
// merges its tree with each earlier neighbour's (left, up; up-left and up-right with
// 8-connectivity: every edge once) straight on the global parent image, through the CAS zip of
// gpu_core::merge. Every merge is lock-free and the result does not depend on their order
// (gpu_core.hpp), so one kernel builds the whole tree; the engine then flattens it to the normal
// form. Cost: the chains of nodes between the two pixels' levels climbed in global memory (within
// a plateau the walk halves its path, as union-find does); gpu-tile does most climbing in shared
// memory.
#include "maxtree/gpu_engine.cuh"
#include "maxtree/variants.hpp"

namespace repix::maxtree::gpu {
namespace {

template <class T, class I>
__global__ void naive_build_kernel(const T* __restrict__ f, I* par, Geom g) {
  REPIX_MAXTREE_FOR_EACH_PIXEL(p, g.n()) {
    const std::int64_t x = p % g.nx, y = p / g.nx;
    gpu_core::for_each_earlier_neighbour(x, y, g.nx, g.conn, [&](std::int64_t nx, std::int64_t ny) {
      gpu_core::merge(f, par, static_cast<I>(p), static_cast<I>(ny * g.nx + nx), DeviceAtomics{});
    });
  }
}

template <class T, class I>
class NaiveBuild final : public Engine<T, I> {
 protected:
  void build(const T* f, I* par, cudaStream_t s) override {
    naive_build_kernel<T, I><<<blocks_for(this->g_.n()), kThreads, 0, s>>>(f, par, this->g_);
    REPIX_CUDA_LAUNCH();
  }
};

}  // namespace

Variant gpu_naive_variant() {
  return make_gpu_variant<NaiveBuild>("gpu-naive", "naive",
                                      "Blin et al.: a thread per pixel zips its tree with its earlier neighbours' "
                                      "on the global parent image (CAS), then the flatten");
}

}  // namespace repix::maxtree::gpu
