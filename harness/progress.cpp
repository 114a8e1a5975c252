#include "harness/progress.hpp"

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <thread>

namespace repix::progress {

Plan::Plan(std::vector<std::string> groups) : groups_(std::move(groups)) {}

void Plan::row_done(double seconds) {
  if (seconds_.size() < groups_.size()) seconds_.push_back(seconds > 0 ? seconds : 0);
}

double Plan::remaining_s() const {
  if (seconds_.empty()) return -1;
  std::map<std::string, std::pair<double, int>> by_group;  // sum, count of the rows done
  double all = 0;
  for (std::size_t i = 0; i < seconds_.size(); ++i) {
    auto& g = by_group[groups_[i]];
    g.first += seconds_[i];
    ++g.second;
    all += seconds_[i];
  }
  const double overall_mean = all / static_cast<double>(seconds_.size());
  double left = 0;
  for (std::size_t i = seconds_.size(); i < groups_.size(); ++i) {
    const auto it = by_group.find(groups_[i]);
    left += it != by_group.end() ? it->second.first / it->second.second : overall_mean;
  }
  return left;
}

std::string duration(double seconds) {
  char buf[64];
  const long s = std::lround(std::max(0.0, seconds));
  if (s < 60) std::snprintf(buf, sizeof buf, "%ld s", s);
  else if (s < 3600) std::snprintf(buf, sizeof buf, "%ld min %02ld s", s / 60, s % 60);
  else std::snprintf(buf, sizeof buf, "%ld h %02ld min", s / 3600, (s % 3600) / 60);
  return buf;
}

std::string Plan::line(double elapsed_s) const {
  std::string s = std::to_string(done()) + "/" + std::to_string(rows()) + " rows, " + duration(elapsed_s) + " elapsed";
  const double left = remaining_s();
  if (done() < rows() && left >= 0) s += ", ~" + duration(left) + " left";
  return s;
}

struct Heartbeat::State {
  std::mutex lock;
  std::condition_variable wake;
  bool done = false;
  std::thread thread;
};

Heartbeat::Heartbeat(std::string what, double every_s) : state_(std::make_unique<State>()) {
  State* s = state_.get();
  s->thread = std::thread([s, what = std::move(what), every_s] {
    const auto t0 = std::chrono::steady_clock::now();
    std::unique_lock<std::mutex> hold(s->lock);
    for (int beat = 1;; ++beat) {
      const auto at = t0 + std::chrono::duration<double>(every_s * beat);
      if (s->wake.wait_until(hold, at, [s] { return s->done; })) return;
      std::fprintf(stderr, "%s, %s so far...\n", what.c_str(),
                   duration(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()).c_str());
    }
  });
}

Heartbeat::~Heartbeat() {
  {
    std::lock_guard<std::mutex> hold(state_->lock);
    state_->done = true;
  }
  state_->wake.notify_all();
  state_->thread.join();
}

std::string Plan::time_per_group() const {
  std::vector<std::pair<std::string, double>> sums;
  for (std::size_t i = 0; i < seconds_.size(); ++i) {
    bool found = false;
    for (auto& [name, s] : sums)
      if (name == groups_[i]) {
        s += seconds_[i];
        found = true;
      }
    if (!found) sums.push_back({groups_[i], seconds_[i]});
  }
  std::string s;
  for (std::size_t i = 0; i < sums.size(); ++i) s += (i ? ", " : "") + sums[i].first + " " + duration(sums[i].second);
  return s;
}

std::string Plan::summary() const {
  std::vector<std::pair<std::string, int>> counts;
  for (const std::string& g : groups_) {
    bool found = false;
    for (auto& [name, n] : counts)
      if (name == g) {
        ++n;
        found = true;
      }
    if (!found) counts.push_back({g, 1});
  }
  std::string s = std::to_string(rows()) + (rows() == 1 ? " row" : " rows");
  for (std::size_t i = 0; i < counts.size(); ++i) s += (i ? ", " : ": ") + counts[i].first + " " + std::to_string(counts[i].second);
  return s;
}

}  // namespace repix::progress
