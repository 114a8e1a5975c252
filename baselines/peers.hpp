// Peers: other projects' implementations timed side by side with ours in the same bench run
// (OpenCV, NPP, CuPy, SciPy, scikit-image). C++ peers run in-process; Python peers run as
// `python3 baselines/peers.py` subprocesses that read .npy inputs, time their own calls and
// return raw samples and the output for verification. Their results go into the same report
// schema with variant id `peer:<id>`.
#pragma once
#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/image.hpp"
#include "core/stopping_rule.hpp"

namespace repix::peers {

// A peer that cannot take this input (e.g. a size its library rejects): the bench skips the
// case with this message instead of failing the run.
struct Unsupported : Error {
  using Error::Error;
};

struct Peer {
  std::string family;       // "edt", "reconstruct"
  std::string id;           // e.g. "cupy-edt", "npp-pba", "skimage-reconstruction"
  std::string description;  // one line: library, function, options
  bool gpu = false;
  bool exact = true;        // edt: an exact EDT (compared with seq-exact)
};

// The peers of `family` that can run on this machine (Python modules importable, GPU present
// where needed). Cheap after the first call (cached).
std::vector<Peer> available(const std::string& family);

struct PeerRun {
  std::vector<double> samples_ms;  // one per timed call, after warm-up, until the rule stopped
  protocol::Stop stopped_by = protocol::Stop::kNone;  // what stopped the sampling
  double sampling_s = 0;           // wall time of the sampling
  HostImage output;                // the peer's result of the last call (float32 distance for
                                   // edt, the mask's dtype for reconstruct)
  std::string scope;               // what the samples cover: "kernel" or "end-to-end"
  std::string version;             // the peer library's version, for the report
};

// A peer compiled into repix and run in process (NPP's EDT), as opposed to a Python one listed by
// baselines/peers.py. Each is one file under baselines/ and one line in baselines/register.cpp.
struct NativePeer {
  Peer peer;
  // As run() below; throws Unsupported for inputs the peer cannot take.
  std::function<PeerRun(const std::vector<const HostImage*>& inputs, const nlohmann::json& params,
                        const protocol::Rule& rule)>
      run;
};
// The in-process peers of this build (baselines/register.cpp), whether or not this machine can run them.
const std::vector<NativePeer>& native_peers();

// Runs `peer` on the inputs (edt: {mask}; reconstruct: {marker, mask}) with `params`
// (e.g. {"connectivity": 8}), sampled by `rule` (core/stopping_rule.hpp: Python peers apply the
// same rule in baselines/peers.py). Throws repix::Error with the peer's message on failure,
// Unsupported for inputs the peer cannot take. CPU peers get no warm-up call (nothing to load or
// compile after the import; at 8192^2 scikit-image takes most of a minute per call).
PeerRun run(const Peer& peer, const std::vector<const HostImage*>& inputs, const nlohmann::json& params,
            const protocol::Rule& rule);
// A native peer's samples of `call` (one timed call, milliseconds) by `rule`, after its warm-up.
PeerRun sample_native(const protocol::Rule& rule, const std::function<double()>& call);

}  // namespace repix::peers
