#include "harness/registry.hpp"

#include "harness/family.hpp"

namespace repix::registry {

std::vector<std::string> families() {
  std::vector<std::string> out;
  for (const auto& f : family::all()) out.push_back(f->name());
  return out;
}

std::vector<VariantInfo> variants(const std::string& name) {
  std::vector<VariantInfo> out;
  for (const auto& f : family::all())
    if (name.empty() || f->name() == name)
      for (auto& v : f->variants()) out.push_back(std::move(v));
  return out;
}

void check_family(const std::string& name) { family::find(name); }

}  // namespace repix::registry
