#include "core/base/file_reader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <memplan/error.hpp>
#include <memplan/quantity.hpp>

namespace memplan {
namespace {

namespace fs = std::filesystem;

// A failure about `path`: Error(path, why), or Error(subject, "cannot read \"path\": why").
[[noreturn]] void fail(const std::string& path, const std::string& subject, const std::string& why) {
  if (subject.empty()) throw Error(path.empty() ? "\"\"" : path, why);
  throw Error(subject, "cannot read \"" + path + "\": " + why);
}

// A regular file open for reading. The open is non-blocking (a FIFO would otherwise wait for a
// writer) and the type is checked on the open descriptor, so nothing can swap the file between.
class RegularFile {
 public:
  RegularFile(const std::string& path, const std::string& subject) : m_path(path), m_subject(subject) {
    if (path.empty()) fail(path, subject, "the path is empty");
    m_fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (m_fd < 0) {
      const int e = errno;
      if (e == ENOENT || e == ENOTDIR) fail(path, subject, "no such file");
      fail(path, subject, std::string("cannot open (") + std::strerror(e) + ")");
    }
    struct stat st {};
    if (::fstat(m_fd, &st) != 0)
      fail(path, subject, std::string("cannot stat (") + std::strerror(errno) + ")");
    if (S_ISDIR(st.st_mode)) fail(path, subject, "is a directory (expected a file)");
    if (!S_ISREG(st.st_mode)) fail(path, subject, "is not a regular file (a FIFO, device or socket)");
    m_size = static_cast<uint64_t>(st.st_size);
  }
  ~RegularFile() {
    if (m_fd >= 0) ::close(m_fd);
  }
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;

  uint64_t size() const { return m_size; }

  // Exactly n bytes from the start (n <= size()), or Error when the file ends early.
  std::string read(uint64_t n) const {
    std::string bytes(static_cast<size_t>(n), '\0');
    size_t got = 0;
    while (got < bytes.size()) {
      const ssize_t r = ::read(m_fd, bytes.data() + got, bytes.size() - got);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) fail(m_path, m_subject, std::string("read failed (") + std::strerror(errno) + ")");
      if (r == 0) fail(m_path, m_subject, "read failed after " + std::to_string(got) + " bytes");
      got += static_cast<size_t>(r);
    }
    return bytes;
  }

 private:
  std::string m_path, m_subject;
  int m_fd = -1;
  uint64_t m_size = 0;
};

}  // namespace

uint64_t file_size(const std::string& path) { return RegularFile(path, "").size(); }

std::string read_file_prefix(const std::string& path, uint64_t max_bytes) {
  const RegularFile f(path, "");
  return f.read(std::min(f.size(), max_bytes));
}

std::string read_small_file(const std::string& path, uint64_t limit, const std::string& subject) {
  const RegularFile f(path, subject);
  if (f.size() > limit)
    fail(path, subject,
         "is " + group_thousands(f.size()) + " bytes, more than the " + group_thousands(limit) +
             " bytes memplan reads from such a file");
  return f.read(f.size());
}

std::string read_small_file(const std::string& path, uint64_t limit, Field field) {
  try {
    return read_small_file(path, limit, std::string(field_key(field)));
  } catch (const Error& e) {
    throw Error(field, e.message());
  }
}

bool is_directory(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

bool is_regular_file(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

std::vector<std::string> list_files(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> names;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) throw Error(dir, "cannot list the directory (" + ec.message() + ")");
  for (const fs::directory_entry& e : it) {
    std::string name = e.path().filename().string();
    if (name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0 && e.is_regular_file(ec))
      names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string join_path(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  if (dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

}  // namespace memplan
