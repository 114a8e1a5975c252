// The CPU variants' shared inner loop: VCEC and occurrence counts over a range of slabs,
// plus the binning of values (integers bin by value; floats by rank among the distinct values).
#pragma once
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/image.hpp"
#include "ecc/cell_rules.hpp"

namespace repix::ecc {

// Sorted distinct values of a float image, -0 folded into +0, on up to `threads` threads (seq
// passes 1: the reference is one thread throughout, so omp's speedup over it is honest).
std::vector<float> sorted_distinct(const float* data, std::int64_t n, int threads);

template <class T>
struct CpuBins {
  std::vector<float> values;  // value of each bin
  CpuBins(const ImageView<T>&, int /*threads*/) {
    values.resize(std::size_t(1) << (8 * sizeof(T)));
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  }
  std::size_t index(T v) const { return v; }
};

template <>
struct CpuBins<float> {
  std::vector<float> values;
  CpuBins(const ImageView<float>& img, int threads) : values(sorted_distinct(img.data, img.size(), threads)) {}
  std::size_t index(float v) const {
    return static_cast<std::size_t>(std::lower_bound(values.begin(), values.end(), v + 0.0f) -
                                    values.begin());
  }
};

// Adds the VCEC contributions and occurrence counts of voxels in slabs [s0, s1). With
// kAtomic the adds are atomic, for threads sharing one pair of arrays (used when there are too
// many bins for thread-private copies).
template <class T, bool kAtomic = false>
void accumulate_slabs(const ImageView<T>& img, const CpuBins<T>& bins, std::int64_t s0,
                      std::int64_t s1, std::int64_t* vcec, std::int64_t* present) {
  const Shape& sh = img.shape;
  const int dims = sh.ndim == 3 ? 3 : 2;
  const std::int64_t nx = sh.nx, ny = sh.ny, nz = sh.nz;
  auto at = [&](std::int64_t x, std::int64_t y, std::int64_t z) { return img(x, y, z); };
  const std::int64_t z0 = dims == 3 ? s0 : 0, z1 = dims == 3 ? s1 : 1;
  const std::int64_t y0 = dims == 3 ? 0 : s0, y1 = dims == 3 ? ny : s1;
  bool wins[3][3][3];
  for (std::int64_t z = z0; z < z1; ++z)
    for (std::int64_t y = y0; y < y1; ++y)
      for (std::int64_t x = 0; x < nx; ++x) {
        const T c = img(x, y, z);
        neighbour_wins_3d(c, at, x, y, z, nx, ny, nz, wins);
        const std::size_t b = bins.index(c);
        const int change = voxel_change(wins, dims);
        if constexpr (kAtomic) {
          if (change) __atomic_fetch_add(&vcec[b], change, __ATOMIC_RELAXED);
          __atomic_fetch_add(&present[b], 1, __ATOMIC_RELAXED);
        } else {
          vcec[b] += change;
          present[b] += 1;
        }
      }
}

// accumulate_slabs over slabs [s0, s1) on `threads` OpenMP threads, into vcec and present
// (bins.values.size() each, added to): each thread into private arrays merged once at the end
// (no atomics in the inner loop), unless those would be huge (float images with millions of
// distinct values): then all threads add atomically into the shared pair.
template <class T>
void accumulate_slabs_parallel(const ImageView<T>& img, const CpuBins<T>& bins, std::int64_t s0, std::int64_t s1,
                               int threads, std::int64_t* vcec, std::int64_t* present) {
  const std::size_t nb = bins.values.size();
  if (nb * threads * 2 * sizeof(std::int64_t) > (std::size_t(256) << 20)) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (std::int64_t s = s0; s < s1; s += 4) accumulate_slabs<T, true>(img, bins, s, std::min(s1, s + 4), vcec, present);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    std::vector<std::int64_t> my_vcec(nb), my_present(nb);
    // Slabs in small dynamic chunks: the border slabs cost the same as inner ones, but a
    // thread may be descheduled; chunks of a few slabs keep the tail short.
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t s = s0; s < s1; s += 4)
      accumulate_slabs(img, bins, s, std::min(s1, s + 4), my_vcec.data(), my_present.data());
#pragma omp critical
    for (std::size_t i = 0; i < nb; ++i) {
      vcec[i] += my_vcec[i];
      present[i] += my_present[i];
    }
  }
}

}  // namespace repix::ecc
