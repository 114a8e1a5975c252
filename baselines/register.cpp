// The peers compiled into repix, one line each (the Python peers are listed by baselines/peers.py).
#include "baselines/peers.hpp"

namespace repix::peers {

#ifdef REPIX_HAVE_NPP
NativePeer npp_pba_peer();  // npp/npp_edt.cu (only where the CUDA toolkit ships NPP)
#endif
#ifdef REPIX_HAVE_BLIN_MAXTREE
NativePeer blin_maxtree_peer();      // blin/blin_maxtree.cu (only where Blin's code was fetched)
NativePeer blin_maxtree_e2e_peer();  // the same, end to end
#endif

const std::vector<NativePeer>& native_peers() {
  static const std::vector<NativePeer> all = [] {
    std::vector<NativePeer> v;
#ifdef REPIX_HAVE_NPP
    v.push_back(npp_pba_peer());
#endif
#ifdef REPIX_HAVE_BLIN_MAXTREE
    v.push_back(blin_maxtree_peer());
    v.push_back(blin_maxtree_e2e_peer());
#endif
    return v;
  }();
  return all;
}

}  // namespace repix::peers
