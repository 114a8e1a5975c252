// Shared by the multi-device tests of both families: explicit engine configurations (workers and
// tile shapes chosen by the test, so CPU-group runs stay CPU-only on a GPU machine), the first N
// GPUs, and pinned copies of inputs (the CLI and the bench load inputs pinned: the 2D-DMA path).
#pragma once
#include <cstring>
#include <string>
#include <vector>

#include "core/gpu.hpp"
#include "core/image.hpp"
#include "core/tiling/multi_device.hpp"

namespace repix::test {

struct TileShape {
  std::int64_t w, h;
  std::string str() const { return std::to_string(w) + "x" + std::to_string(h); }
};

inline tiling::EngineConfig workers(std::vector<int> devices, int groups, int group_threads, TileShape tile) {
  tiling::EngineConfig c;
  c.devices = std::move(devices);
  c.cpu_groups = groups;
  c.cpu_group_threads = group_threads;
  c.tile_width = tile.w;
  c.tile_height = tile.h;
  return c;
}

// CUDA devices 0 .. min(n, count) - 1.
inline std::vector<int> first_gpus(int n) {
  int count = 0;
  REPIX_CUDA(cudaGetDeviceCount(&count));
  std::vector<int> d;
  for (int i = 0; i < std::min(n, count); ++i) d.push_back(i);
  return d;
}

inline HostImage pinned_copy(const HostImage& img) {
  HostImage p(img.dtype(), img.shape(), true);
  std::memcpy(p.raw(), img.raw(), img.bytes());
  return p;
}

}  // namespace repix::test
