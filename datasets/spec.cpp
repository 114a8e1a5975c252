#include "datasets/spec.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace repix::datasets {
namespace {

struct KindDef {
  const char* name;
  const char* description;
  std::vector<std::string> keys;  // allowed keys, in canonical order
};

const std::vector<KindDef>& kind_table() {
  static const std::vector<KindDef> table = {
      {"uniform", "i.i.d. uniform noise: integers 0..levels-1, or float32 in [0,1) without levels",
       {"levels", "dtype", "seed"}},
      {"grf", "Gaussian random field, power spectrum |k|^-alpha (ECC paper's inputs), float32, 0.01 steps",
       {"alpha", "seed"}},
      {"const", "every element equal to value", {"value", "dtype"}},
      {"checker", "checkerboard of period-sized squares/cubes alternating low and high",
       {"period", "dtype", "low", "high"}},
      {"ramp", "element = its linear index (mod 2^bits for integer dtypes)", {"dtype"}},
      {"blobs", "uint8 0/255 union of random disks/balls of a radius until fill is covered",
       {"radius", "fill", "seed"}},
      {"noise-mask", "uint8 smoothed noise 0..255 (box blurs, std ~ sigma); marker= gives a marker of it",
       {"sigma", "seed", "marker", "radius", "h"}},
      {"tissue", "uint8 blobby textured tissue covering coverage % of the image; marker= gives a marker of it",
       {"coverage", "seed", "marker", "radius", "h"}},
      {"sparse", "uint8 255 with zero (background) points at random, each element with probability density",
       {"density", "seed"}},
      {"file", "an .npy, .raw/.dat (needs shape= and dtype=) or image file", {"shape", "dtype"}},
  };
  return table;
}

const KindDef* find_kind(const std::string& name) {
  for (const auto& k : kind_table())
    if (name == k.name) return &k;
  return nullptr;
}

std::string known_kinds() {
  std::string s;
  for (const auto& k : kind_table()) s += (s.empty() ? "" : ", ") + std::string(k.name);
  return s;
}

std::string allowed_keys(const KindDef& k) {
  std::string s;
  for (const auto& key : k.keys) s += (s.empty() ? "" : ", ") + key;
  return s.empty() ? "none" : s;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  for (;;) {
    const std::size_t end = s.find(sep, pos);
    out.push_back(s.substr(pos, end == std::string::npos ? std::string::npos : end - pos));
    if (end == std::string::npos) return out;
    pos = end + 1;
  }
}

// ---- strict number parsing: the whole text must be the number ---------------------------------
std::int64_t parse_int(const std::string& key, const std::string& v) {
  const std::size_t digits_from = (!v.empty() && (v[0] == '-' || v[0] == '+')) ? 1 : 0;
  if (v.size() == digits_from || v.find_first_not_of("0123456789", digits_from) != std::string::npos)
    throw Error(key + "='" + v + "' is not an integer");
  errno = 0;
  const long long x = std::strtoll(v.c_str(), nullptr, 10);
  if (errno == ERANGE) throw Error(key + "='" + v + "' is out of range");
  return x;
}

std::uint64_t parse_u64(const std::string& key, const std::string& v) {
  if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos)
    throw Error(key + "='" + v + "' is not a non-negative integer");
  errno = 0;
  const unsigned long long x = std::strtoull(v.c_str(), nullptr, 10);
  if (errno == ERANGE) throw Error(key + "='" + v + "' is out of range (at most 2^64-1)");
  return x;
}

double parse_double(const std::string& key, const std::string& v) {
  // strtod would also accept leading spaces, hex floats, "inf" and "nan": refuse them here.
  if (v.empty() || v.find_first_not_of("0123456789+-.eE") != std::string::npos)
    throw Error(key + "='" + v + "' is not a number");
  char* end = nullptr;
  errno = 0;
  const double x = std::strtod(v.c_str(), &end);
  if (end != v.c_str() + v.size()) throw Error(key + "='" + v + "' is not a number");
  if (errno == ERANGE || !std::isfinite(x)) throw Error(key + "='" + v + "' is out of range");
  return x;
}

