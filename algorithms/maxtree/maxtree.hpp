// The max-tree (component tree) of a 2-D grey image, and the area opening it gives
// (Berger et al. 2007; Salembier et al. 1998; the tiled map-reduce and the GPU algorithm of
// Blin et al., IEEE TPDS 2022, seminar slides in shared/papers/maxtree-gpu-blin-2021-slides.txt).
//
// Input: a 2-D uint8 or uint16 image f (H x W, any side >= 1, linear index y*W + x),
// connectivity 4 or 8.
//
// Nodes. For each level v and each connected component C of {f >= v} that holds a pixel of value
// exactly v there is one node; its proper pixels are the pixels of C with value v; its area is |C|.
//
// Output, the parent image in normal form (same shape as f; int32, int64 from 2^31 pixels on):
// - the canonical pixel of a node is the smallest linear index among its proper pixels;
// - a non-canonical pixel points to its node's canonical pixel;
// - a canonical pixel points to the canonical pixel of its parent node (the node of the highest
//   level below v whose component contains C);
// - the root's canonical pixel (the smallest index holding min(f)) points to itself.
// This form is unique, so every variant must produce it exactly; a pixel p is canonical iff
// parent[p] == p or f[parent[p]] != f[p].
//
// Area opening with threshold A >= 1: out(p) = the level of the deepest node on the path from p's
// node to the root (p's node included) whose area is >= A. The root is always kept, so the result
// never falls below min(f). (scikit-image's area_opening returns zeros when the whole image is
// smaller than A; ours returns min(f) everywhere there.) The output has the input's dtype.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/image.hpp"
#include "core/variant.hpp"
#include "core/uninitialized_vector.hpp"

namespace repix::maxtree {

struct Options {
  int connectivity = 4;     // 4 or 8
  int threads = 0;          // CPU variants: OpenMP threads; 0 = OpenMP's default
  int tile = 0;             // omp: tile edge in pixels; 0 = automatic (256)
  std::int64_t area = 100;  // area opening: the threshold A (>= 1; `repix run` asks for it)
  bool wide_index = false;  // int64 parents even below 2^31 pixels (tests of the wide path)
};

// What a run counts of itself (phase times in ms; zero where a variant has no such phase).
struct Stats {
  std::int64_t tiles = 0;   // omp: tiles built independently
  double build_ms = 0;      // local trees (the whole tree for the sequential variants)
  double merge_ms = 0;      // omp: the border merges
  double canonical_ms = 0;  // canonicalisation to the normal form
  double filter_ms = 0;     // area opening: the area attribute and the filter
  // gpu-border: the strips' border pixels, the nodes of their compact border trees (the closures),
  // and the strips whose closure did not fit in shared memory (merged in global memory instead).
  std::int64_t border_pixels = 0, border_nodes = 0, border_fallback_strips = 0;
};

// The parent image: int32 below 2^31 pixels, int64 from there on (or when asked: wide_index).
struct ParentImage {
  Shape shape;
  // Sized by the variants, which then write every element (so resize() does not zero them).
  UninitializedVector<std::int32_t> narrow;  // used when !wide
  UninitializedVector<std::int64_t> wide_;   // used when wide
  bool wide = false;

  std::int64_t size() const { return shape.size(); }
  std::int64_t operator[](std::int64_t i) const { return wide ? wide_[static_cast<std::size_t>(i)] : narrow[static_cast<std::size_t>(i)]; }
  template <class I> UninitializedVector<I>& data();
  bool operator==(const ParentImage& o) const {
    if (shape != o.shape) return false;
    if (wide == o.wide) return narrow == o.narrow && wide_ == o.wide_;
    for (std::int64_t i = 0; i < size(); ++i)
      if ((*this)[i] != o[i]) return false;
    return true;
  }
};
template <> inline UninitializedVector<std::int32_t>& ParentImage::data<std::int32_t>() { return narrow; }
template <> inline UninitializedVector<std::int64_t>& ParentImage::data<std::int64_t>() { return wide_; }

struct Result {
  ParentImage parent;
  Stats stats;
};

// The area opening's output: the input's dtype and shape.
struct AreaResult {
  HostImage image;
  Stats stats;
};

// GPU variants' plans (core/variant.hpp), input {image}: the tree, or the tree and its area
// opening (gpu_engine.cuh).
using DevicePlan = repix::DevicePlan<Options, Result, Stats>;
using AreaDevicePlan = repix::DevicePlan<Options, AreaResult, Stats>;

// One area-opening variant per tree variant, with the same id: that tree, then the area filter
// (on the CPU after a CPU tree, on the GPU after a GPU tree).
struct AreaVariant : repix::Variant<AreaResult(const HostImage& image, const Options&), AreaDevicePlan> {};

struct Variant : repix::Variant<Result(const HostImage& image, const Options&), DevicePlan> {
  bool parallel = false;  // its area opening accumulates and filters in parallel (OpenMP)
  // GPU variants: the area-opening variant with tree and filter on the GPU; empty: the registry
  // wraps `run` and the CPU filter (maxtree::area_opening).
  std::function<AreaVariant()> make_area;
};

const std::vector<Variant>& variants();
const Variant& find_variant(const std::string& id);
const std::vector<AreaVariant>& area_variants();
const AreaVariant& find_area_variant(const std::string& id);

// Throws repix::Error (one line) unless the image is 2-D, non-empty, uint8 or uint16 and the
// connectivity is 4 or 8 (and, for the area opening, A >= 1).
void check_input(const HostImage& image, const Options& opt);
void check_input(const InputDesc& in, const Options& opt);  // the same, for a GPU plan's setup()
void check_area_input(const HostImage& image, const Options& opt);
void check_area_input(const InputDesc& in, const Options& opt);  // the same, for a GPU plan's setup()

// The area opening of `image` given its parent image in normal form, `threads` OpenMP threads
// (1: sequential; 0: OpenMP's default). Every tree variant feeds it.
HostImage area_opening(const HostImage& image, const ParentImage& parent, std::int64_t area, int threads);

// The number of nodes of a parent image in normal form (its canonical pixels).
std::int64_t count_nodes(const HostImage& image, const ParentImage& parent);

// Another library's max-tree of `image` mapped to the normal form above, for comparing it with
// ours: `parent` (linear indices) may pick any pixel of a node as its representative (scikit-image:
// not the smallest index), as long as every pixel points to a pixel of its own node or, for the
// representative, to a pixel of the parent node (the root to itself). Throws repix::Error (one
// line) for what is no such tree: a size other than the image's, an index out of range, a parent
// above its child, or a same-level cycle. Sequential (a check, not a variant).
ParentImage normal_form_of(const HostImage& image, const std::vector<std::int64_t>& parent);

}  // namespace repix::maxtree
