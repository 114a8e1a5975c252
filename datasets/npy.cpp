// NumPy .npy files: read format 1.0, 2.0 and 3.0, write 1.0.
// Format: "\x93NUMPY", major, minor, header length (2 bytes LE in 1.0, 4 bytes LE in 2.0/3.0),
// then a Python dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (nz, ny, nx), }
// padded with spaces and a newline, then the array data in C order.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "core/atomic_file.hpp"
#include "datasets/io.hpp"

namespace repix::datasets {
namespace {

constexpr char kMagic[] = "\x93NUMPY";

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
constexpr std::size_t kMagicLen = 6;
// The longest header read: numpy's are a few hundred bytes (its own reader refuses more than
// 10000 by default); 1 MiB leaves room for any honest writer.
constexpr std::uint32_t kMaxHeader = 1u << 20;

std::string tuple_str(const std::vector<std::int64_t>& dims) {
  std::string s = "(";
  for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + (dims.size() == 1 ? ",)" : ")");
}

// Position just after "'key':" (or "\"key\":") and any spaces, or npos.
std::size_t value_pos(const std::string& h, const std::string& key) {
  for (const char q : {'\'', '"'}) {
    const std::string quoted = std::string(1, q) + key + q;
    std::size_t p = h.find(quoted);
    if (p == std::string::npos) continue;
    p += quoted.size();
    while (p < h.size() && h[p] == ' ') ++p;
    if (p >= h.size() || h[p] != ':') return std::string::npos;
    ++p;
    while (p < h.size() && h[p] == ' ') ++p;
    return p;
  }
  return std::string::npos;
}

// The keys of the header's top-level dict, in order: every string (quoted with ' or ") at
// nesting depth 1 that a ':' follows. Values (strings, tuples, lists) are skipped whole.
std::vector<std::string> dict_keys(const std::string& h) {
  std::vector<std::string> keys;
  int depth = 0;
  for (std::size_t i = 0; i < h.size(); ++i) {
    const char c = h[i];
    if (c == '{' || c == '(' || c == '[') ++depth;
    else if (c == '}' || c == ')' || c == ']') --depth;
    else if (c == '\'' || c == '"') {
      const std::size_t end = h.find(c, i + 1);
      if (end == std::string::npos) break;  // unterminated: the field parsers below say so
      std::size_t next = end + 1;
      while (next < h.size() && h[next] == ' ') ++next;
      if (depth == 1 && next < h.size() && h[next] == ':') keys.push_back(h.substr(i + 1, end - i - 1));
      i = end;
    }
  }
  return keys;
}

struct ParsedHeader {
  std::string descr;
  bool fortran = false;
  std::vector<std::int64_t> dims;
  std::int64_t data_offset = 0;
};

ParsedHeader parse_header(const std::string& path) {
  std::FILE* fp = std::fopen(path.c_str(), "rb");
  if (!fp) throw Error("cannot open '" + path + "': " + std::strerror(errno));
  std::unique_ptr<std::FILE, FileCloser> f(fp);

  unsigned char pre[12];
  const std::size_t got = std::fread(pre, 1, 8, fp);
  // The magic's first bytes and then the end: an .npy file cut short, not some other file.
  const std::size_t magic_seen = std::min<std::size_t>(got, kMagicLen);
  if (got < 8 && got > 0 && std::memcmp(pre, kMagic, magic_seen) == 0)
    throw Error("truncated .npy header in '" + path + "': the file ends after " + std::to_string(got) +
                (got == 1 ? " byte" : " bytes") + ", inside the magic and version");
  if (got != 8 || std::memcmp(pre, kMagic, kMagicLen) != 0)
    throw Error("'" + path + "' is not an .npy file (it does not start with \\x93NUMPY)");
  const int major = pre[6], minor = pre[7];
  std::size_t len_bytes = 0;
  if (major == 1) len_bytes = 2;
  else if (major == 2 || major == 3) len_bytes = 4;
  else
    throw Error("'" + path + "' is .npy format version " + std::to_string(major) + "." +
                std::to_string(minor) + "; repix reads versions 1.0, 2.0 and 3.0");
  if (std::fread(pre + 8, 1, len_bytes, fp) != len_bytes) throw Error("truncated .npy header in '" + path + "'");
  std::uint32_t hlen = 0;
  for (std::size_t i = 0; i < len_bytes; ++i) hlen |= static_cast<std::uint32_t>(pre[8 + i]) << (8 * i);
  // The length is checked before anything is allocated for it: a damaged or hostile file must not
  // make repix reserve gigabytes.
  if (hlen > kMaxHeader)
    throw Error("malformed .npy header in '" + path + "': it claims " + std::to_string(hlen) +
                " bytes (numpy writes a few hundred; at most " + std::to_string(kMaxHeader) + " accepted)");
  const std::int64_t after_length = static_cast<std::int64_t>(8 + len_bytes);
  if (static_cast<std::int64_t>(hlen) > detail::file_size(path) - after_length)
    throw Error("truncated .npy header in '" + path + "': it claims " + std::to_string(hlen) + " bytes, the file holds " +
                std::to_string(std::max<std::int64_t>(0, detail::file_size(path) - after_length)) + " after the length");
  std::string h(hlen, '\0');
  if (hlen > 0 && std::fread(&h[0], 1, hlen, fp) != hlen) throw Error("truncated .npy header in '" + path + "'");

  ParsedHeader out;
  out.data_offset = static_cast<std::int64_t>(8 + len_bytes + hlen);
  const auto malformed = [&](const std::string& what) {
    return Error("malformed .npy header in '" + path + "': " + what);
  };
  // numpy refuses a dict that names a key twice; reading the first (or the last) would be a guess.
  std::vector<std::string> keys = dict_keys(h);
  std::sort(keys.begin(), keys.end());
  const auto twice = std::adjacent_find(keys.begin(), keys.end());
  if (twice != keys.end()) throw malformed("key '" + *twice + "' given twice");

  std::size_t p = value_pos(h, "descr");
  if (p == std::string::npos) throw malformed("no 'descr'");
  if (h[p] == '[') throw Error("'" + path + "' holds a structured array; repix reads plain uint8, uint16 or float32 arrays");
  if (h[p] != '\'' && h[p] != '"') throw malformed("'descr' is not a string");
  const std::size_t e = h.find(h[p], p + 1);
  if (e == std::string::npos) throw malformed("unterminated 'descr'");
  out.descr = h.substr(p + 1, e - p - 1);

  p = value_pos(h, "fortran_order");
  if (p == std::string::npos) throw malformed("no 'fortran_order'");
  if (h.compare(p, 4, "True") == 0) out.fortran = true;
  else if (h.compare(p, 5, "False") != 0) throw malformed("'fortran_order' is neither True nor False");

  p = value_pos(h, "shape");
  if (p == std::string::npos || h[p] != '(') throw malformed("no 'shape' tuple");
  const std::size_t close = h.find(')', p);
  if (close == std::string::npos) throw malformed("unterminated 'shape'");
  const std::string tuple = h.substr(p + 1, close - p - 1);
  std::size_t pos = 0;
  while (pos < tuple.size()) {
    std::size_t comma = tuple.find(',', pos);
    if (comma == std::string::npos) comma = tuple.size();
    std::string tok = tuple.substr(pos, comma - pos);
    tok.erase(0, tok.find_first_not_of(' '));
    tok.erase(tok.find_last_not_of(' ') + 1);
    if (!tok.empty() && tok.back() == 'L') tok.pop_back();  // Python 2 longs: (3L, 4L)
    if (!tok.empty()) {
      if (tok.find_first_not_of("0123456789") != std::string::npos || tok.size() > 15)
        throw malformed("bad dimension '" + tok + "' in 'shape'");
      out.dims.push_back(std::stoll(tok));
    }
    pos = comma + 1;
  }
  return out;
}

}  // namespace

DType array_dtype(const std::string& descr, const std::string& subject, const std::string& kind) {
  if (descr == "|u1" || descr == "<u1" || descr == "u1") return DType::u8;
  if (descr == "<u2") return DType::u16;
  if (descr == "<f4") return DType::f32;
  std::string hint = "convert with a.astype(np.float32) or a.astype(np.uint16)";
  if (!descr.empty() && descr[0] == '>') hint = "big-endian data: convert with a.astype(a.dtype.newbyteorder('<'))";
  throw WrongType("unsupported " + kind + " '" + descr + "' in " + subject +
                  " (repix reads '|u1' uint8, '<u2' uint16 and '<f4' float32; " + hint + ")");
}

Shape array_shape(const std::vector<std::int64_t>& d, const std::string& subject) {
  if (d.empty()) throw Error(subject + " holds a 0-d array (a scalar); repix reads 1-3 dimensional arrays");
  if (d.size() > 3)
    throw Error(subject + " holds a " + std::to_string(d.size()) + "-d array, shape " + tuple_str(d) +
                "; repix reads 1-3 dimensional arrays");
  for (auto v : d)
    if (v == 0) throw Error(subject + " holds an empty array, shape " + tuple_str(d));
  std::int64_t elems = 1;
  for (auto v : d) {
    if (v > (std::int64_t(1) << 48) / elems) throw Error(subject + " shape " + tuple_str(d) + " is too large");
    elems *= v;
  }
  // numpy (nz, ny, nx) -> Shape{nx, ny, nz}: the last numpy axis is the fastest (x).
  if (d.size() == 1) return Shape::d1(d[0]);
  if (d.size() == 2) return Shape::d2(d[1], d[0]);
  return Shape::d3(d[2], d[1], d[0]);
}

namespace {

// A FIFO, a pipe or a character device can be read once, in order: header and data arrive on one
// stream that cannot be opened twice or seeked. Its bytes go to a temporary regular file first
// (removed when this returns, or on a signal), which is then read as any .npy.
class Spooled {
 public:
  explicit Spooled(const std::string& source) {
    std::FILE* in = std::fopen(source.c_str(), "rb");
    if (!in) throw Error("cannot open '" + source + "': " + std::strerror(errno));
    std::unique_ptr<std::FILE, FileCloser> hold_in(in);
    const std::string tmpl = (std::filesystem::temp_directory_path() / "repix-stdin-XXXXXX").string();
    std::vector<char> name(tmpl.begin(), tmpl.end());
    name.push_back('\0');
    const int fd = ::mkstemp(name.data());
    if (fd < 0) throw Error("cannot spool '" + source + "' to a temporary file: " + std::strerror(errno));
    path_ = name.data();
    guard_ = std::make_unique<RemoveOnSignal>(path_);
    std::FILE* out = ::fdopen(fd, "wb");
    if (!out) {
      ::close(fd);
      throw Error("cannot spool '" + source + "': " + std::strerror(errno));
    }
    std::unique_ptr<std::FILE, FileCloser> hold_out(out);
    std::vector<char> buf(std::size_t(1) << 20);
    for (std::size_t n; (n = std::fread(buf.data(), 1, buf.size(), in)) > 0;)
      if (std::fwrite(buf.data(), 1, n, out) != n) throw Error("cannot spool '" + source + "': " + std::strerror(errno));
    if (std::ferror(in)) throw Error("cannot read '" + source + "': " + std::strerror(errno));
    if (std::fflush(out) != 0) throw Error("cannot spool '" + source + "': " + std::strerror(errno));
  }
  ~Spooled() {
    if (!path_.empty()) std::remove(path_.c_str());
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::unique_ptr<RemoveOnSignal> guard_;
};

bool is_stream(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) || S_ISSOCK(st.st_mode));
}

NpyHeader read_header_of(const std::string& path);

// The file to read for `path`: itself, or for a stream its spooled copy, made on the first read
// and kept for the process's later reads of the same name (a command reads the header, then the
// data); removed at exit or on a signal.
std::string readable_path(const std::string& path) {
  if (!is_stream(path)) return path;
  static std::mutex lock;
  static std::map<std::string, std::unique_ptr<Spooled>> spooled;
  std::lock_guard<std::mutex> hold(lock);
  auto& s = spooled[path];
  if (!s) s = std::make_unique<Spooled>(path);
  return s->path();
}

// Runs read(file) on the file to read for `path`; errors name `path`, not a spooled copy.
template <class Read>
auto read_as(const std::string& path, Read&& read) {
  const std::string file = readable_path(path);
  if (file == path) return read(file);
  try {
    return read(file);
  } catch (const Error& e) {
    std::string what = e.what();
    for (std::size_t at; (at = what.find(file)) != std::string::npos;) what.replace(at, file.size(), path);
    throw Error(what);
  }
}

}  // namespace

