#include "core/nvtx.hpp"

#include <cstring>
#include <vector>

namespace repix::nvtx {

nvtxDomainHandle_t domain() {
  static nvtxDomainHandle_t d = nvtxDomainCreateA(DomainTag::name);
  return d;
}

namespace {
Observer& observer() {
  static Observer o;
  return o;
}
// The paths opened by Range objects on this thread, innermost last.
thread_local std::vector<std::string> open_paths;

void push(const std::string& name, bool has_payload, std::int64_t payload) {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = name.c_str();  // NVTX copies the string
  if (has_payload) {
    a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
    a.payload.llValue = payload;
  }
  nvtxDomainRangePushEx(domain(), &a);
  if (observer()) observer()(name.c_str());
}

void pop() {
  nvtxDomainRangePop(domain());
  if (observer()) observer()(nullptr);
}
}  // namespace

void set_observer(Observer o) { observer() = std::move(o); }

Range::Range(const char* name) { open(name, false, 0); }
Range::Range(const char* name, std::int64_t payload) { open(name, true, payload); }

void Range::open(const char* name, bool has_payload, std::int64_t payload) {
  if (!std::strchr(name, '/')) {
    push(name, has_payload, payload);
    pushed_ = 1;
    return;
  }
  if (!open_paths.empty() && open_paths.back() == name) return;  // already open, directly outside
  const std::string path = name;
  std::size_t from = 0;
  while (from <= path.size()) {
    std::size_t to = path.find('/', from);
    if (to == std::string::npos) to = path.size();
    if (to > from) {  // empty segments ("a//b", a trailing '/') push nothing
      const bool last = path.find_first_not_of('/', to) == std::string::npos;
      push(path.substr(from, to - from), has_payload && last, payload);
      ++pushed_;
    }
    from = to + 1;
  }
  open_paths.push_back(path);
  path_ = true;
}

Range::~Range() {
  for (int i = 0; i < pushed_; ++i) pop();
  if (path_) open_paths.pop_back();
}

}  // namespace repix::nvtx
