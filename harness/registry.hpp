// The harness's view of every family's variants: what `repix list` prints and what the bench
// runner iterates over. Each family keeps its own typed registry (algorithms/<family>/register.cpp);
// this collects their metadata in one place.
#pragma once
#include <string>
#include <vector>

namespace repix::registry {

struct VariantInfo {
  std::string family;
  std::string id;
  bool gpu = false;
  std::string step;
  std::string description;
  bool kernel_scope = false;  // a GPU variant with a plan: timed on device-resident data, and the
                              // one kind that reads device arrays in place (Python's CuPy path)
};

std::vector<std::string> families();
// All variants of `family` ("" = all families), in registration (ablation) order.
std::vector<VariantInfo> variants(const std::string& family = "");
// Throws repix::Error for an unknown family, listing the known ones.
void check_family(const std::string& family);

}  // namespace repix::registry
