// Spec grammar and the checks every kind shares; each kind's own parameters are checked by its
// Kind (kind.hpp, kinds.cpp): nothing here names a kind.
#include "datasets/spec.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "datasets/kind.hpp"

namespace repix::datasets {
namespace detail {

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

void check_shape_size(const Shape& sh) {
  // Guard the element count against overflow and absurd sizes (2^48 elements = 256 TiB of u8).
  const std::int64_t limit = kMaxElements;
  if (sh.nx > limit / sh.ny || sh.nx * sh.ny > limit / sh.nz)
    throw Error("shape " + sh.str() + " is too large (at most 2^48 elements)");
}

}  // namespace detail

namespace {

// "file:" for each kind that takes a path ("file:, ...": one today).
std::string path_kind_prefixes() {
  std::string s;
  for (const auto& k : registered_kinds())
    if (k.takes_path) s += (s.empty() ? "" : ", ") + k.name + ":";
  return s;
}

std::string allowed_keys(const Kind& k) {
  std::string s;
  for (const auto& key : k.keys) s += (s.empty() ? "" : ", ") + key;
  return s.empty() ? "none" : s;
}

// "file: needs a path (file:PATH[:shape=..][:dtype=..])"
std::string needs_path(const Kind& k) {
  std::string usage = k.name + ":PATH";
  for (const auto& key : k.keys) usage += "[:" + key + "=..]";
  return k.name + ": needs a path (" + usage + ")";
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

// Validates s and fills in the defaults: what every kind shares here, the kind's own
// parameters through its canonicalise. Errors carry only the detail; callers add the spec.
Spec canonical_impl(const Spec& in) {
  const Kind& kd = find_kind(in.kind);
  for (const auto& [key, value] : in.params) {
    bool ok = false;
    for (const auto& k : kd.keys) ok = ok || k == key;
    if (!ok)
      throw Error("unknown key '" + key + "' for " + in.kind + " (allowed: " + allowed_keys(kd) + ")");
  }
  Spec s = in;
  if (kd.takes_path) {
    if (s.path.empty()) throw Error(needs_path(kd));
  } else {
    if (!s.path.empty()) throw Error("only " + path_kind_prefixes() + " specs have a path");
    // Each side first: their product may overflow (4294967296x4294967296 is 2^64 elements).
    if (s.shape.ndim < 1 || s.shape.ndim > 3 || s.shape.nx <= 0 || s.shape.ny <= 0 || s.shape.nz <= 0)
      throw Error("missing or empty shape (e.g. " + s.kind + ":512x512)");
    detail::check_shape_size(s.shape);
    if (kd.two_d_only && s.shape.ndim != 2)
      throw Error(s.kind + " is 2D only (e.g. " + s.kind + ":1024x1024)");
  }
  kd.canonicalise(s);
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
  for (const auto& k : registered_kinds()) out.emplace_back(k.name, k.description);
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
    const Kind* kd = nullptr;
    try {
      kd = &find_kind(s.kind);
    } catch (const Error& e) {
      // "img.npy": a path without its kind; name the kind that reads it.
      const std::string prefixes = path_kind_prefixes();
      const bool pathlike = s.kind.find('.') != std::string::npos || s.kind.find('/') != std::string::npos;
      throw Error(e.what() + (pathlike && !prefixes.empty() ? "; for a file write " + prefixes + text : ""));
    }
    const std::string rest = colon == std::string::npos ? "" : text.substr(colon + 1);
    std::vector<std::string> toks = split(rest, ':');
    std::vector<std::string> kv;
    if (kd->takes_path) {
      // Trailing key=value tokens are parameters; the rest is the path (which may contain ':').
      while (toks.size() > 1 && looks_like_param(toks.back())) {
        kv.insert(kv.begin(), toks.back());
        toks.pop_back();
      }
      for (std::size_t i = 0; i < toks.size(); ++i) s.path += (i ? ":" : "") + toks[i];
      if (s.path.empty()) throw Error(needs_path(*kd));
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
  const Kind& kd = find_kind(c.kind);
  std::string out = c.kind + ":" + (kd.takes_path ? c.path : c.shape.str());
  for (const auto& key : kd.keys) {
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
  return has(key) ? detail::parse_double(key, params.at(key)) : def;
}

std::int64_t Spec::get_int(const std::string& key, std::int64_t def) const {
  return has(key) ? detail::parse_int(key, params.at(key)) : def;
}

std::uint64_t Spec::get_u64(const std::string& key, std::uint64_t def) const {
  return has(key) ? detail::parse_u64(key, params.at(key)) : def;
}

DType Spec::get_dtype(DType def) const { return has("dtype") ? parse_dtype(params.at("dtype")) : def; }

}  // namespace repix::datasets
