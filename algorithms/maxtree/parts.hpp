// The max-tree and area opening of an image cut into parts of whole rows, each part's tree built
// alone (by any variant, as if the part were the whole image) and then merged along the cuts: the
// decomposition of the distributed runs (harness/families/maxtree/distributed.hpp), kept here
// so that tests/maxtree/ checks it against seq without MPI.
//
// The merge is the boundary-tree merge of distributed component trees (Götz et al., TPDS 2018;
// Kazemier, Ouzounis & Wilkinson, ISMM 2017), done in one step rather than pairwise:
// - A part's border tree is the nodes of its edge rows (the rows next to another part) with all
//   their ancestors in the part's tree. A component of the whole image that holds no pixel of an
//   edge row lies inside one part, where its node and its parent node are the whole image's (its
//   neighbours, all inside the part, are below its parent's level); only border nodes change.
// - The border trees of all parts, joined by the edges between facing pixels of neighbouring edge
//   rows, are a small graph whose vertices carry levels. Its max-tree (Berger's union-find, levels
//   descending) is the whole image's tree on the components that reach an edge row: border nodes
//   of one level joined across a cut become one node, whose canonical pixel is the smallest of
//   theirs (the normal form's smallest index), and whose area is the sum over its subtree of what
//   each border node adds (its part's subtree area less its border children's).
// Border trees are small (a closure of two rows: 10^4-10^5 nodes at 24000 columns of a natural
// image), so every rank merges all of them itself after one all-gather: no rounds, no tree
// messages, and the same answer everywhere.
#pragma once
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "maxtree/maxtree.hpp"

namespace repix::maxtree::parts {

// One node of a part's border tree; ids are canonical pixels as indices of the whole image.
struct BorderNode {
  std::int64_t id = 0;
  std::int64_t parent = 0;  // its parent node's id in the part's tree (its own id at the part's root)
  std::int64_t area = 0;    // the pixels of its subtree in the part (0 where areas are not wanted)
  std::uint32_t level = 0;
};

// What a part tells the others.
struct Border {
  std::int64_t first_row = 0, last_row = 0, width = 0;  // the part's rows [first, last) of the image
  std::vector<BorderNode> nodes;                         // the edge rows' nodes and their ancestors
  std::vector<std::int64_t> top, bottom;  // each pixel's node id in the first / last row; empty where
                                          // no part lies above / below

  std::vector<char> bytes() const;
  static Border from_bytes(const std::vector<char>& bytes);  // throws repix::Error when damaged
};

// The whole image's tree at the border nodes of every part, from merge().
struct Merged {
  std::unordered_map<std::int64_t, std::size_t> slot;  // a border node's id -> its index below
  std::vector<std::int64_t> canonical;  // the canonical pixel of the whole image's node it lies in
  std::vector<std::int64_t> parent;     // that node's parent's canonical pixel (its own at the root)
  std::vector<std::int64_t> area;       // that node's area (where the borders carried areas)
  std::vector<std::uint32_t> kept;      // area opening: the level its pixels get (where asked)
  std::int64_t nodes = 0;               // the whole image's nodes among them
};

// Merges the borders of the non-empty parts, in row order (each part's first row the previous
// one's last), with `connectivity` 4 or 8. min_area >= 1 also decides the area opening's levels
// (kept); 0 leaves them out. Throws repix::Error for borders that do not fit together.
Merged merge(const std::vector<Border>& borders, int connectivity, std::int64_t min_area);

// One part's tree. Its storage stays from one build() to the next (a distributed bench builds the
// same part again and again: fresh pages would cost more than the passes).
class PartTree {
 public:
  PartTree();
  ~PartTree();
  PartTree(PartTree&&) noexcept;
  PartTree& operator=(PartTree&&) noexcept;

  // The part's rows [first_row, first_row + rows.ny) of an image of `image_rows` rows (kept by
  // reference: they must outlive the next build), and their parent image in normal form with the
  // part's own indices (any variant's, the part taken as the whole image). with_areas: the area
  // attribute too (the area opening's).
  void build(const HostImage& rows, ParentImage parent, std::int64_t first_row, std::int64_t image_rows,
             bool with_areas, int threads);
  Border border() const;
  // The part's rows of the whole image's parent image in normal form (indices of the whole image;
  // int64 where it has 2^31 pixels or more, as the single process writes), into `out` (its
  // storage reused where it fits).
  void whole_image_parents(const Merged& merged, int threads, ParentImage& out) const;
  // The part's rows of the whole image's area opening (needs with_areas and merge()'s kept), into
  // `out` (reused where it has the part's dtype and shape).
  void area_opening(const Merged& merged, std::int64_t min_area, int threads, HostImage& out) const;
  // The part's own nodes (canonical pixels), border nodes included.
  std::int64_t nodes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace repix::maxtree::parts
