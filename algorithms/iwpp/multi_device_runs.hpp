// The multi-device variants' entry points with an explicit engine configuration (the variants
// themselves derive it from Options through iwpp::configure): for tests that choose the workers
// and the tiles, e.g. CPU groups alone on a machine with GPUs, or tiles that are not square.
#pragma once
#include "iwpp/edt.hpp"
#include "iwpp/multi_device.hpp"
#include "iwpp/reconstruct.hpp"

namespace repix::reconstruct {
// Checks the inputs like every variant; cfg.diagonal is set from opt.connectivity.
Result run_multi_device_with(const HostImage& marker, const HostImage& mask, const Options& opt,
                             iwpp::EngineConfig cfg);
}  // namespace repix::reconstruct

namespace repix::edt {
// Checks the input like every variant; cfg.diagonal is always set (sites go to 8 neighbours).
Result run_multi_device_with(const HostImage& input, const Options& opt, iwpp::EngineConfig cfg);
}  // namespace repix::edt
