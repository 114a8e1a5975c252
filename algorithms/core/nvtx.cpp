#include "core/nvtx.hpp"

namespace repix::nvtx {

nvtxDomainHandle_t domain() {
  static nvtxDomainHandle_t d = nvtxDomainCreateA(DomainTag::name);
  return d;
}

namespace {
void push(const char* name, bool has_payload, std::int64_t payload) {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = name;
  if (has_payload) {
    a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
    a.payload.llValue = payload;
  }
  nvtxDomainRangePushEx(domain(), &a);
}
}  // namespace

Range::Range(const char* name) { push(name, false, 0); }
Range::Range(const char* name, std::int64_t payload) { push(name, true, payload); }
Range::~Range() { nvtxDomainRangePop(domain()); }

}  // namespace repix::nvtx
