// Where two parent images differ, for the maxtree tests' failure messages.
#pragma once
#include <string>

#include "maxtree/maxtree.hpp"

namespace repix::test {
inline namespace maxtree_tests {

inline std::string where(const maxtree::ParentImage& got, const maxtree::ParentImage& want) {
  for (std::int64_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i])
      return "first difference at (" + std::to_string(i % want.shape.nx) + ", " + std::to_string(i / want.shape.nx) +
             "): got " + std::to_string(got[i]) + ", want " + std::to_string(want[i]);
  return "shapes differ";
}

}  // namespace maxtree_tests
}  // namespace repix::test
