// Internal: the registry of dataset kinds. A Kind says everything datasets/ knows about one kind
// (its keys, how its parameters are checked and canonicalised, how it is generated, streamed
// and typed); spec.cpp (grammar, validation) and datasets.cpp (generate, open_source, ...) only
// dispatch through it and never name a kind.
//
// Adding a kind: one file (datasets/<kind>.cpp) with its generator and `Kind <kind>_kind()`,
// declared below, and one line in the list in kinds.cpp (the order `repix list` shows). The
// list is the registration: no static initialisers (the library is a static archive, whose
// linker drops objects nothing references).
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/image.hpp"
#include "core/slab_source.hpp"
#include "datasets/spec.hpp"

namespace repix::datasets {

struct Kind {
  std::string name;                // the spec's first token, e.g. "uniform"
  std::string description;         // one line, for `repix list datasets`
  std::vector<std::string> keys;   // the keys it takes, in canonical order
  // Spec syntax KIND:PATH[:key=value]* (trailing key=value tokens are the keys, the rest is the
  // path) instead of KIND:SHAPE[:key=value]*; the shape then comes from the data.
  bool takes_path = false;
  bool two_d_only = false;         // refuses 1D and 3D shapes
  // Keys that make a spec the marker of the mask the same spec without them names
  // (mask_spec(), is_marker_spec()); empty for kinds without markers.
  std::vector<std::string> marker_keys;
  // Peak host memory while generating, as a multiple of the output's bytes (the generator's
  // working buffers beside the output; measured with /usr/bin/time on 8192^2 and 4096^2 images,
  // see the kind's file). generate() refuses a spec whose peak exceeds the available memory.
  double peak_factor = 1.0;

  // Checks the kind's parameters and fills in its defaults, in place. Called with the kind, the
  // key names, the shape (or the path) already checked; errors are repix::Error with the detail
  // only (the caller names the spec).
  std::function<void(Spec& s)> canonicalise;
  // The rest take a canonical spec of this kind.
  std::function<HostImage(const Spec& s, bool pinned)> generate;          // the whole dataset
  std::function<std::unique_ptr<SlabSource>(const Spec& s)> open_source;  // slabs on demand
  std::function<bool(const Spec& s)> chunk_addressable;  // open_source streams (never holds it all)
  // open_source's read_on_device makes slabs on the GPU (unset: never)
  std::function<bool(const Spec& s)> generates_on_device;
  std::function<DType(const Spec& s)> dtype;             // without generating it
  std::function<Shape(const Spec& s)> shape;             // without generating it
};

// Every kind, in the order of the list in kinds.cpp.
const std::vector<Kind>& registered_kinds();
// The kind called `name`; throws repix::Error "unknown kind 'x' (known: ...)".
const Kind& find_kind(const std::string& name);

// ---- the kinds, one factory each, defined in the kind's own file ----------------------------
namespace detail {
Kind uniform_kind();     // uniform.cpp
Kind grf_kind();         // grf.cpp
Kind const_kind();       // simple_kinds.cpp
Kind checker_kind();     // simple_kinds.cpp
Kind ramp_kind();        // simple_kinds.cpp
Kind blobs_kind();       // blobs.cpp
Kind noise_mask_kind();  // masks.cpp
Kind tissue_kind();      // masks.cpp
Kind sparse_kind();      // sparse.cpp
Kind texture_kind();     // texture.cpp
Kind file_kind();        // io.cpp
}  // namespace detail

// ---- building blocks for the kinds' files (kind.cpp) ----------------------------------------
namespace detail {

// An elementwise generator: fill(begin, end, dst) writes elements [begin, end) of the linear
// index range (x fastest) to dst as `dtype`. Each element depends only on its index, so any
// range can be produced alone and ranges can be filled in parallel.
struct Elementwise {
  DType dtype = DType::u8;
  std::function<void(std::int64_t begin, std::int64_t end, void* dst)> fill;
  // Elements [begin, end) written into device memory on `stream` with the values fill() gives;
  // empty where the kind has no GPU generator (SlabSource::read_on_device then says false).
  std::function<void(std::int64_t begin, std::int64_t end, void* device_dst, cudaStream_t stream)> fill_on_device;
};

// A kind whose elements are functions of their index (uniform, const, checker, ramp, sparse):
// chunk-addressable; generate, open_source, dtype and shape all come from `make`.
Kind elementwise_kind(std::string name, std::string description, std::vector<std::string> keys,
                      std::function<void(Spec&)> canonicalise, std::function<Elementwise(const Spec&)> make);
// A kind that can only produce its whole image (grf, blobs, masks) of one element type:
// open_source generates it and serves slabs from memory.
Kind whole_image_kind(std::string name, std::string description, std::vector<std::string> keys,
                      std::function<void(Spec&)> canonicalise, DType dtype,
                      std::function<HostImage(const Spec&, bool pinned)> generate);

// Serves slabs of an image it owns.
std::unique_ptr<SlabSource> make_owned_source(HostImage img);

// ---- for canonicalise functions: the checks Spec's getters make, and shared limits ---------
// Strict number parsing (the whole text is the number); errors name `key` (spec.cpp).
std::int64_t parse_int(const std::string& key, const std::string& v);
std::uint64_t parse_u64(const std::string& key, const std::string& v);
double parse_double(const std::string& key, const std::string& v);

// The largest value of a dtype as a double (1.0 for float32, whose values are in [0, 1]).
inline double dtype_max(DType t) { return t == DType::u8 ? 255.0 : t == DType::u16 ? 65535.0 : 1.0; }
// At most 2^48 elements (256 TiB of uint8); also the largest period and the like.
inline constexpr std::int64_t kMaxElements = std::int64_t(1) << 48;
// Refuses a shape (sides already positive) of more than kMaxElements elements, its product
// computed without overflow.
void check_shape_size(const Shape& sh);
// seed=, default 1, canonical: the shared key of the random kinds.
inline void canonicalise_seed(Spec& s) { s.params["seed"] = std::to_string(s.get_u64("seed", 1)); }

}  // namespace detail
}  // namespace repix::datasets
