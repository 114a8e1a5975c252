// File IO: .npy round trips and hand-made .npy files (no numpy needed), raw files, dispatch by
// extension, streaming sources, and every bad input giving one clear line.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "datasets/datasets.hpp"
#include "datasets/io.hpp"

namespace repix::datasets {
namespace {

namespace fs = std::filesystem;

class IoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static int counter = 0;
    dir_ = fs::temp_directory_path() /
           ("repix_io_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // An .npy file with a hand-written header dict and `data_bytes` bytes of data.
  std::string write_npy_file(const std::string& name, const std::string& dict, std::size_t data_bytes,
                             int major = 1) const {
    std::string header = dict;
    const std::size_t pre = 6 + 2 + (major == 1 ? 2 : 4);
    header.append((64 - (pre + header.size() + 1) % 64) % 64, ' ');
    header.push_back('\n');
    std::string bytes = "\x93NUMPY";
    bytes.push_back(static_cast<char>(major));
    bytes.push_back(0);
    const std::size_t len_bytes = major == 1 ? 2 : 4;
    for (std::size_t i = 0; i < len_bytes; ++i) bytes.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xff));
    bytes += header;
    for (std::size_t i = 0; i < data_bytes; ++i) bytes.push_back(static_cast<char>(i * 7));
    const std::string p = path(name);
    std::ofstream(p, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return p;
  }

