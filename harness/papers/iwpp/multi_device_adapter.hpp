// MULTI-DEVICE ADAPTER (iwpp-fig15/16, run.cpp).
// The `multi-device` variants (branch `multi`) read their configuration from Options fields
// `gpus`, `cpu_groups` and `cpu_group_threads`, which that branch adds to reconstruct::Options
// and edt::Options (this branch must not add them). apply_multi_device sets them when they exist,
// detected at compile time, so it wires itself once `multi` is merged; without them it refuses
// with a clear error rather than timing the variant with a configuration it did not get. If the
// merged fields are named or typed differently, this header is the one place to change.
#pragma once
#include <string>
#include <type_traits>
#include <utility>

#include "core/error.hpp"

namespace repix::tables {

struct MultiConfig {
  std::string label;  // "1 GPU", "2 GPUs", "2 GPUs + CPU groups"
  int gpus = 1;
  int cpu_groups = 0;
  int cpu_group_threads = 0;
};

template <class O, class = void>
struct HasMultiDeviceFields : std::false_type {};
template <class O>
struct HasMultiDeviceFields<O, std::void_t<decltype(std::declval<O&>().gpus), decltype(std::declval<O&>().cpu_groups),
                                           decltype(std::declval<O&>().cpu_group_threads)>> : std::true_type {};

template <class O>
void apply_multi_device(O& opt, const MultiConfig& c) {
  if constexpr (HasMultiDeviceFields<O>::value) {
    opt.gpus = c.gpus;
    opt.cpu_groups = c.cpu_groups;
    opt.cpu_group_threads = c.cpu_group_threads;
  } else {
    (void)opt;
    (void)c;
    throw Error("the multi-device variant is registered but its Options have no gpus/cpu_groups/cpu_group_threads "
                "fields: wire apply_multi_device in harness/papers/iwpp/multi_device_adapter.hpp");
  }
}

}  // namespace repix::tables