NpyHeader read_npy_header(const std::string& path) {
  return read_as(path, [](const std::string& file) { return read_header_of(file); });
}

namespace {

NpyHeader read_header_of(const std::string& path) {
  const ParsedHeader ph = parse_header(path);
  NpyHeader out;
  const std::string subject = "'" + path + "'";
  out.dtype = array_dtype(ph.descr, subject, ".npy dtype");
  if (ph.fortran)
    throw Error(subject + " is stored in Fortran order; save it with np.save(path, np.ascontiguousarray(a))");
  const auto& d = ph.dims;
  out.shape = array_shape(d, subject);
  out.data_offset = ph.data_offset;

  const std::int64_t need = out.shape.size() * static_cast<std::int64_t>(dtype_size(out.dtype));
  const std::int64_t have = detail::file_size(path) - ph.data_offset;
  if (have < need)
    throw Error("truncated .npy file '" + path + "': shape " + tuple_str(d) + " '" + ph.descr + "' needs " +
                std::to_string(need) + " data bytes, found " + std::to_string(have < 0 ? 0 : have));
  return out;
}

}  // namespace

HostImage read_npy(const std::string& path, bool pinned) {
  return read_as(path, [pinned](const std::string& file) {
    const NpyHeader h = read_header_of(file);
    HostImage img(h.dtype, h.shape, pinned);
    detail::make_file_slab_source(file, h.data_offset, h.shape, h.dtype)->read(0, slab_count(h.shape), img.raw());
    return img;
  });
}

