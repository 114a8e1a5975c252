#include "harness/distributed/shared_npy.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "datasets/io.hpp"

namespace repix::distributed {

namespace {

std::string errno_text() { return std::strerror(errno); }

// Writes each segment at its place (after `head` bytes) in the file `path` (which exists) and
// syncs it; "" or why not.
std::string write_at(const std::string& path, std::uint64_t head, const std::vector<Segment>& segments) {
  std::size_t total = 0;
  for (const Segment& s : segments) total += s.bytes;
  if (total == 0) return "";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return "cannot open '" + path + "' to write its part: " + errno_text();
  std::string error;
  for (const Segment& s : segments) {
    const char* p = static_cast<const char*>(s.data);
    std::uint64_t at = head + s.offset;
    std::size_t bytes = s.bytes;
    while (bytes > 0 && error.empty()) {
      const ssize_t n = ::pwrite(fd, p, bytes, static_cast<off_t>(at));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) error = "writing its part of '" + path + "' failed: " + errno_text();
      else {
        p += n;
        at += static_cast<std::uint64_t>(n);
        bytes -= static_cast<std::size_t>(n);
      }
    }
  }
  if (error.empty() && ::fsync(fd) != 0) error = "syncing its part of '" + path + "' failed: " + errno_text();
  ::close(fd);
  return error;
}

}  // namespace

void write_npy_parts(const Comm& comm, const std::string& path, const std::string& descr,
                     const std::vector<std::int64_t>& dims, const std::vector<Segment>& mine) {
  const std::string head = datasets::npy_header(descr, dims);
  std::uint64_t total = descr == "|u1" ? 1 : descr == "<u2" ? 2 : descr == "<i4" || descr == "<f4" ? 4 : 8;
  for (const std::int64_t d : dims) total *= static_cast<std::uint64_t>(d);
  std::unique_ptr<AtomicFile> file;
  std::string error, temporary;
  if (comm.root()) {
    try {
      file = std::make_unique<AtomicFile>(path);
      if (file->temporary().empty())
        throw Error("'" + path + "': a distributed run writes its arrays into files that every rank writes its part of, "
                    "not standard output or a device");
      file->write(head.data(), head.size());
      if (std::fflush(file->stream()) != 0 ||
          ::ftruncate(::fileno(file->stream()), static_cast<off_t>(head.size() + total)) != 0)
        throw Error("cannot size '" + path + "' (" + std::to_string(head.size() + total) + " bytes): " + errno_text());
      temporary = file->temporary();
    } catch (const std::exception& e) {
      error = message_of(e);
    }
  }
  comm.throw_first_error(error);
  temporary = comm.broadcast_from_root(temporary);
  error = write_at(temporary, head.size(), mine);
  if (!error.empty()) error = "rank " + std::to_string(comm.rank()) + ": " + error;
  comm.throw_first_error(error);  // rank 0's AtomicFile removes the temporary on the way out
  if (comm.root()) file->commit();
}

}  // namespace repix::distributed
