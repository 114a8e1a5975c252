// The ami pipeline tests' oracle: the descriptor built in the test from the stage references,
// with the levels kept as Q (uint16, 1..256) as the issue writes them: ranklet seq -> Q =
// ranklet::quantise -> auto-mi seq per plane. The pipeline stores Q - 1 in uint8 instead; the
// oracle does not, so equality with it also checks that relabelling.
#pragma once
#include <cstdint>
#include <vector>

#include "ami/ami.hpp"
#include "ami/auto_mi/auto_mi.hpp"
#include "ami/ranklet/ranklet.hpp"

namespace repix::test::ami_pipeline {

// The Q (uint16, 1..256) label image of plane (w, o) of `planes`.
inline HostImage q_labels(const ami::ranklet::Result& planes, std::size_t w, int o) {
  const Shape& s = planes.ranklet.shape();
  HostImage q(DType::u16, Shape::d2(s.nx, s.ny));
  const float* p = ami::ranklet::plane(planes, w, o);
  for (std::int64_t i = 0; i < q.size(); ++i)
    q.data<std::uint16_t>()[i] = static_cast<std::uint16_t>(ami::ranklet::quantise(p[i], planes.windows[w]));
  return q;
}

// The 24 (6 per window) features in ami::Result order, from the stage references.
inline std::vector<double> oracle(const HostImage& img, const std::vector<int>& windows) {
  ami::ranklet::Options ro;
  ro.windows = windows;
  const ami::ranklet::Result planes = ami::ranklet::find_variant("seq").run(img, ro);
  std::vector<double> f(windows.size() * ami::kFeaturesPerWindow);
  for (std::size_t w = 0; w < windows.size(); ++w)
    for (int o = 0; o < ami::kOrientations; ++o) {
      const ami::auto_mi::Features a = ami::auto_mi::find_variant("seq").run(q_labels(planes, w, o), {});
      f[ami::feature_index(w, o, 0)] = a.horizontal;
      f[ami::feature_index(w, o, 1)] = a.vertical;
    }
  return f;
}

}  // namespace repix::test::ami_pipeline
