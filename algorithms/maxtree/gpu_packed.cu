// `gpu-packed`: gpu-compressed with the tile build of Blin et al.'s published code, which on the
// H100 ran 3.1x faster than gpu-compressed (then called gpu-opt:
// 1.98 against 6.24 ms at 6000x4000, its build alone 3.81 ms). What it takes from
// that design (read, not copied; packed_engine.cuh, packed_core.hpp):
//  - one block of 64 threads a 64x16 tile, one thread a column, instead of 1024 threads a tile:
//    each thread loads its column, builds the column's 1-D tree with no atomics
//    (gpu_core::build_column_tree), then zips its column with the neighbouring one row by row,
//    grid-pruned (gpu_core::grid_prunes; the vertical edges are in the column trees), so 63 threads
//    zip a tile's rows where gpu-compressed's 1024 contend on them; 5 KB of shared memory a block,
//    up to 32 blocks an SM;
//  - with 8-connectivity, one zip per 2x2 block of two columns and two rows, between the higher pixel
//    of each column (packed_core::for_each_tile_zip has why that implies the block's three edges),
//    where gpu-compressed zips the three;
//  - the packed tile word (packed_core.hpp): parent index and parent level in one 32-bit word, so a
//    zip step's climb needs one shared load, not two dependent ones;
//  - the grid-connection pruning on the tile borders as well (their merges' "optim" kernels): the
//    border merges skip the straight edges the pairs beside them imply
//    (gpu_core::horizontal_border_prunes, vertical_border_prunes: the argument is written there);
//    with 8-connectivity one zip per 2x2 block across the borders too, as in the tiles
//    (gpu_core::for_each_column_border_zip, for_each_row_border_zip; not yet measured on a GPU when
//    written, later: the in-tile blocks took the 8-connected kernel from 9.2 to 5.1 ms).
// The zip stays ours (a validated CAS, packed_core::merge_step); gpu-opt takes the seminar's
// monotone one (packed_core::monotone_zip).
// Everything else (compressed tiles written out, the two border-merge kernels with relaxed loads, the
// walk-then-jump flatten) is gpu-compressed's; gpu-opt adds what it changes after the tile build.
// On the H100 (without the in-place flatten) 4.14 ms at 6000x4000 8-bit, of which 1.25 ms the flatten.
#include "maxtree/packed_engine.cuh"
#include "maxtree/variants.hpp"

namespace repix::maxtree::gpu {

Variant gpu_packed_variant() {
  return make_gpu_variant<PackedTiles<PackedPolicy>::type>(
      "gpu-packed", "packed-tiles",
      "gpu-compressed with Blin et al.'s tile build: 64 threads a tile, one a column, column trees, grid-pruned "
      "zips on packed (parent level, parent index) words; the border merges grid-pruned too");
}

}  // namespace repix::maxtree::gpu
