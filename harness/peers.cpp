#include "harness/peers.hpp"

#include "core/error.hpp"

namespace repix::peers {

std::vector<Peer> available(const std::string&) { return {}; }

PeerRun run(const Peer& peer, const std::vector<const HostImage*>&, const nlohmann::json&, int, int) {
  throw Error("peer " + peer.id + " is not available");
}

}  // namespace repix::peers