std::unique_ptr<SlabSource> open_npy_source(const std::string& path) {
  return read_as(path, [](const std::string& file) {
    const NpyHeader h = read_header_of(file);
    return detail::make_file_slab_source(file, h.data_offset, h.shape, h.dtype);
  });
}

namespace {

// Header (format 1.0) and data of a C-order array of numpy shape `dims` with numpy dtype `descr`.
void write_npy_dims(const void* data, std::size_t bytes, const char* descr, const std::vector<std::int64_t>& dims,
                    const std::string& path) {
  const std::string head = npy_header(descr, dims);
  AtomicFile f(path);
  f.write(head.data(), head.size());
  f.write(data, bytes);
  f.commit();
}

// The same for an array of `shape` (numpy order (nz, ny, nx)).
void write_npy_bytes(const void* data, std::size_t bytes, const char* descr, const Shape& s, const std::string& path) {
  write_npy_dims(data, bytes, descr, npy_dims(s), path);
}

}  // namespace

std::string npy_header(const std::string& descr, const std::vector<std::int64_t>& dims) {
  std::string h = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + tuple_str(dims) + ", }";
  // Pad with spaces so that the data starts on a 64-byte boundary (as numpy does); end in '\n'.
  const std::size_t unpadded = kMagicLen + 2 + 2 + h.size() + 1;
  h.append((64 - unpadded % 64) % 64, ' ');
  h.push_back('\n');
  if (h.size() > 65535) throw Error("internal: .npy header too long");
  std::string pre(kMagic, kMagicLen);
  pre.push_back('\x01');
  pre.push_back('\x00');
  pre.push_back(static_cast<char>(h.size() & 0xff));
  pre.push_back(static_cast<char>(h.size() >> 8));
  return pre + h;
}

