// The user's command line: {batch} substitution, and whether its program can be run at all.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <memplan/error.hpp>
#include "exec/process.hpp"

namespace memplan {

void check_runnable(const std::string& program) {
  if (program.empty()) throw Error("command", "nothing to run (expected -- COMMAND ARGS...)");
  auto runnable = [](const std::string& path) {
    struct stat st;
    return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
  };
  auto refuse = [&](int e) { throw Error(program, std::string("cannot run it: ") + std::strerror(e)); };
  if (program.find('/') != std::string::npos) {
    struct stat st;
    if (stat(program.c_str(), &st) != 0) refuse(errno);
    if (!S_ISREG(st.st_mode)) refuse(EACCES);
    if (access(program.c_str(), X_OK) != 0) refuse(errno);
    return;
  }
  const char* path = std::getenv("PATH");
  const std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t from = 0;
  while (from <= dirs.size()) {
    size_t colon = dirs.find(':', from);
    if (colon == std::string::npos) colon = dirs.size();
    const std::string dir = colon == from ? "." : dirs.substr(from, colon - from);
    if (runnable(dir + "/" + program)) return;
    from = colon + 1;
  }
  refuse(ENOENT);
}

std::vector<std::string> substitute_batch(const std::vector<std::string>& argv, uint64_t batch) {
  static const std::string k_marker = "{batch}";
  const std::string value = std::to_string(batch);
  std::vector<std::string> out;
  out.reserve(argv.size());
  for (std::string arg : argv) {
    for (size_t at = arg.find(k_marker); at != std::string::npos; at = arg.find(k_marker, at + value.size()))
      arg.replace(at, k_marker.size(), value);
    out.push_back(std::move(arg));
  }
  return out;
}

bool mentions_batch(const std::vector<std::string>& argv) {
  for (const std::string& a : argv)
    if (a.find("{batch}") != std::string::npos) return true;
  return false;
}

}  // namespace memplan
