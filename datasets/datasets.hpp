// Dataset generators and sources. See spec.hpp for the spec grammar.
//
// Determinism: the same spec (seed included) gives the same bytes on every machine, compiler
// and thread count. Random kinds draw from Philox4x32-10 (core/philox.hpp) keyed by the seed;
// floating-point work uses only exactly-rounded IEEE operations and the det:: functions
// (core/det_math.hpp), compiled without FMA contraction. A golden-checksum test guards this.
//
// Kinds and how they are produced (each kind is defined in its own file with its generator and
// registered by one line in kinds.cpp; see kind.hpp and README.md):
//   uniform  chunk-addressable. Element i (linear index, x fastest) takes
//            w = philox::bits_at(seed, i, kStreamUniform) (word i%4 of the Philox block at
//            counter i/4); integer levels L: philox::uniform_below(w, L); float32 without
//            levels: philox::uniform_float(w), 24 bits in [0, 1).
//   const, checker, ramp   chunk-addressable (pure functions of the coordinates).
//   grf      whole-image only (a global inverse FFT): complex noise, frequency index i draws
//            philox::normal_pair(philox::draw(seed, i, kStreamGrf)) as (re, im), times
//            |k|^(-alpha/2) with integer FFT frequencies (k, k-n in the upper half), DC zero;
//            inverse FFT along each axis (datasets/fft.hpp); real part; standardised to mean 0,
//            population std 1 (double, fixed summation order); std::round(x*100)/100; float32.
//   blobs    whole-image only: balls of the radius, centre j from philox::draw(seed, j,
//            kStreamBlobs), painted 255 on 0 in order until at least fill of the elements are
//            covered (the last ball is always painted whole).
//   noise-mask  whole-image only, uint8: 16-bit Philox noise (philox::bits_at(seed, i,
//            kStreamNoiseMask) >> 16), three box blurs (integer rounded means, edges repeated)
//            of radius round((sqrt(4 sigma^2 + 1) - 1) / 2) >= 1 (std ~ sigma), stretched
//            linearly to 0..255 (integer arithmetic).
//   tissue   whole-image only, uint8: blobby "tissue" covering `coverage` % of the pixels: a
//            low-frequency field (noise of kStreamTissueShape, three box blurs of radius
//            max(2, min(W,H)/24), stretched to 0..65535) thresholded at the highest level with
//            at least coverage % of the pixels at or above it; a texture (kStreamTissueTexture,
//            three blurs of radius 2, 0..65535) maps to 96..255 inside and 0..47 outside.
//   markers  noise-mask and tissue specs with marker= produce the marker of the mask the same
//            spec without marker/radius/h names (mask_spec()): `opening` (grey opening,
//            erosion then dilation, by the disk dx^2+dy^2 <= radius^2, the border excluded;
//            computed per row as the extreme over the disk's horizontal chords of van Herk /
//            Gil-Werman running extremes: O((2r+1) n), fine at 8192^2), `h-minus` (max(mask-h,
//            0)), `frame` (the mask on the image border, 0 inside: the longest propagation
//            paths), `single-seed` (the mask at its first brightest pixel, 0 elsewhere).
//            Every marker is <= its mask.
//   sparse   chunk-addressable: uint8 255 with element i background (0) iff
//            philox::bits_at(seed, i, kStreamSparse) < floor(density * 2^32).
//   file     .npy and .raw/.dat stream slabs from disk; images are read whole.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/image.hpp"
#include "core/slab_source.hpp"
#include "datasets/spec.hpp"

namespace repix::datasets {

// Philox streams (counter word 2) of the random kinds: one seed gives independent data per kind.
inline constexpr std::uint32_t kStreamUniform = 0x756e6966;  // "unif"
inline constexpr std::uint32_t kStreamGrf = 0x67726620;      // "grf "
inline constexpr std::uint32_t kStreamBlobs = 0x626c6f62;    // "blob"
inline constexpr std::uint32_t kStreamNoiseMask = 0x6e6d736b;      // "nmsk"
inline constexpr std::uint32_t kStreamTissueShape = 0x74736870;    // "tshp"
inline constexpr std::uint32_t kStreamTissueTexture = 0x74746578;  // "ttex"
inline constexpr std::uint32_t kStreamSparse = 0x73707273;   // "sprs"

// The whole dataset in host memory (pinned if asked and a GPU exists). Loads file: specs.
HostImage generate(const Spec& spec, bool pinned = false);
HostImage generate(const std::string& spec, bool pinned = false);

// Slabs on demand (see core/slab_source.hpp). For uniform/const/checker/ramp any slab range is
// computed on its own, in O(slab) time and memory, so e.g. uniform:4096x4096x4096 (256 GiB as
// float32) can be streamed. grf and blobs are not chunk-addressable (grf's inverse FFT couples
// every element): their source generates the whole image on construction and then serves
// slabs from memory. file: sources read each slab range with one seek and one read.
// A source is not thread-safe: give each thread its own.
std::unique_ptr<SlabSource> open_source(const Spec& spec);

// True when open_source(spec) streams without holding the whole image.
bool is_chunk_addressable(const Spec& spec);
// True when open_source(spec)'s read_on_device makes slabs on the GPU (uniform).
bool generates_on_device(const Spec& spec);

// The element type and shape a spec produces, without generating it (file: reads the header).
DType spec_dtype(const Spec& spec);
Shape spec_shape(const Spec& spec);

// The bytes of the image a spec produces, and the peak host memory producing it takes (the kind's
// working buffers included: Kind::peak_factor times the image's bytes), without producing it (a
// file's header is read). Both 0 for image files (their decoder's needs are unknown).
// generate() and open_source() (for kinds that are not chunk-addressable) refuse a spec whose
// peak exceeds the host memory available (core/host_limits.hpp) with repix::Error.
std::uint64_t image_bytes(const Spec& spec);
std::uint64_t peak_host_bytes(const Spec& spec);

// Marker specs (noise-mask/tissue with marker=): the spec of their mask, i.e. the same spec
// without the marker, radius and h keys. Any other spec is returned unchanged (canonical).
Spec mask_spec(const Spec& marker_spec);
bool is_marker_spec(const Spec& spec);

// (name, one-line description) of every kind, for `repix list`.
std::vector<std::pair<std::string, std::string>> kinds();

}  // namespace repix::datasets
