// Dispatch from specs to their kinds (kind.hpp, kinds.cpp). Nothing here names a kind: each
// kind's file says how it is generated, streamed and typed, file: specs included.
#include "datasets/datasets.hpp"

#include "datasets/io.hpp"
#include "datasets/kind.hpp"

namespace repix::datasets {

HostImage generate(const Spec& spec, bool pinned) {
  const Spec s = canonical(spec);
  return find_kind(s.kind).generate(s, pinned);
}

HostImage generate(const std::string& spec, bool pinned) { return generate(Spec::parse(spec), pinned); }

std::unique_ptr<SlabSource> open_source(const Spec& spec) {
  const Spec s = canonical(spec);
  return find_kind(s.kind).open_source(s);
}

bool is_chunk_addressable(const Spec& spec) {
  const Spec s = canonical(spec);
  return find_kind(s.kind).chunk_addressable(s);
}

DType spec_dtype(const Spec& spec) {
  const Spec s = canonical(spec);
  return find_kind(s.kind).dtype(s);
}

Shape spec_shape(const Spec& spec) {
  const Spec s = canonical(spec);
  return find_kind(s.kind).shape(s);
}

bool is_marker_spec(const Spec& spec) {
  const Spec s = canonical(spec);
  for (const auto& key : find_kind(s.kind).marker_keys)
    if (s.has(key)) return true;
  return false;
}

Spec mask_spec(const Spec& marker_spec) {
  Spec s = canonical(marker_spec);
  for (const auto& key : find_kind(s.kind).marker_keys) s.params.erase(key);
  return canonical(s);
}

std::vector<std::pair<std::string, std::string>> kinds() { return spec_kinds(); }

// Declared in io.hpp (its callers read files and specs alike); defined here because a spec
// may name any kind.
namespace {
// Whether `path_or_spec` is a spec of a registered kind (else it is a path).
bool is_spec(const std::string& path_or_spec) {
  const std::string prefix = path_or_spec.substr(0, path_or_spec.find(':'));
  for (const auto& k : registered_kinds())
    if (prefix == k.name && path_or_spec.size() > prefix.size()) return true;
  return false;
}
Spec spec_of(const std::string& path_or_spec) {
  return Spec::parse(is_spec(path_or_spec) ? path_or_spec : "file:" + path_or_spec);
}
}  // namespace

HostImage load(const std::string& path_or_spec, bool pinned) {
  return is_spec(path_or_spec) ? generate(spec_of(path_or_spec), pinned) : load_file(spec_of(path_or_spec), pinned);
}

Shape shape_of(const std::string& path_or_spec) { return spec_shape(spec_of(path_or_spec)); }

}  // namespace repix::datasets
