// The overall progress of a command that measures many rows (bench, tables): the plan (every
// row's group, e.g. its family, known before the first is measured) and, as each row ends, a line
// "k/N rows, elapsed, ~remaining". The remaining time is the plan's rows left, each estimated by
// the mean time of the rows of its group done so far (of all rows done, for a group not started):
// rows of one family cost alike, those of different families do not.
#pragma once
#include <memory>
#include <string>
#include <vector>

namespace repix::progress {

class Plan {
 public:
  // Each row's group, in the order the rows will be measured.
  explicit Plan(std::vector<std::string> groups);
  std::size_t rows() const { return groups_.size(); }
  std::size_t done() const { return seconds_.size(); }
  // The next row in the plan took `seconds` (measured or skipped).
  void row_done(double seconds);
  // Seconds the rows left should take; negative while no row is done (nothing to estimate from).
  double remaining_s() const;
  // "12/40 rows, 31 s elapsed, ~1 min 5 s left" (no estimate before the first row ends).
  std::string line(double elapsed_s) const;
  // "40 rows: ecc 12, edt 8, ..." in first-appearance order.
  std::string summary() const;
  // The time of the rows done, per group: "ecc 12 s, edt 3 s, ..." in first-appearance order.
  std::string time_per_group() const;

 private:
  std::vector<std::string> groups_;
  std::vector<double> seconds_;
};

// "45 s", "3 min 05 s", "1 h 02 min".
std::string duration(double seconds);

// A line on stderr every `every_s` seconds while it lives ("repix run: ranklet/seq on IMG, 30 s so
// far..."), so that a long single run is not silent; nothing for runs shorter than that.
class Heartbeat {
 public:
  Heartbeat(std::string what, double every_s = 15);
  ~Heartbeat();
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace repix::progress
