// gpu-opt's 2D kernel: warp-level work items of 128 columns by `chunk` rows (see NOTES-gpu-opt.md).
#include "core/image.hpp"
#include "ecc/gpu_opt_kernels.cuh"

namespace repix::ecc::opt::detail {
namespace {

// ---- 2D kernel --------------------------------------------------------------------------------
// Warp-level work items: a 128-column segment times `chunk` rows. Each thread keeps rows y-1, y,
// y+1 in registers and has the next three rows' loads in flight.

// A lane's row loads of one work item. Row index r is image row ya - 1 + r (ya: the item's first
// row); rows lo..hi are inside the image and within the item's reach (its last row's lower
// neighbour), the others are +inf. The address advances a row at a time, so a load costs no 64-bit
// multiply and its validity one 32-bit compare: the loads' address arithmetic (int64 row products
// and bounds per row, branches around the halo loads) was ~57 instructions a row before (SASS),
// as many as the rule itself.
struct Rows2 {
  std::uintptr_t a = 0;    // bytes: the next row's run (wraps harmlessly while outside the buffer)
  std::int64_t stride = 0; // bytes a row
  int lo = 0, hi = 0;
  unsigned xmask = 0;      // bits 0-3: run validity along x; bit 4: this lane's halo column inside
  int halo = 0;            // elements from the run to the halo column: lane 0 -1, lane 31 +4
};

// A row's raw loads in flight: the lane's 4 elements and its halo element (lanes 0 and 31; the
// others load none). Converted to compute values (and +inf outside) when the row is assembled, so
// the loads stay in flight until then.
template <class T>
struct RawRow2 {
  T v[4];
  T h;
  unsigned valid;  // as Rows2::xmask, 0 for a row outside
};

template <class T, bool kVec>
__device__ __forceinline__ RawRow2<T> load_row2(Rows2& R, int r) {
  const bool ok = static_cast<unsigned>(r - R.lo) <= static_cast<unsigned>(R.hi - R.lo);
  const T* p = reinterpret_cast<const T*>(R.a);
  R.a += static_cast<std::uintptr_t>(R.stride);
  RawRow2<T> w;
  w.valid = ok ? R.xmask : 0u;
  const Raw4<T> run = load4<T, kVec>(p, w.valid & 0xFu);
#pragma unroll
  for (int i = 0; i < 4; ++i) w.v[i] = run.v[i];
  w.h = T(0);
  if (w.valid & 0x10u) w.h = __ldg(p + R.halo);
  return w;
}

template <class T>
__device__ __forceinline__ float conv_bit(T v, unsigned valid, int bit) {
  return ((valid >> bit) & 1u) ? to_compute(v) : kInf;
}

template <class T>
__device__ __forceinline__ void assemble2(float (&row)[6], const RawRow2<T>& w, int lane) {
  const float h = conv_bit(w.h, w.valid, 4);
  assemble(row, conv_bit(w.v[0], w.valid, 0), conv_bit(w.v[1], w.valid, 1), conv_bit(w.v[2], w.valid, 2),
           conv_bit(w.v[3], w.valid, 3), h, h, lane);
}

// A thread walks down its 4 columns, so the comparisons of row y with row y+1 are those of row y+1
// with row y: gpu-opt carries their signs from a step to the next (change4_2d_carried: 2 FADD and 2
// PRMT a step for the row above instead of 12 and 9); gpu-opt-fresh-rows, the step before it, makes
// them afresh (change4_2d). kCarriesWords in gpu_opt_kernels.cuh.
template <class T, bool kVec, bool kEmit, int kMode>
__device__ __forceinline__ void step2(const float (&up)[6], const float (&mid)[6],
                                      const float (&dn)[6], DownSigns& carry, int t, int nrows, unsigned valid,
                                      std::int64_t out_index, EmitOut& out,
                                      ThreadAcc<T, kMode>& ta, BlockAcc<T, kMode>& ba,
                                      const GlobalAcc& acc) {
  if (t >= nrows) return;  // warp-uniform
  std::uint32_t s;
  if constexpr (kCarriesWords<kMode>) s = change4_2d_carried(carry, up, mid, dn, carry);
  else s = change4_2d(up, mid, dn);
  consume<T, kEmit, kMode, kVec>(s, kBias2, mid, valid, out_index, out, ta, ba, acc);
}

// kMinBlocks: the register budget (__launch_bounds__'s minimum resident blocks per SM). 2 gives
// 95 registers and no spills; 3 caps them at 80 with ~50 bytes of spills but 50 % more warps to
// hide the load latency (the kernel is latency-bound). Measured on the H100 (kernel scope,
// 8192^2): 3 is 1.26-1.32x faster on float32 uniform/GRF and uint8 (0.456 -> 0.363 ms,
// 0.837 -> 0.649 ms, 0.378 -> 0.287 ms), so it is the default; --blocks-2d 2 (OptTuning) runs the
// other instantiation for the ablation.
// The 16-bit shared bins' blocks (gpu-opt-bins16, gpu-opt-hash-bins16) are three of gpu-opt's in
// one (block_warps): one block an SM, the same register budget as kMinBlocks = 3 (80 registers).
template <class T, bool kVec, bool kEmit, int kMinBlocks = 3, int kMode = kModeOpt>
__global__ void __launch_bounds__(block_warps<T, kMode> * 32, block_warps<T, kMode> == kWarps ? kMinBlocks : 1)
    ecc2d_kernel(const T* __restrict__ buf, Geom g, GlobalAcc acc, EmitOut out) {
  constexpr int kBlockWarps = block_warps<T, kMode>;
  if constexpr (sizeof(T) == 2 && !kEmit)  // gpu-opt-sampled16: the sample chose the other kernel (Geom::gate)
    if (g.gate != nullptr && *g.gate != g.gate_open) return;
  __shared__ BlockAccStatic<T, kMode> ba_static;
  BlockAcc<T, kMode>& ba = block_acc<T, kMode>(ba_static);
  if constexpr (!kEmit) {
    ba.init();
    block_acc_barrier<T, kMode>();
  }
  ThreadAcc<T, kMode> ta(ba);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const std::int64_t nitems = g.items_x * (g.head_bands + g.items_s), stride = static_cast<std::int64_t>(gridDim.x) * kBlockWarps;
  std::int64_t item = static_cast<std::int64_t>(blockIdx.x) * kBlockWarps + warp;
  for (std::int64_t taken = 1; item < nitems; ++taken) {
    const bool took = wants_ticket(g, taken);  // warp-uniform
    std::uint32_t ticket = 0;
    if (took && lane == 0) ticket = atomicAdd(g.queue, 1u);
    const ItemSpan span = item_span(g, item, g.items_x);
    const std::int64_t x0 = span.in_band * kSegX + lane * kRun;
    const std::int64_t ya = span.first, yb = span.last;
    const int nrows = static_cast<int>(yb - ya);
    const std::int64_t xh = lane == 0 ? x0 - 1 : x0 + 4;
    const bool halo_ok = (lane == 0 || lane == 31) && xh >= 0 && xh < g.nx;
    Rows2 R;
    R.stride = g.nx * static_cast<std::int64_t>(sizeof(T));
    R.a = reinterpret_cast<std::uintptr_t>(buf) +
          static_cast<std::uintptr_t>(((ya - 1 - g.b0) * g.nx + x0) * static_cast<std::int64_t>(sizeof(T)));
    R.lo = ya == 0 ? 1 : 0;                                  // row ya - 1 = -1 is outside
    R.hi = static_cast<int>(min(yb, g.ny - 1) - (ya - 1));   // the item's reach: row yb
    R.xmask = run_mask(x0, g.nx) | (halo_ok ? 0x10u : 0u);
    R.halo = lane == 0 ? -1 : 4;
    const unsigned valid = R.xmask & 0xFu;
    const std::int64_t out0 = (ya - g.s0) * g.nx + x0;       // emit: the item's first voxel
    // float32 and uint16: the item's first six rows are all in flight before the first three are
    // assembled. Written as load rows 0-2, assemble them, load rows 3-5 (as uint8 still is), the
    // SASS waited for rows 0-2 (conversions and shuffles) before issuing rows 3-5's loads: two DRAM
    // round trips an item start, where Nsight Compute put ~15 % of uniform 8192^2's stall samples
    // (long scoreboard, outside the row loop). Measured on H100s against the previous order in
    // the same call: float32 8192^2 uniform 0.1600 -> 0.1570 ms, GRF
    // 0.1904 -> 0.1872 (this code); a binary with the same order plus an L2 prefetch
    // of the next item switched off, measured 0.152 / 0.185, with the prefetch on 0.159 / 0.189
    // (removed). uint8 8192^2 0.1295 -> 0.1311 with its six rows ahead (rows of 128 bytes a warp;
    // more registers live in an issue-bound loop), so uint8 keeps the old order.
    float A[6], B[6], C[6];
    const RawRow2<T> r0 = load_row2<T, kVec>(R, 0);
    const RawRow2<T> r1 = load_row2<T, kVec>(R, 1);
    const RawRow2<T> r2 = load_row2<T, kVec>(R, 2);
    constexpr bool kSixAhead = sizeof(T) > 1;
    if constexpr (!kSixAhead) {
      assemble2(A, r0, lane);
      assemble2(B, r1, lane);
      assemble2(C, r2, lane);
    }
    RawRow2<T> q0 = load_row2<T, kVec>(R, 3);
    RawRow2<T> q1 = load_row2<T, kVec>(R, 4);
    RawRow2<T> q2 = load_row2<T, kVec>(R, 5);
    // float32 and uint16: the warp's next item (lane 0's ticket, shuffled) worked out here, not
    // after the row loop, as the prefetch trial did: that binary with the prefetch off was
    // 3 % faster than the code before (0.1525 against 0.1573 ms, uniform 8192^2). Alone (against
    // the code before, same H100, kernel scope): uniform
    // 8192^2 0.1566 -> 0.1545, GRF 0.1886 -> 0.1865, uint16 65536 levels 0.7603 -> 0.7618; ptxas
    // spills 140/120 -> 124/100 bytes, row loop 485 -> 484 SASS instructions.
    std::int64_t next = nitems;
    if constexpr (kSixAhead) {
      next = item_after(g, item, stride, took, __shfl_sync(0xFFFFFFFFu, ticket, 0), nitems);
      assemble2(A, r0, lane);
      assemble2(B, r1, lane);
      assemble2(C, r2, lane);
    }
    // The signs of row ya - 1 against row ya, which the first step takes as its row above's.
    DownSigns carry{};
    if constexpr (kCarriesWords<kMode>) carry = down_signs(A, B);
    // Step t computes row ya + t (row index t + 1) from rows t, t + 1, t + 2; rows t + 6 .. t + 8
    // are loaded while steps t .. t + 2 compute.
    for (int t = 0; t < nrows; t += 3) {
      const RawRow2<T> n0 = load_row2<T, kVec>(R, t + 6);
      const RawRow2<T> n1 = load_row2<T, kVec>(R, t + 7);
      const RawRow2<T> n2 = load_row2<T, kVec>(R, t + 8);
      step2<T, kVec, kEmit, kMode>(A, B, C, carry, t, nrows, valid, out0 + t * g.nx, out, ta, ba, acc);
      assemble2(A, q0, lane);
      step2<T, kVec, kEmit, kMode>(B, C, A, carry, t + 1, nrows, valid, out0 + (t + 1) * g.nx, out, ta, ba, acc);
      assemble2(B, q1, lane);
      step2<T, kVec, kEmit, kMode>(C, A, B, carry, t + 2, nrows, valid, out0 + (t + 2) * g.nx, out, ta, ba, acc);
      assemble2(C, q2, lane);
      q0 = n0;
      q1 = n1;
      q2 = n2;
    }
    if constexpr (kSixAhead) {
      item = next;
    } else {
      item = item_after(g, item, stride, took, __shfl_sync(0xFFFFFFFFu, ticket, 0), nitems);
    }
  }
  if constexpr (!kEmit) {
    block_acc_barrier<T, kMode>();
    ba.flush(acc);
    release_queue(g);
  }
}

}  // namespace

KernelFn pick_kernel_2d(DType dt, bool vec, bool emit, int mode, int blocks) {
  return dispatch_dtype(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return pick_instantiation<T, 2, 3>(vec, emit, blocks, mode, [](auto v, auto e, auto blocks, auto m) {
      return reinterpret_cast<KernelFn>(&ecc2d_kernel<T, decltype(v)::value, decltype(e)::value, decltype(blocks)::value,
                                                   decltype(m)::value>);
    });
  });
}

}  // namespace repix::ecc::opt::detail
