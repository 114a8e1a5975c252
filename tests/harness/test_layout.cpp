// The layout a newcomer reads by path (DESIGN.md "Layout"): every family is a folder
// algorithms/<family>/ (or, for a stage of a larger family, the one folder below algorithms/
// named after it: auto-mi -> algorithms/ami/auto_mi/) with its registry (register.cpp) and its variants' entry points
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

#include "harness/family.hpp"
#include "harness/registry.hpp"

namespace fs = std::filesystem;

namespace repix {
namespace {

// algorithms/<family>, else the one folder below algorithms/ named after the family ('-' -> '_').
fs::path family_dir(const std::string& family) {
  const fs::path root = fs::path(REPIX_SOURCE_DIR) / "algorithms";
  std::string stem = family;
  std::replace(stem.begin(), stem.end(), '-', '_');
  if (fs::is_directory(root / stem)) return root / stem;
  fs::path found;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_directory() && e.path().filename() == stem) {
      EXPECT_TRUE(found.empty()) << family << ": two folders named " << stem << ": " << found << ", " << e.path();
      found = e.path();
    }
  return found.empty() ? root / stem : found;
}
std::string header_of(const std::string& family) { return family_dir(family).filename().string() + ".hpp"; }

// A family is found by its algorithms folder's name: its own name, or the family whose variants it
// builds on (Family::algorithms(): area-opening -> maxtree).
TEST(Layout, EveryFamilyHasItsFolderRegistryAndVariantsHeader) {
  ASSERT_FALSE(family::all().empty());
  for (const auto& fam : family::all()) {
    const std::string f = fam->algorithms();
    EXPECT_TRUE(fs::is_directory(family_dir(f))) << fam->name();
    EXPECT_TRUE(fs::exists(family_dir(f) / "register.cpp")) << fam->name();
    EXPECT_TRUE(fs::exists(family_dir(f) / "variants.hpp")) << fam->name();
    EXPECT_TRUE(fs::exists(family_dir(f) / header_of(f))) << fam->name() << ": the family's semantics and types";
  }
}

TEST(Layout, EveryVariantIdHasItsOwnFile) {
  int variants = 0;
  for (const auto& fam : family::all()) {
    const fs::path dir = family_dir(fam->algorithms());
    for (const auto& v : fam->variants()) {
      std::string stem = v.id;
      std::replace(stem.begin(), stem.end(), '-', '_');
      const fs::path cpp = dir / (stem + ".cpp"), cu = dir / (stem + ".cu");
      EXPECT_TRUE(fs::exists(cpp) || fs::exists(cu))
          << v.family << "/" << v.id << ": expected " << cpp.string() << " or " << cu.string();
      ++variants;
    }
  }
  EXPECT_GT(variants, 0);
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
