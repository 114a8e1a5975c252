// Named dataset suites for `repix bench --suite NAME`.
#pragma once
#include <string>
#include <vector>

namespace repix::suites {

struct Suite {
  std::string name;
  std::string description;
  std::vector<std::string> datasets;
};

const std::vector<Suite>& all();
const Suite& find(const std::string& name);  // throws repix::Error listing the known ones

}  // namespace repix::suites
