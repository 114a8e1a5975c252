// Dataset specs: the strings that name an input everywhere (CLI, reports, tables, tests).
//
//   spec      := kind ':' SHAPE (':' key '=' value)*        generated data
//              | 'file:' PATH (':' key '=' value)*          a file (keys: shape, dtype)
//   SHAPE     := NX | NXxNY | NXxNYxNZ                      x first, as Shape::str()
//
//   uniform:SHAPE[:levels=N][:dtype=uint8|uint16|float32][:seed=S]
//   grf:SHAPE[:alpha=A][:seed=S]
//   const:SHAPE[:value=V][:dtype=D]
//   checker:SHAPE[:period=P][:dtype=D][:low=A][:high=B]
//   ramp:SHAPE[:dtype=D]
//   blobs:SHAPE[:radius=R][:fill=F][:seed=S]
//   noise-mask:WxH[:sigma=S][:seed=S][:marker=M[:radius=R|:h=H]]
//   tissue:WxH[:coverage=C][:seed=S][:marker=M[:radius=R|:h=H]]
//              M = opening (radius=, default 5) | h-minus (h=, default 20) | frame | single-seed
//   sparse:SHAPE[:density=F][:seed=S]
//   file:PATH[:shape=SHAPE][:dtype=D]
//
// Spec::parse validates everything (kind, keys allowed for that kind, numbers and their
// ranges) and fills in the defaults, so a parsed Spec is complete; str() prints the canonical
// form (keys in a fixed order per kind, defaults included). parse(str()) round-trips.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/image.hpp"

namespace repix::datasets {

struct Spec {
  std::string kind;                           // "uniform", "grf", ..., "file"
  Shape shape;                                // generated kinds; file: only when shape= given
  std::map<std::string, std::string> params;  // every key of the kind after parse (not shape)
  std::string path;                           // file: only

  // Canonical string. Validates like parse() (so a hand-built Spec gets its defaults too) and
  // throws repix::Error if the Spec is invalid.
  std::string str() const;
  static Spec parse(const std::string& text);

  bool has(const std::string& key) const { return params.count(key) != 0; }
  std::string get(const std::string& key, const std::string& def = "") const;
  // Typed getters; a value that does not parse throws repix::Error naming the key.
  double get_double(const std::string& key, double def) const;
  std::int64_t get_int(const std::string& key, std::int64_t def) const;
  std::uint64_t get_u64(const std::string& key, std::uint64_t def) const;
  // dtype= if present, else `def`.
  DType get_dtype(DType def) const;

  bool is_file() const { return kind == "file"; }
};

// Validates `s` and fills in every default; what parse() returns. Throws repix::Error.
Spec canonical(const Spec& s);

// The known kinds with a one-line description each, in the order `repix list` shows them.
std::vector<std::pair<std::string, std::string>> spec_kinds();

// Shortest decimal that reads back as the same double ("3", "0.45", "1e-07").
std::string format_double(double v);

}  // namespace repix::datasets
