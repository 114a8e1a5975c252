// gpu-opt's 2D kernel: warp-level work items of 128 columns by `chunk` rows (see NOTES-gpu-opt.md).
#include <cstdlib>
#include <string>

#include "core/image.hpp"
#include "ecc/gpu_opt_kernels.cuh"

namespace repix::ecc::opt::detail {
namespace {

// ---- 2D kernel --------------------------------------------------------------------------------
// Warp-level work items: a 128-column segment times `chunk` rows. Each thread keeps rows y-1, y,
// y+1 in registers and has the next three rows' loads in flight.

template <class T>
struct Row2 {
  Raw4<T> run;
  float left = kInf, right = kInf;  // lane 0 / lane 31 only
};

// Per-item constants of a lane's loads: column base pointer and validity along x.
template <class T>
struct Lane2 {
  const T* base;       // buf + x0 (row offsets are added per row)
  unsigned xmask;      // run validity
  bool lok, rok;       // halo columns x0-1 / x0+4 inside the image
};

template <class T, bool kVec>
__device__ __forceinline__ Row2<T> load_row2(const Lane2<T>& L, const Geom& g, std::int64_t y,
                                             std::int64_t ylim, int lane) {
  const bool ok = y >= 0 && y < g.ny && y <= ylim;
  const T* p = L.base + (ok ? (y - g.b0) * g.nx : 0);
  Row2<T> r;
  r.run = load4<T, kVec>(p, ok ? L.xmask : 0u);
  if (lane == 0) r.left = load1(p - 1, ok && L.lok);
  if (lane == 31) r.right = load1(p + 4, ok && L.rok);
  return r;
}

template <class T>
__device__ __forceinline__ void assemble2(float (&row)[6], const Row2<T>& r, int lane) {
  assemble(row, conv(r.run, 0), conv(r.run, 1), conv(r.run, 2), conv(r.run, 3), r.left, r.right,
           lane);
}

template <class T, bool kEmit, int kMode>
__device__ __forceinline__ void step2(const float (&up)[6], const float (&mid)[6],
                                      const float (&dn)[6], std::int64_t y, std::int64_t yb,
                                      std::int64_t x0, const Geom& g, EmitOut& out,
                                      ThreadAcc<T, kMode>& ta, BlockAcc<T, kMode>& ba,
                                      const GlobalAcc& acc) {
  if (y >= yb) return;
  const std::uint32_t s = change4_2d(up, mid, dn);
  unsigned valid = 0;
#pragma unroll
  for (int i = 0; i < kRun; ++i) valid |= static_cast<unsigned>(x0 + i < g.nx) << i;
  consume<T, kEmit, kMode>(s, kBias2, mid, valid, (y - g.s0) * g.nx + x0, out, ta, ba, acc);
}

// kMinBlocks: the register budget (__launch_bounds__'s minimum resident blocks per SM). 2 gives
// 95 registers and no spills; 3 caps them at 80 with ~50 bytes of spills but 50 % more warps to
// hide the load latency (the kernel is latency-bound). Measured on the H100 (d721389, kernel
// scope, 8192^2): 3 is 1.26-1.32x faster on float32 uniform/GRF and uint8 (0.456 -> 0.363 ms,
// 0.837 -> 0.649 ms, 0.378 -> 0.287 ms), so it is the default; REPIX_ECC_OPT_2D_BLOCKS=2 keeps the
// other instantiation for the ablation.
template <class T, bool kVec, bool kEmit, int kMinBlocks = 3, int kMode = kModeOpt>
__global__ void __launch_bounds__(kThreads, kMinBlocks) ecc2d_kernel(const T* __restrict__ buf, Geom g,
                                                                     GlobalAcc acc, EmitOut out) {
  __shared__ BlockAcc<T, kMode> ba;
  if constexpr (!kEmit) {
    ba.init();
    __syncthreads();
  }
  ThreadAcc<T, kMode> ta;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const std::int64_t nitems = g.items_x * g.items_s;
  for (std::int64_t item = static_cast<std::int64_t>(blockIdx.x) * kWarps + warp; item < nitems;
       item += static_cast<std::int64_t>(gridDim.x) * kWarps) {
    const std::int64_t ix = item % g.items_x, is = item / g.items_x;
    const std::int64_t x0 = ix * kSegX + lane * kRun;
    const std::int64_t ya = g.s0 + is * g.chunk, yb = min(ya + g.chunk, g.s1);
    Lane2<T> L;
    L.base = buf + x0;
    L.xmask = run_mask(x0, g.nx);
    L.lok = x0 >= 1 && x0 - 1 < g.nx;
    L.rok = x0 + 4 < g.nx;
    float A[6], B[6], C[6];
    {
      const Row2<T> r0 = load_row2<T, kVec>(L, g, ya - 1, yb, lane);
      const Row2<T> r1 = load_row2<T, kVec>(L, g, ya, yb, lane);
      const Row2<T> r2 = load_row2<T, kVec>(L, g, ya + 1, yb, lane);
      assemble2(A, r0, lane);
      assemble2(B, r1, lane);
      assemble2(C, r2, lane);
    }
    Row2<T> q0 = load_row2<T, kVec>(L, g, ya + 2, yb, lane);
    Row2<T> q1 = load_row2<T, kVec>(L, g, ya + 3, yb, lane);
    Row2<T> q2 = load_row2<T, kVec>(L, g, ya + 4, yb, lane);
    for (std::int64_t y = ya; y < yb; y += 3) {
      const Row2<T> n0 = load_row2<T, kVec>(L, g, y + 5, yb, lane);
      const Row2<T> n1 = load_row2<T, kVec>(L, g, y + 6, yb, lane);
      const Row2<T> n2 = load_row2<T, kVec>(L, g, y + 7, yb, lane);
      step2<T, kEmit, kMode>(A, B, C, y, yb, x0, g, out, ta, ba, acc);
      assemble2(A, q0, lane);
      step2<T, kEmit, kMode>(B, C, A, y + 1, yb, x0, g, out, ta, ba, acc);
      assemble2(B, q1, lane);
      step2<T, kEmit, kMode>(C, A, B, y + 2, yb, x0, g, out, ta, ba, acc);
      assemble2(C, q2, lane);
      q0 = n0;
      q1 = n1;
      q2 = n2;
    }
  }
  if constexpr (!kEmit) {
    __syncthreads();
    ba.flush(acc);
  }
}

}  // namespace

// The 2D kernel's register budget (see ecc2d_kernel): 3 unless REPIX_ECC_OPT_2D_BLOCKS=2.
int ecc2d_min_blocks() {
  static const int v = [] {
    const char* e = std::getenv("REPIX_ECC_OPT_2D_BLOCKS");
    return e && std::string(e) == "2" ? 2 : 3;
  }();
  return v;
}

KernelFn pick_kernel_2d(DType dt, bool vec, bool emit, int mode) {
  return dispatch_dtype(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto ptr = [](auto kernel) { return reinterpret_cast<KernelFn>(kernel); };
    const bool three = ecc2d_min_blocks() == 3;
    auto pick = [&](auto m) {
      constexpr int M = decltype(m)::value;
      if constexpr (M != kModeOpt)  // the steps after gpu-opt change accumulating kernels only
        return vec ? (three ? ptr(&ecc2d_kernel<T, true, false, 3, M>) : ptr(&ecc2d_kernel<T, true, false, 2, M>))
                   : (three ? ptr(&ecc2d_kernel<T, false, false, 3, M>) : ptr(&ecc2d_kernel<T, false, false, 2, M>));
      if (vec)
        return emit ? (three ? ptr(&ecc2d_kernel<T, true, true, 3>) : ptr(&ecc2d_kernel<T, true, true, 2>))
                    : (three ? ptr(&ecc2d_kernel<T, true, false, 3>) : ptr(&ecc2d_kernel<T, true, false, 2>));
      return emit ? (three ? ptr(&ecc2d_kernel<T, false, true, 3>) : ptr(&ecc2d_kernel<T, false, true, 2>))
                  : (three ? ptr(&ecc2d_kernel<T, false, false, 3>) : ptr(&ecc2d_kernel<T, false, false, 2>));
    };
    return pick_mode<T>(emit, mode, pick);
  });
}

}  // namespace repix::ecc::opt::detail