std::string npy_descr(DType dtype) { return dtype == DType::u8 ? "|u1" : dtype == DType::u16 ? "<u2" : "<f4"; }

std::vector<std::int64_t> npy_dims(const Shape& s) {
  if (s.ndim == 3) return {s.nz, s.ny, s.nx};
  if (s.ndim == 2) return {s.ny, s.nx};
  return {s.nx};
}

void write_npy(const HostImage& img, const std::string& path) {
  write_npy_bytes(img.raw(), img.bytes(), npy_descr(img.dtype()).c_str(), img.shape(), path);
}

void write_npy_int64(const std::int64_t* data, const Shape& shape, const std::string& path) {
  write_npy_bytes(data, static_cast<std::size_t>(shape.size()) * sizeof(std::int64_t), "<i8", shape, path);
}

void write_npy_int32(const std::int32_t* data, const Shape& shape, const std::string& path) {
  write_npy_bytes(data, static_cast<std::size_t>(shape.size()) * sizeof(std::int32_t), "<i4", shape, path);
}

void write_npy_float32(const float* data, const std::vector<std::int64_t>& dims, const std::string& path) {
  std::size_t count = 1;
  for (const std::int64_t d : dims) {
    if (d <= 0) throw Error("internal: .npy dimension " + std::to_string(d) + " for '" + path + "'");
    count *= static_cast<std::size_t>(d);
  }
  write_npy_dims(data, count * sizeof(float), "<f4", dims, path);
}

}  // namespace repix::datasets
