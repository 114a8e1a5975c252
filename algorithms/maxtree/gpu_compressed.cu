// `gpu-compressed` (formerly called gpu-opt): gpu-grid plus what the H100 measurements of the
// seminar's steps pointed at
// (6000x4000 camera, build 3.5 ms, border merges
// 2.4 ms, flatten 2.7 ms):
//  - each tile's tree is written compressed (gpu_core::compressed_parent): every pixel straight to
//    its node's in-tile level root, each level root to its parent node's, so the border merges
//    climb one link per node instead of the node's chain, and most same-level chains end in one link;
//  - the flatten starts by walking each chain (walk_kernel, up to kWalkHops links) instead of
//    log2(longest chain) + 1 pointer-jumping rounds with a host sync each; jump rounds only finish
//    the chains the walk did not (plateaus spanning many tiles);
//  - the merges' loads are relaxed atomic loads instead of atomicOr(p, 0) (RelaxedLoadAtomics).
// Everything else (tiles, grid pruning, border merges, normal form, download) is gpu-grid's.
#include "maxtree/gpu_tile_engine.cuh"
#include "maxtree/variants.hpp"

namespace repix::maxtree::gpu {

// Its policy, CompressedPolicy, is in gpu_tile_engine.cuh: gpu-packed and gpu-opt build on it.
Variant gpu_compressed_variant() {
  return make_gpu_variant<TiledBuild<CompressedPolicy>::type>(
      "gpu-compressed", "compressed-tiles",
      "gpu-grid with each tile's tree written compressed, relaxed atomic loads in the merges, and a flatten that "
      "walks the short chains in one pass (pointer jumping only for what it leaves)");
}

}  // namespace repix::maxtree::gpu
