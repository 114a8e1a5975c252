// The dataset kinds: one line per kind, in the order `repix list datasets` shows them. Adding a
// kind is one file (its generator and its Kind, see kind.hpp) plus one line here; the spec
// grammar, generate/open_source/load, the CLI and the tests pick it up.
#include "core/find_by_name.hpp"
#include "datasets/kind.hpp"

namespace repix::datasets {

const std::vector<Kind>& registered_kinds() {
  static const std::vector<Kind> all = [] {
    std::vector<Kind> k;
    k.push_back(detail::uniform_kind());
    k.push_back(detail::grf_kind());
    k.push_back(detail::const_kind());
    k.push_back(detail::checker_kind());
    k.push_back(detail::ramp_kind());
    k.push_back(detail::blobs_kind());
    k.push_back(detail::noise_mask_kind());
    k.push_back(detail::tissue_kind());
    k.push_back(detail::sparse_kind());
    k.push_back(detail::texture_kind());
    k.push_back(detail::file_kind());
    return k;
  }();
  return all;
}

// A spec naming no kind is a bad input (exit 1), as a missing file is, not a bad option.
const Kind& find_kind(const std::string& name) {
  try {
    return find_by_name(registered_kinds(), name, "kind", [](const Kind& k) { return k.name; });
  } catch (const UnknownName& e) {
    throw Error(e.what());
  }
}

}  // namespace repix::datasets
