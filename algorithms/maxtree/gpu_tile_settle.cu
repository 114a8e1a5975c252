// `gpu-tile-settle`: gpu-paired-loads with the flatten's walks a tile at a time (the engine's
// settle_tiles_kernel: one 256-thread block a 64 x 16 tile), so that the walks of a tile, which
// mostly end inside it, find its parents and levels in their SM's L1; in raster order a block's
// pixels spanned four tiles of one row and climbed into rows other SMs had loaded.
// On the H200 (6000x4000 8-bit, 4-connectivity, Nsight Compute): the flatten 290 -> 224 us, the L2 at
// 49 % of its peak instead of 74 %; the kernel 1.858 -> 1.790 ms in one process (Blin's code 1.970).
#include "maxtree/packed_engine.cuh"
#include "maxtree/variants.hpp"

namespace repix::maxtree::gpu {

Variant gpu_tile_settle_variant() {
  return make_gpu_variant<PackedTiles<TileSettlePolicy>::type>(
      "gpu-tile-settle", "tile-settle", "gpu-paired-loads with the flatten's walks a tile at a time, the tile's parents in one SM's L1");
}

}  // namespace repix::maxtree::gpu
