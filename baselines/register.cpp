// The peers compiled into repix, one line each (the Python peers are listed by baselines/peers.py).
#include "baselines/peers.hpp"

namespace repix::peers {

#ifdef REPIX_HAVE_NPP
NativePeer npp_pba_peer();  // npp/npp_edt.cu (only where the CUDA toolkit ships NPP)
#endif

const std::vector<NativePeer>& native_peers() {
  static const std::vector<NativePeer> all = [] {
    std::vector<NativePeer> v;
#ifdef REPIX_HAVE_NPP
    v.push_back(npp_pba_peer());
#endif
    return v;
  }();
  return all;
}

}  // namespace repix::peers
