// `gpu-tile-1d`: gpu-tile with Blin et al.'s column trees (their pipeline's step 2, after Menotti et
// al.'s linear 1-D component tree): in each 64x16 tile one thread a column builds the column's
// max-tree in one pass down its 16 pixels (gpu_core::build_column_tree: the chain of level roots is
// the stack), then the threads zip only the edges across columns (left, and the diagonals with
// 8-connectivity), the vertical zips being in the column trees already. Everything else (border
// merges, flatten) is gpu-tile's. A sibling of gpu-grid (both change gpu-tile's build only); the
// later variants gpu-packed and gpu-opt take the column trees.
#include "maxtree/gpu_tile_engine.cuh"
#include "maxtree/variants.hpp"

namespace repix::maxtree::gpu {
namespace {

struct ColumnTreesPolicy : SeminarPolicy {
  static constexpr bool kColumnTrees = true;
};

}  // namespace

Variant gpu_tile_1d_variant() {
  return make_gpu_variant<TiledBuild<ColumnTreesPolicy>::type>(
      "gpu-tile-1d", "column-trees",
      "gpu-tile with one thread a tile column building the column's 1-D max-tree (Menotti et al.) before the "
      "zips across columns");
}

}  // namespace repix::maxtree::gpu
