// Dispatch from specs to their kinds (kind.hpp, kinds.cpp). Nothing here names a kind: each
// kind's file says how it is generated, streamed and typed, file: specs included.
#include "datasets/datasets.hpp"

#include "core/host_limits.hpp"
#include "datasets/io.hpp"
#include "datasets/kind.hpp"

namespace repix::datasets {

namespace {
// Refuses `s` (canonical) before it is produced when its peak exceeds the available memory.
void require_memory_for(const Spec& s) {
  require_host_memory(peak_host_bytes(s), (find_kind(s.kind).takes_path ? "reading " : "generating ") + s.str());
}
}  // namespace

HostImage generate(const Spec& spec, bool pinned) {
  const Spec s = canonical(spec);
  require_memory_for(s);
  return find_kind(s.kind).generate(s, pinned);
}

HostImage generate(const std::string& spec, bool pinned) { return generate(Spec::parse(spec), pinned); }

std::unique_ptr<SlabSource> open_source(const Spec& spec) {
  const Spec s = canonical(spec);
  const Kind& k = find_kind(s.kind);
  if (!k.chunk_addressable(s)) require_memory_for(s);  // the source holds the whole image
  return k.open_source(s);
}

bool is_chunk_addressable(const Spec& spec) {
  const Spec s = canonical(spec);
  return find_kind(s.kind).chunk_addressable(s);
}

bool generates_on_device(const Spec& spec) {
  const Spec s = canonical(spec);
  const Kind& k = find_kind(s.kind);
  return k.generates_on_device && k.generates_on_device(s);
}

DType spec_dtype(const Spec& spec) {
  const Spec s = canonical(spec);
  return find_kind(s.kind).dtype(s);
}

Shape spec_shape(const Spec& spec) {
  const Spec s = canonical(spec);
  return find_kind(s.kind).shape(s);
}

std::uint64_t image_bytes(const Spec& spec) {
  const Spec s = canonical(spec);
  const Kind& k = find_kind(s.kind);
  if (k.takes_path && !k.chunk_addressable(s)) return 0;  // an image file: decoding it is the only way to know
  return static_cast<std::uint64_t>(k.shape(s).size()) * dtype_size(k.dtype(s));
}

std::uint64_t peak_host_bytes(const Spec& spec) {
  const Spec s = canonical(spec);
  return static_cast<std::uint64_t>(static_cast<double>(image_bytes(s)) * find_kind(s.kind).peak_factor);
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
Spec spec_of(const std::string& path_or_spec) {
  const std::string prefix = path_or_spec.substr(0, path_or_spec.find(':'));
  for (const auto& k : registered_kinds())
    if (prefix == k.name && path_or_spec.size() > prefix.size()) return Spec::parse(path_or_spec);
  return Spec::parse("file:" + path_or_spec);
}

HostImage load(const std::string& path_or_spec, bool pinned) { return generate(spec_of(path_or_spec), pinned); }

Shape shape_of(const std::string& path_or_spec) { return spec_shape(spec_of(path_or_spec)); }

}  // namespace repix::datasets
