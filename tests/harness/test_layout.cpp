// The layout a newcomer reads by path (DESIGN.md "Layout"): every family is a folder
// algorithms/<family>/ with its registry (register.cpp) and its variants' entry points
// (variants.hpp), and every registered variant id has its own file there, named after the id
// (gpu-queue-tq -> gpu_queue_tq.cu or .cpp). A variant added without its file, or a file renamed
// away from its id, fails here.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "harness/registry.hpp"

namespace fs = std::filesystem;

namespace repix {
namespace {

// algorithms/<family>/, or for the stages of a family of stages (issue 13's ami: ranklet,
// auto-mi) algorithms/<group>/<family>/, '-' spelled '_' (auto-mi -> algorithms/ami/auto_mi/).
fs::path family_dir(const std::string& family) {
  std::string stem = family;
  std::replace(stem.begin(), stem.end(), '-', '_');
  const fs::path algorithms = fs::path(REPIX_SOURCE_DIR) / "algorithms";
  if (fs::is_directory(algorithms / stem)) return algorithms / stem;
  for (const auto& group : fs::directory_iterator(algorithms))
    if (group.is_directory() && fs::is_directory(group.path() / stem)) return group.path() / stem;
  return algorithms / stem;
}

TEST(Layout, EveryFamilyHasItsFolderRegistryAndVariantsHeader) {
  ASSERT_FALSE(registry::families().empty());
  for (const auto& f : registry::families()) {
    EXPECT_TRUE(fs::is_directory(family_dir(f))) << f;
    EXPECT_TRUE(fs::exists(family_dir(f) / "register.cpp")) << f;
    EXPECT_TRUE(fs::exists(family_dir(f) / "variants.hpp")) << f;
    std::string stem = f;
    std::replace(stem.begin(), stem.end(), '-', '_');
    EXPECT_TRUE(fs::exists(family_dir(f) / (stem + ".hpp"))) << f << ": the family's semantics and types";
  }
}

TEST(Layout, EveryVariantIdHasItsOwnFile) {
  const auto all = registry::variants();
  ASSERT_FALSE(all.empty());
  for (const auto& v : all) {
    std::string stem = v.id;
    std::replace(stem.begin(), stem.end(), '-', '_');
    const fs::path cpp = family_dir(v.family) / (stem + ".cpp"), cu = family_dir(v.family) / (stem + ".cu");
    EXPECT_TRUE(fs::exists(cpp) || fs::exists(cu))
        << v.family << "/" << v.id << ": expected " << cpp.string() << " or " << cu.string();
  }
}

// Nothing generic names a family: the harness's own files reach families only through the
// Family interface (harness/family.hpp). A family's name may appear in its adapter
// (harness/families/<family>/), its paper's tables (harness/papers/), and the two registration
// lists (families.cpp, tables.hpp/.cpp), nowhere else under harness/.
TEST(Layout, GenericHarnessCodeNamesNoFamily) {
  const fs::path harness = fs::path(REPIX_SOURCE_DIR) / "harness";
  std::string names;
  for (const auto& f : registry::families()) names += (names.empty() ? "" : "|") + f;
  // A namespace (ecc::), an include of the family's algorithms ("edt/...") or the name as a literal.
  const std::regex mention("\\b(" + names + ")::|#include \"(" + names + ")/|\"(" + names + ")\"");
  int files = 0;
  for (const auto& e : fs::directory_iterator(harness)) {
    if (!e.is_regular_file()) continue;
    const std::string file = e.path().filename().string();
    if (file == "families.cpp" || file == "tables.cpp" || file == "tables.hpp") continue;
    std::ifstream in(e.path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n)
      EXPECT_FALSE(std::regex_search(line, mention)) << "harness/" << file << ":" << n << " names a family: " << line;
    ++files;
  }
  EXPECT_GT(files, 10);
}

}  // namespace
}  // namespace repix