  fs::path dir_;
};

// Expects f() to throw one line of repix::Error containing every needle.
template <class F>
void expect_error(F f, std::initializer_list<std::string> needles) {
  try {
    f();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    for (const auto& n : needles) EXPECT_NE(msg.find(n), std::string::npos) << "'" << n << "' not in: " << msg;
  }
}

TEST_F(IoTest, NpyRoundTripEveryDtypeAndRank) {
  for (const char* spec : {"uniform:7:levels=256", "uniform:5x3:levels=256", "uniform:4x3x2:levels=256",
                           "uniform:7:dtype=uint16", "uniform:5x3:dtype=uint16", "uniform:4x3x2:dtype=uint16",
                           "uniform:7", "uniform:5x3", "uniform:4x3x2", "grf:33x20"}) {
    const HostImage img = generate(spec);
    const std::string p = path("a.npy");
    write_npy(img, p);
    const HostImage back = read_npy(p);
    EXPECT_EQ(back.shape(), img.shape()) << spec;
    EXPECT_EQ(back.dtype(), img.dtype()) << spec;
    EXPECT_EQ(back.content_hash(), img.content_hash()) << spec;
    const NpyHeader h = read_npy_header(p);
    EXPECT_EQ(h.data_offset % 64, 0) << "numpy aligns the data to 64 bytes";
  }
}

TEST_F(IoTest, NpyHeaderIsWhatNumpyWrites) {
  write_npy(generate("uniform:4x3x2"), path("a.npy"));
  std::ifstream f(path("a.npy"), std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(all.compare(0, 8, std::string("\x93NUMPY\x01\x00", 8)), 0);
  const std::size_t hlen = static_cast<unsigned char>(all[8]) | (static_cast<unsigned char>(all[9]) << 8);
  const std::string header = all.substr(10, hlen);
  EXPECT_EQ(header.rfind("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 4), }", 0), 0u) << header;
  EXPECT_EQ(header.back(), '\n');
  EXPECT_EQ(all.size(), 10 + hlen + 24 * 4);
  write_npy(generate("ramp:7"), path("b.npy"));
  EXPECT_EQ(read_npy_header(path("b.npy")).shape, Shape::d1(7));
  std::ifstream g(path("b.npy"), std::ios::binary);
  std::string b((std::istreambuf_iterator<char>(g)), std::istreambuf_iterator<char>());
  EXPECT_NE(b.find("'descr': '|u1'"), std::string::npos);
  EXPECT_NE(b.find("'shape': (7,)"), std::string::npos);
}

TEST_F(IoTest, NpyVersion2AndVariantHeaders) {
  const std::string p = write_npy_file("v2.npy", "{'descr': '<u2', 'fortran_order': False, 'shape': (3, 4), }", 24, 2);
  const HostImage img = read_npy(p);
  EXPECT_EQ(img.shape(), Shape::d2(4, 3));
  EXPECT_EQ(img.dtype(), DType::u16);
  const std::string q = write_npy_file("py2.npy", "{'descr': '|u1', 'fortran_order': False, 'shape': (3L, 4L), }", 12);
  EXPECT_EQ(read_npy(q).shape(), Shape::d2(4, 3));
  const std::string r = write_npy_file("dq.npy", "{\"descr\": \"<f4\", \"shape\": (2,), \"fortran_order\": False}", 8);
  EXPECT_EQ(read_npy(r).shape(), Shape::d1(2));
  // Trailing bytes after the data are ignored, as numpy does.
  const std::string t = write_npy_file("extra.npy", "{'descr': '|u1', 'fortran_order': False, 'shape': (4,), }", 10);
  EXPECT_EQ(read_npy(t).size(), 4);
}

TEST_F(IoTest, NpyBadInputs) {
  const auto dict = [](const std::string& descr, const std::string& shape, bool fortran = false) {
    return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") + ", 'shape': " + shape + ", }";
  };
  expect_error([&] { read_npy(path("missing.npy")); }, {"cannot open", "missing.npy", "No such file"});
  const std::string f8 = write_npy_file("f8.npy", dict("<f8", "(2, 2)"), 32);
  expect_error([&] { read_npy(f8); }, {"'<f8'", "f8.npy", "'|u1'", "'<u2'", "'<f4'"});
  const std::string i8 = write_npy_file("i8.npy", dict("<i8", "(2, 2)"), 32);
  expect_error([&] { read_npy(i8); }, {"'<i8'", "'<f4'"});
  const std::string be = write_npy_file("be.npy", dict(">f4", "(2, 2)"), 16);
  expect_error([&] { read_npy(be); }, {"'>f4'", "big-endian"});
  const std::string fo = write_npy_file("fo.npy", dict("<f4", "(2, 2)", true), 16);
  expect_error([&] { read_npy(fo); }, {"Fortran order", "fo.npy"});
  const std::string d4 = write_npy_file("d4.npy", dict("|u1", "(2, 2, 2, 2)"), 16);
  expect_error([&] { read_npy(d4); }, {"4-d", "(2, 2, 2, 2)", "1-3"});
  const std::string d0 = write_npy_file("d0.npy", dict("|u1", "()"), 1);
  expect_error([&] { read_npy(d0); }, {"0-d"});
  const std::string empty = write_npy_file("empty.npy", dict("|u1", "(0, 3)"), 0);
  expect_error([&] { read_npy(empty); }, {"empty array", "(0, 3)"});
  const std::string trunc = write_npy_file("trunc.npy", dict("<f4", "(10, 10)"), 399);
  expect_error([&] { read_npy(trunc); }, {"truncated", "trunc.npy", "400", "399"});
  expect_error([&] { open_npy_source(trunc); }, {"truncated", "400", "399"});
  const std::string structured = write_npy_file("st.npy", "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", 8);
  expect_error([&] { read_npy(structured); }, {"structured"});
  std::ofstream(path("junk.npy")) << "hello, not numpy";
  expect_error([&] { read_npy(path("junk.npy")); }, {"not an .npy file"});
  std::ofstream(path("short.npy"), std::ios::binary).write("\x93NUMPY\x01\x00\x40\x00{'descr'", 17);
  expect_error([&] { read_npy(path("short.npy")); }, {"truncated .npy header"});
  const std::string v9 = write_npy_file("v9.npy", dict("|u1", "(2,)"), 2, 9);
  expect_error([&] { read_npy(v9); }, {"version 9.0"});
}

TEST_F(IoTest, RawRoundTripAndSizeMismatch) {
  const HostImage img = generate("uniform:6x5x4:dtype=uint16");
  write_raw(img, path("a.raw"));
  EXPECT_EQ(fs::file_size(path("a.raw")), img.bytes());
  const HostImage back = read_raw(path("a.raw"), img.shape(), DType::u16);
  EXPECT_EQ(back.content_hash(), img.content_hash());
  expect_error([&] { read_raw(path("a.raw"), Shape::d2(10, 10), DType::f32); },
               {"a.raw", "240 bytes", "10x10", "float32", "400 bytes"});
  expect_error([&] { read_raw(path("nope.raw"), Shape::d2(10, 10), DType::f32); }, {"cannot open", "nope.raw"});
  expect_error([&] { read_raw(dir_.string(), Shape::d2(10, 10), DType::f32); }, {"directory"});
}

TEST_F(IoTest, LoadAndSaveDispatch) {
  const HostImage img = generate("grf:16x12");
  save(img, path("g.npy"));
  save(img, path("g.dat"));
  EXPECT_EQ(load(path("g.npy")).content_hash(), img.content_hash());
  EXPECT_EQ(load("file:" + path("g.npy")).content_hash(), img.content_hash());
  EXPECT_EQ(load(path("g.dat") + ":shape=16x12:dtype=float32").content_hash(), img.content_hash());
  EXPECT_EQ(generate("file:" + path("g.dat") + ":shape=16x12:dtype=float32").content_hash(), img.content_hash());
  EXPECT_EQ(load("grf:16x12").content_hash(), img.content_hash());
  // raw under another name, given shape and dtype
  fs::copy_file(path("g.dat"), path("g.bin"));
  EXPECT_EQ(load(path("g.bin") + ":shape=16x12:dtype=f32").content_hash(), img.content_hash());

  expect_error([&] { load(path("g.dat")); }, {"needs shape= and dtype=", "g.dat"});
  expect_error([&] { load(path("g.npy") + ":shape=12x16"); }, {"16x12", "shape=12x16"});
  expect_error([&] { load(path("g.npy") + ":dtype=uint8"); }, {"float32", "dtype=uint8"});
  expect_error([&] { load(path("g.xyz")); }, {"don't know how to read", ".xyz"});
  expect_error([&] { save(img, path("g.xyz")); }, {"don't know how to write", ".xyz"});
  expect_error([&] { save(img, path("no/such/dir/g.npy")); }, {"cannot write"});
  if (!have_image_io()) {
    expect_error([&] { load(path("g.png")); }, {"reading .png needs a build with OpenCV"});
    expect_error([&] { save(img, path("g.png")); }, {"writing .png needs a build with OpenCV"});
  }
  // Nothing but the outputs is left behind (writes go through a temporary + rename).
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().filename().string().rfind(".repix-", 0), std::string::npos) << e.path();
}

