// Pieces shared by the edt variants (CPU and GPU): the one distance formula every variant uses,
// packed site coordinates, and the FIFO queue of the CPU propagation variants.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/hd.hpp"
#include "edt/edt.hpp"

namespace repix::edt {

// Sides are limited so that squared distances (dx^2 + dy^2 < 2^61) and the envelope arithmetic
// of the exact variants fit in int64 with room to spare.
inline constexpr std::int64_t kMaxSide = std::int64_t(1) << 30;

// The distance of an exact squared distance: sqrt in double (exact input below 2^53, correctly
// rounded on host and device alike), then rounded to float. Every variant uses this one formula,
// so two variants that find the same squared distance write the same bits.
REPIX_HD float distance_from_sq(std::int64_t d2) {
  return static_cast<float>(sqrt(static_cast<double>(d2)));
}

REPIX_HD std::int64_t sq_dist(std::int64_t x0, std::int64_t y0, std::int64_t x1, std::int64_t y1) {
  return (x0 - x1) * (x0 - x1) + (y0 - y1) * (y0 - y1);
}

// Site coordinates packed as (y << 32 | x) in one int64 (sides < 2^30), -1 for "no site yet":
// the propagation variants then never divide to find a site's coordinates, and "no site" is a
// flag rather than a far-away pixel whose squared distance could overflow (the reference's int32
// "infinite" site overflows on images over ~15k rows).
inline constexpr std::int64_t kNoSite = -1;
REPIX_HD std::int64_t pack_xy(std::int64_t x, std::int64_t y) { return (y << 32) | x; }
REPIX_HD std::int64_t packed_x(std::int64_t p) { return p & 0xffffffffll; }
REPIX_HD std::int64_t packed_y(std::int64_t p) { return p >> 32; }

// Squared distance from (x, y) to packed site s; "infinite" (INT64_MAX) for kNoSite.
REPIX_HD std::int64_t sq_to_site(std::int64_t x, std::int64_t y, std::int64_t s) {
  return s < 0 ? INT64_MAX : sq_dist(x, y, packed_x(s), packed_y(s));
}

// The last step of every propagation variant, per pixel: the distance of (x, y) to its packed site
// s (+inf for kNoSite: an image without background), and s as a linear index into an nx-wide image
// (-1 for kNoSite).
REPIX_HD float distance_to_site(std::int64_t x, std::int64_t y, std::int64_t s) {
  return s < 0 ? std::numeric_limits<float>::infinity() : distance_from_sq(sq_to_site(x, y, s));
}
REPIX_HD std::int64_t linear_site(std::int64_t s, std::int64_t nx) { return s < 0 ? -1 : packed_y(s) * nx + packed_x(s); }

// A growable FIFO ring buffer of packed coordinates (Algorithm 3's queue).
class Fifo {
 public:
  bool empty() const { return head_ == tail_; }
  void push(std::int64_t v) {
    if (tail_ - head_ == buf_.size()) grow();
    buf_[tail_++ & (buf_.size() - 1)] = v;
  }
  std::int64_t pop() { return buf_[head_++ & (buf_.size() - 1)]; }

 private:
  void grow() {
    std::vector<std::int64_t> nb(buf_.empty() ? 1024 : buf_.size() * 2);
    for (std::size_t i = head_; i < tail_; ++i) nb[i - head_] = buf_[i & (buf_.size() - 1)];
    tail_ -= head_;
    head_ = 0;
    buf_.swap(nb);
  }
  std::vector<std::int64_t> buf_;
  std::size_t head_ = 0, tail_ = 0;
};

// Background = zero pixels, as a byte mask (1 = background), for any input dtype. `threads`:
// OpenMP threads, 0 = OpenMP's default (seq passes 1: the reference stays single-threaded).
std::vector<std::uint8_t> background_mask(const HostImage& input, int threads = 0);

// Distance and (if wanted) linear site index of every pixel from the packed site map `vr`.
Result result_from_packed(const Shape& shape, const std::vector<std::int64_t>& vr, bool want_sites, int threads);

// The variants (one file each).
Result run_seq_exact(const HostImage& input, const Options& opt);
// seq-exact's two passes over rows [y0, y0 + shape.ny) of a taller image (a distributed run's
// part; y0 = 0 and no bounds: the whole image), `bg` their background mask: `above[x]` /
// `below[x]` is the nearest background row of column x above / below these rows (-1: none),
// rows and sites in the whole image's numbering. With the bounds of the whole image, the
// result is the rows of seq-exact's on the whole image, bit for bit (the same ties).
Result exact_rows(const std::vector<std::uint8_t>& bg, const Shape& shape, std::int64_t y0, const std::int32_t* above,
                  const std::int32_t* below, const Options& opt, int threads);
Result run_seq(const HostImage& input, const Options& opt);
Result run_omp_tiled(const HostImage& input, const Options& opt);

}  // namespace repix::edt
