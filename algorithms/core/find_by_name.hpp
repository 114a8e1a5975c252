// Lookup by id in a registry-like list, with the one-line error every registry gives:
// "unknown <what> '<id>' (known: a, b, c)", a repix::UnknownName.
#pragma once
#include <string>
#include <vector>

#include "core/error.hpp"

namespace repix {

// `key` maps an element to its name (e.g. [](const Variant& v) { return v.id; }).
template <class T, class Key>
const T& find_by_name(const std::vector<T>& all, const std::string& name, const std::string& what, Key key) {
  std::string known;
  for (const T& t : all) {
    if (key(t) == name) return t;
    known += (known.empty() ? "" : ", ") + key(t);
  }
  throw UnknownName("unknown " + what + " '" + name + "' (known: " + known + ")");
}

}  // namespace repix
