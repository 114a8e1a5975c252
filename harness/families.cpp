// The families, one line each, in the order of the issues. A family is its algorithms folder
// (algorithms/<family>/), its adapter (harness/families/<family>/adapter.cpp) and this line.
#include "core/error.hpp"
#include "core/find_by_name.hpp"
#include "harness/family.hpp"

namespace repix::family {

std::unique_ptr<Family> ecc_family();          // families/ecc/adapter.cpp
std::unique_ptr<Family> reconstruct_family();  // families/reconstruct/adapter.cpp
std::unique_ptr<Family> edt_family();          // families/edt/adapter.cpp
std::unique_ptr<Family> ranklet_family();       // families/ami/ranklet.cpp (issue 13's ranklet stage)
std::unique_ptr<Family> auto_mi_family();       // families/ami/auto_mi.cpp (issue 13's feature stage)
std::unique_ptr<Family> ami_family();           // families/ami/ami.cpp (issue 13's whole descriptor)
std::unique_ptr<Family> maxtree_family();       // families/maxtree/maxtree.cpp
std::unique_ptr<Family> area_opening_family();  // families/maxtree/area_opening.cpp

const std::vector<std::unique_ptr<Family>>& all() {
  static const std::vector<std::unique_ptr<Family>> f = [] {
    std::vector<std::unique_ptr<Family>> v;
    v.push_back(ecc_family());
    v.push_back(reconstruct_family());
    v.push_back(edt_family());
    v.push_back(ranklet_family());
    v.push_back(auto_mi_family());
    v.push_back(ami_family());
    v.push_back(maxtree_family());
    v.push_back(area_opening_family());
    return v;
  }();
  return f;
}

const Family& find(const std::string& name) {
  return *find_by_name(all(), name, "family", [](const std::unique_ptr<Family>& f) { return f->name(); });
}

}  // namespace repix::family
