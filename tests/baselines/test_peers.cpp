// The peer protocol (harness/peers.cpp <-> baselines/peers.py) against a stand-in peers.py
// that needs no numpy: `list`, a successful `run` (samples + output .npy read back) and a failing
// one (the peer's one-line error becomes the exception text). Each ctest case is its own
// process, so the cached peer list starts empty.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "baselines/peers.hpp"

namespace repix {
namespace {

namespace fs = std::filesystem;

// Writes a 2x3 float32 .npy by hand (header padded to 64 bytes, as the format asks).
const char* kFakePeers = R"PY(
import json, struct, sys
args = sys.argv[1:]
if args[0] == "list":
    print(json.dumps([{"family": "edt", "id": "fake-edt", "description": "stand-in", "gpu": False,
                       "exact": True, "scope": "end-to-end"},
                      {"family": "reconstruct", "id": "fake-fail", "description": "always fails",
                       "gpu": False, "exact": True, "scope": "end-to-end"}]))
    sys.exit(0)
peer = args[args.index("--peer") + 1]
if peer == "fake-fail":
    print("peers.py: ValueError: marker and mask differ", file=sys.stderr)
    sys.exit(1)
out = args[args.index("--output") + 1]
n = int(args[args.index("--max-samples") + 1])
header = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }"
header += " " * (64 - 10 - len(header) - 1) + "\n"
with open(out, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
    f.write(struct.pack("<6f", 0, 1, 2, 3, 4, 5))
print("noise before the result line")
print(json.dumps({"samples_ms": [1.5] * n, "scope": "end-to-end", "version": "9.9", "stopped_by": "max-samples", "sampling_s": 0.25}))
)PY";

class Peers : public ::testing::Test {
 protected:
  void SetUp() override {
    // One folder per test process: ctest runs the tests of this suite in parallel processes, and
    // gtest's random_seed() is 0 in every one of them unless shuffling.
    dir_ = fs::temp_directory_path() / ("repix-test-peers-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    std::ofstream(dir_ / "peers.py") << kFakePeers;
    ::setenv("REPIX_BASELINES_DIR", dir_.c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("REPIX_BASELINES_DIR");
    fs::remove_all(dir_);
  }
  fs::path dir_;
};

TEST_F(Peers, ListsByFamilyAndRunsOne) {
  // In-process peers (NPP where built and a GPU exists) come beside the script's.
  std::vector<peers::Peer> edt;
  for (const auto& p : peers::available("edt"))
    if (p.id != "npp-pba") edt.push_back(p);
  ASSERT_EQ(edt.size(), 1u);
  EXPECT_EQ(edt[0].id, "fake-edt");
  EXPECT_TRUE(peers::available("ecc").empty());
  HostImage in(DType::u8, Shape::d2(2, 3));
  const peers::PeerRun r = peers::run(edt[0], {&in}, {{"connectivity", 8}}, protocol::Rule::fixed(4));
  EXPECT_EQ(r.samples_ms, std::vector<double>(4, 1.5));
  EXPECT_EQ(r.stopped_by, protocol::Stop::kMaxSamples);
  EXPECT_EQ(r.sampling_s, 0.25);
  EXPECT_EQ(r.scope, "end-to-end");
  EXPECT_EQ(r.version, "9.9");
  ASSERT_EQ(r.output.dtype(), DType::f32);
  EXPECT_EQ(r.output.shape(), Shape::d2(2, 3));
  EXPECT_EQ(r.output.data<float>()[5], 5.0f);
}

TEST_F(Peers, FailureCarriesThePeersMessage) {
  const auto rec = peers::available("reconstruct");
  ASSERT_EQ(rec.size(), 1u);
  HostImage in(DType::u8, Shape::d2(2, 2));
  try {
    peers::run(rec[0], {&in, &in}, {}, protocol::Rule::fixed(1));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("marker and mask differ"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace repix