double dtype_max(DType t) { return t == DType::u8 ? 255.0 : t == DType::u16 ? 65535.0 : 1.0; }

// A value to be stored in dtype t: integers in range for integer dtypes, any finite number
// (rounded to float32 when stored) for float32. Returns its canonical text.
std::string canonical_value(const std::string& key, const std::string& v, DType t) {
  if (t == DType::f32) return format_double(parse_double(key, v));
  const std::int64_t x = parse_int(key, v);
  if (x < 0 || x > static_cast<std::int64_t>(dtype_max(t)))
    throw Error(key + "=" + v + " does not fit in " + dtype_name(t) + " (0.." +
                std::to_string(static_cast<std::int64_t>(dtype_max(t))) + ")");
  return std::to_string(x);
}

DType param_dtype(const std::map<std::string, std::string>& p, DType def) {
  const auto it = p.find("dtype");
  return it == p.end() ? def : parse_dtype(it->second);
}

// Validates s and fills in the defaults. Errors carry only the detail; callers add the spec.
Spec canonical_impl(const Spec& in) {
  const KindDef* kd = find_kind(in.kind);
  if (!kd) throw Error("unknown kind '" + in.kind + "' (known: " + known_kinds() + ")");
  for (const auto& [key, value] : in.params) {
    bool ok = false;
    for (const auto& k : kd->keys) ok = ok || k == key;
    if (!ok)
      throw Error("unknown key '" + key + "' for " + in.kind + " (allowed: " + allowed_keys(*kd) + ")");
  }
  Spec s = in;
  auto& p = s.params;
  const std::string seed_text = p.count("seed") ? p["seed"] : "1";

  if (s.kind == "file") {
    if (s.path.empty()) throw Error("file: needs a path (file:PATH[:shape=..][:dtype=..])");
    if (p.count("shape")) {
      s.shape = Shape::parse(p["shape"]);
      p["shape"] = s.shape.str();
    }
    if (p.count("dtype")) p["dtype"] = dtype_name(parse_dtype(p["dtype"]));
    return s;
  }
  if (!s.path.empty()) throw Error("only file: specs have a path");
  if (s.shape.size() <= 0 || s.shape.ndim < 1 || s.shape.ndim > 3)
    throw Error("missing or empty shape (e.g. " + s.kind + ":512x512)");
  // Guard the element count against overflow and absurd sizes (2^48 elements = 256 TiB of u8).
  const std::int64_t limit = std::int64_t(1) << 48;
  if (s.shape.nx > limit / s.shape.ny || s.shape.nx * s.shape.ny > limit / s.shape.nz)
    throw Error("shape " + s.shape.str() + " is too large (at most 2^48 elements)");

  if (s.kind == "uniform") {
    const bool has_dtype = p.count("dtype") != 0;
    const DType given = param_dtype(p, DType::f32);
    if (p.count("levels")) {
      const std::int64_t levels = parse_int("levels", p["levels"]);
      if (levels < 1 || levels > (1 << 24))
        throw Error("levels=" + p["levels"] + " is out of range (1..16777216)");
      const DType dt = has_dtype ? given
                       : levels <= 256 ? DType::u8 : levels <= 65536 ? DType::u16 : DType::f32;
      if (static_cast<double>(levels - 1) > dtype_max(dt) && dt != DType::f32)
        throw Error("levels=" + std::to_string(levels) + " does not fit in " + dtype_name(dt));
      p["levels"] = std::to_string(levels);
      p["dtype"] = dtype_name(dt);
    } else {
      // Integer dtype without levels: the dtype's full range.
      if (given != DType::f32) p["levels"] = given == DType::u8 ? "256" : "65536";
      p["dtype"] = dtype_name(given);
    }
    p["seed"] = std::to_string(parse_u64("seed", seed_text));
  } else if (s.kind == "grf") {
    p["alpha"] = format_double(p.count("alpha") ? parse_double("alpha", p["alpha"]) : 3.0);
    p["seed"] = std::to_string(parse_u64("seed", seed_text));
  } else if (s.kind == "const") {
    const DType dt = param_dtype(p, DType::u8);
    p["dtype"] = dtype_name(dt);
    p["value"] = canonical_value("value", p.count("value") ? p["value"] : "0", dt);
  } else if (s.kind == "checker") {
    const DType dt = param_dtype(p, DType::u8);
    p["dtype"] = dtype_name(dt);
    const std::int64_t period = p.count("period") ? parse_int("period", p["period"]) : 8;
    if (period < 1 || period > limit) throw Error("period=" + p["period"] + " must be >= 1");
    p["period"] = std::to_string(period);
    p["low"] = canonical_value("low", p.count("low") ? p["low"] : "0", dt);
    p["high"] = canonical_value("high", p.count("high") ? p["high"] : format_double(dtype_max(dt)), dt);
  } else if (s.kind == "ramp") {
    p["dtype"] = dtype_name(param_dtype(p, DType::u8));
  } else if (s.kind == "blobs") {
    const double radius = p.count("radius") ? parse_double("radius", p["radius"]) : 16.0;
    if (!(radius >= 0.5 && radius <= 1e6)) throw Error("radius=" + p["radius"] + " must be in [0.5, 1e6]");
    const double fill = p.count("fill") ? parse_double("fill", p["fill"]) : 0.5;
    // Covering close to everything needs ever more balls (coupon collector): stop at 0.99.
    if (!(fill > 0.0 && fill <= 0.99)) throw Error("fill=" + p["fill"] + " must be in (0, 0.99]");
    p["radius"] = format_double(radius);
    p["fill"] = format_double(fill);
    p["seed"] = std::to_string(parse_u64("seed", seed_text));
  } else if (s.kind == "noise-mask" || s.kind == "tissue") {
    if (s.shape.ndim != 2) throw Error(s.kind + " is 2D only (e.g. " + s.kind + ":1024x1024)");
    if (s.kind == "noise-mask") {
      const double sigma = p.count("sigma") ? parse_double("sigma", p["sigma"]) : 4.0;
      if (!(sigma >= 0.5 && sigma <= 1e4)) throw Error("sigma=" + p["sigma"] + " must be in [0.5, 10000]");
      p["sigma"] = format_double(sigma);
    } else {
      const std::int64_t c = p.count("coverage") ? parse_int("coverage", p["coverage"]) : 50;
      if (c < 1 || c > 100) throw Error("coverage=" + p["coverage"] + " must be a percentage in 1..100");
      p["coverage"] = std::to_string(c);
    }
    p["seed"] = std::to_string(parse_u64("seed", seed_text));
    const std::string marker = p.count("marker") ? p["marker"] : "";
    if (!marker.empty() && marker != "opening" && marker != "h-minus" && marker != "frame" && marker != "single-seed")
      throw Error("marker=" + marker + " is not one of opening, h-minus, frame, single-seed");
    if (p.count("marker") && marker.empty()) throw Error("marker= needs a value (opening, h-minus, frame, single-seed)");
    if (p.count("radius") && marker != "opening") throw Error("radius= belongs to marker=opening");
    if (p.count("h") && marker != "h-minus") throw Error("h= belongs to marker=h-minus");
    if (marker == "opening") {
      const std::int64_t r = p.count("radius") ? parse_int("radius", p["radius"]) : 5;
      if (r < 0 || r > 1000) throw Error("radius=" + p["radius"] + " must be in 0..1000");
      p["radius"] = std::to_string(r);
    } else if (marker == "h-minus") {
      const std::int64_t h = p.count("h") ? parse_int("h", p["h"]) : 20;
      if (h < 0 || h > 255) throw Error("h=" + p["h"] + " must be in 0..255");
      p["h"] = std::to_string(h);
    }
  } else if (s.kind == "sparse") {
    const double density = p.count("density") ? parse_double("density", p["density"]) : 0.001;
    if (!(density >= 0.0 && density <= 1.0)) throw Error("density=" + p["density"] + " must be in [0, 1]");
    p["density"] = format_double(density);
    p["seed"] = std::to_string(parse_u64("seed", seed_text));
  }
  return s;
}