TEST_F(IoTest, FileSourcesStreamSlabs) {
  const HostImage img = generate("uniform:9x7x13:levels=1000");
  write_npy(img, path("v.npy"));
  write_raw(img, path("v.raw"));
  for (const std::string spec : {"file:" + path("v.npy"), "file:" + path("v.raw") + ":shape=9x7x13:dtype=uint16"}) {
    auto src = open_source(Spec::parse(spec));
    ASSERT_EQ(src->shape(), img.shape());
    ASSERT_EQ(src->dtype(), DType::u16);
    EXPECT_TRUE(is_chunk_addressable(Spec::parse(spec)));
    const std::size_t slab = 9 * 7 * 2;
    std::vector<char> buf(img.bytes());
    src->read(5, 13, buf.data() + 5 * slab);  // a later range first
    src->read(0, 5, buf.data());
    EXPECT_EQ(std::memcmp(buf.data(), img.raw(), img.bytes()), 0) << spec;
    EXPECT_THROW(src->read(12, 14, buf.data()), Error);
  }
  // A raw file cut short after opening: the slab read reports the truncation.
  auto src = open_source(Spec::parse("file:" + path("v.raw") + ":shape=9x7x13:dtype=uint16"));
  fs::resize_file(path("v.raw"), 100);
  std::vector<char> buf(9 * 7 * 2);
  expect_error([&] { src->read(12, 13, buf.data()); }, {"truncated", "v.raw"});
  expect_error([&] { open_source(Spec::parse("file:" + path("v.raw") + ":shape=9x7x13:dtype=uint16")); },
               {"100 bytes", "1638 bytes"});
}

