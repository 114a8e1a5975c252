// Named dataset suites for `repix bench --suite NAME`.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace repix::suites {

struct Suite {
  std::string name;
  std::string description;
  // family -> dataset specs; a family without an entry is not part of the suite.
  std::vector<std::pair<std::string, std::vector<std::string>>> datasets;
};

const std::vector<Suite>& all();
const Suite& find(const std::string& name);  // throws repix::Error listing the known ones

}  // namespace repix::suites