bool looks_like_param(const std::string& tok) {
  const std::size_t eq = tok.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  return tok.find_first_not_of("abcdefghijklmnopqrstuvwxyz_") == eq;
}

}  // namespace

std::string format_double(double v) {
  char buf[40];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

std::vector<std::pair<std::string, std::string>> spec_kinds() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& k : kind_table()) out.emplace_back(k.name, k.description);
  return out;
}

Spec canonical(const Spec& s) {
  try {
    return canonical_impl(s);
  } catch (const Error& e) {
    throw Error("bad dataset spec (kind '" + s.kind + "'): " + e.what());
  }
}

Spec Spec::parse(const std::string& text) {
  try {
    if (text.empty()) throw Error("empty spec (expected e.g. uniform:512x512:levels=256)");
    const std::size_t colon = text.find(':');
    Spec s;
    s.kind = text.substr(0, colon);
    const KindDef* kd = find_kind(s.kind);
    if (!kd) {
      std::string hint;
      if (s.kind.find('.') != std::string::npos || s.kind.find('/') != std::string::npos)
        hint = "; for a file write file:" + text;
      throw Error("unknown kind '" + s.kind + "' (known: " + known_kinds() + ")" + hint);
    }
    const std::string rest = colon == std::string::npos ? "" : text.substr(colon + 1);
    std::vector<std::string> toks = split(rest, ':');
    std::vector<std::string> kv;
    if (s.kind == "file") {
      // Trailing key=value tokens are parameters; the rest is the path (which may contain ':').
      while (toks.size() > 1 && looks_like_param(toks.back())) {
        kv.insert(kv.begin(), toks.back());
        toks.pop_back();
      }
      for (std::size_t i = 0; i < toks.size(); ++i) s.path += (i ? ":" : "") + toks[i];
      if (s.path.empty()) throw Error("file: needs a path (file:PATH[:shape=..][:dtype=..])");
    } else {
      if (rest.empty() || toks[0].empty())
        throw Error("missing shape (expected e.g. " + s.kind + ":512x512)");
      s.shape = Shape::parse(toks[0]);
      kv.assign(toks.begin() + 1, toks.end());
    }
    for (const auto& t : kv) {
      const std::size_t eq = t.find('=');
      if (eq == std::string::npos || eq == 0)
        throw Error("expected key=value, got '" + t + "'");
      const std::string key = t.substr(0, eq);
      if (s.params.count(key)) throw Error("key '" + key + "' given twice");
      s.params[key] = t.substr(eq + 1);
    }
    return canonical_impl(s);
  } catch (const Error& e) {
    throw Error("bad dataset spec '" + text + "': " + e.what());
  }
}

std::string Spec::str() const {
  const Spec c = canonical(*this);
  const KindDef* kd = find_kind(c.kind);
  std::string out = c.kind + ":" + (c.is_file() ? c.path : c.shape.str());
  for (const auto& key : kd->keys) {
    const auto it = c.params.find(key);
    if (it != c.params.end()) out += ":" + key + "=" + it->second;
  }
  return out;
}

std::string Spec::get(const std::string& key, const std::string& def) const {
  const auto it = params.find(key);
  return it == params.end() ? def : it->second;
}

double Spec::get_double(const std::string& key, double def) const {
  return has(key) ? parse_double(key, params.at(key)) : def;
}

std::int64_t Spec::get_int(const std::string& key, std::int64_t def) const {
  return has(key) ? parse_int(key, params.at(key)) : def;
}

std::uint64_t Spec::get_u64(const std::string& key, std::uint64_t def) const {
  return has(key) ? parse_u64(key, params.at(key)) : def;
}

DType Spec::get_dtype(DType def) const { return param_dtype(params, def); }

}  // namespace repix::datasets