// The header length a file claims is checked against the file and a maximum before any memory is
// reserved for it (a 100-byte file claiming 4 GB of header once made repix allocate them).
TEST_F(IoTest, NpyHeaderLengthIsBoundedBeforeAllocating) {
  // Format 2.0, length 0xFFFFFFF0, 100 bytes in all.
  std::string bytes = std::string("\x93NUMPY\x02\x00", 8) + std::string("\xf0\xff\xff\xff", 4);
  bytes.resize(100, ' ');
  std::ofstream(path("huge.npy"), std::ios::binary) << bytes;
  expect_error([&] { read_npy(path("huge.npy")); }, {"huge.npy", "claims 4294967280 bytes"});
  expect_error([&] { open_npy_source(path("huge.npy")); }, {"claims 4294967280 bytes"});
  // A length the file does hold, but beyond the maximum (1 MiB): refused as well.
  std::string dict = "{'descr': '|u1', 'fortran_order': False, 'shape': (2,), }";
  dict.append((1u << 20) + 64 - dict.size(), ' ');
  dict.back() = '\n';
  const std::string big = write_npy_file("bighdr.npy", dict, 2, 2);
  expect_error([&] { read_npy(big); }, {"bighdr.npy", "at most 1048576"});
  // A length past the end of a small file: truncated, with both numbers.
  std::string cut = std::string("\x93NUMPY\x01\x00", 8) + std::string("\xc8\x00", 2) + "{'descr': '|u1'";
  std::ofstream(path("cut.npy"), std::ios::binary) << cut;
  expect_error([&] { read_npy(path("cut.npy")); }, {"truncated .npy header", "claims 200 bytes", "holds 15"});
  // Long headers under the maximum still read (numpy pads; other writers may pad more).
  std::string padded = "{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }";
  padded.append(5000, ' ');
  EXPECT_EQ(read_npy(write_npy_file("padded.npy", padded, 3, 2)).size(), 3);
}

TEST_F(IoTest, NpyHeaderWithADuplicateKeyIsRefused) {
  const std::string descr = write_npy_file("d.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'descr': '|u1', }", 8);
  expect_error([&] { read_npy(descr); }, {"d.npy", "'descr' given twice"});
  const std::string shape = write_npy_file("s.npy", "{'shape': (4,), 'descr': '|u1', \"shape\" : (2,), 'fortran_order': False}", 4);
  expect_error([&] { read_npy(shape); }, {"'shape' given twice"});
  const std::string fortran = write_npy_file("f.npy", "{'descr': '|u1', 'fortran_order': True, 'fortran_order': False, 'shape': (2,)}", 2);
  expect_error([&] { read_npy(fortran); }, {"'fortran_order' given twice"});
  // Key names inside values (a structured dtype's field names) are not keys of the header.
  const std::string nested = write_npy_file("n.npy", "{'descr': [('descr', '<f4')], 'fortran_order': False, 'shape': (2,), }", 8);
  expect_error([&] { read_npy(nested); }, {"structured"});
}

TEST_F(IoTest, ADirectoryIsNotReadAsAnImage) {
  fs::create_directories(path("d.npy"));
  fs::create_directories(path("plain"));
  expect_error([&] { load(path("d.npy")); }, {"d.npy", "is a directory"});
  expect_error([&] { load(path("plain")); }, {"plain", "is a directory"});
  expect_error([&] { open_source(Spec::parse("file:" + path("d.npy"))); }, {"is a directory"});
}

TEST_F(IoTest, SpecOfReadsSpecsAndPaths) {
  EXPECT_EQ(spec_of("uniform:8x8:levels=4").str(), Spec::parse("uniform:8x8:levels=4").str());
  EXPECT_EQ(spec_of(path("a.npy")).kind, "file");
  EXPECT_EQ(spec_of(path("a.npy")).path, path("a.npy"));
  EXPECT_EQ(spec_of("file:" + path("a.npy")).path, path("a.npy"));
  EXPECT_EQ(spec_of("uniform").kind, "file");  // a file named like a kind, without a shape
}

// The ECC paper's inputs are raw float32 GRFs standardised to mean 0, std 1.
TEST(EccReference, RawGrfHasMeanZero) {
  const char* env = std::getenv("REPIX_ECC_REFERENCE_DIR");
  const std::string dir = env ? env : std::string(REPIX_TEST_SHARED_DIR) + "/ecc_reference";
  const std::string p = dir + "/2D_128_0.dat";
  if (!fs::exists(p)) GTEST_SKIP() << p << " not found (set REPIX_ECC_REFERENCE_DIR to the folder of the paper's data)";
  const HostImage img = load("file:" + p + ":shape=128x128:dtype=float32");
  double s = 0, s2 = 0;
  for (std::int64_t i = 0; i < img.size(); ++i) s += img.data<float>()[i];
  const double mean = s / img.size();
  for (std::int64_t i = 0; i < img.size(); ++i) s2 += (img.data<float>()[i] - mean) * (img.data<float>()[i] - mean);
  EXPECT_LT(std::fabs(mean), 0.01);
  EXPECT_NEAR(std::sqrt(s2 / img.size()), 1.0, 0.01);
}

}  // namespace
}  // namespace repix::datasets
