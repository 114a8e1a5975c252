// One test per registered variant: TEST_P suites parameterised by variant id, the ids read from a
// family's registry (reconstruct::variants(), edt::variants(), ecc::variants(): function-local
// statics, read when gtest registers the tests, not at static initialisation). Each instance is
// named after its id (gpu-queue-tq -> gpu_queue_tq), so one variant can be run, and sanitised, on
// its own: --gtest_filter='*ReconstructGpu*/gpu_opt'.
//
//   class ReconstructGpuVariant : public test::VariantTest {};
//   REPIX_INSTANTIATE_VARIANTS(ReconstructGpuVariant, test::variant_ids(reconstruct::variants(), test::Device::gpu));
//   TEST_P(ReconstructGpuVariant, Something) { const auto& v = reconstruct::find_variant(GetParam()); ... }
//
// An empty id list fails the run (gtest reports a parameterised suite that generates no test), so
// a registry that lost its variants cannot pass by testing nothing.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

namespace repix::test {

enum class Device { cpu, gpu, any };

// The ids of `registry`'s variants (in registration order) that run on `device` and that `keep`
// accepts (a predicate on the family's Variant).
template <class Registry, class Keep>
std::vector<std::string> variant_ids(const Registry& registry, Device device, Keep keep) {
  std::vector<std::string> ids;
  for (const auto& v : registry)
    if ((device == Device::any || v.gpu == (device == Device::gpu)) && keep(v)) ids.push_back(v.id);
  return ids;
}

template <class Registry>
std::vector<std::string> variant_ids(const Registry& registry, Device device) {
  return variant_ids(registry, device, [](const auto&) { return true; });
}

// Where `id` stands in `ids` (ids.size() if absent): for tests whose seeds run on from one variant
// to the next, as they did when one test looped over every variant.
inline std::size_t index_of(const std::vector<std::string>& ids, const std::string& id) {
  return static_cast<std::size_t>(std::find(ids.begin(), ids.end(), id) - ids.begin());
}

// A variant id as a test name (gtest takes letters, digits and '_'): gpu-queue-tq -> gpu_queue_tq.
inline std::string test_name_of(std::string id) {
  std::replace(id.begin(), id.end(), '-', '_');
  return id;
}

struct VariantName {
  std::string operator()(const ::testing::TestParamInfo<std::string>& info) const { return test_name_of(info.param); }
};

// The fixture of a suite parameterised by variant id (derive one empty class per suite).
class VariantTest : public ::testing::TestWithParam<std::string> {};

}  // namespace repix::test

// Instantiates `suite` (a test::VariantTest) once per id of `ids`, as Registry/<suite>.<test>/<id>.
#define REPIX_INSTANTIATE_VARIANTS(suite, ids) \
  INSTANTIATE_TEST_SUITE_P(Registry, suite, ::testing::ValuesIn(ids), ::repix::test::VariantName())
