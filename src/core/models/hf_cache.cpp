#include "core/models/hf_cache.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <memplan/error.hpp>
#include "core/base/file_reader.hpp"
#include "core/base/terminal_text.hpp"

namespace memplan {
namespace {

// The Hub's repo-name characters: letters, digits, '-', '_', '.'; no "--" or ".." (huggingface_hub's
// validate_repo_id), at most 96 characters.
bool valid_part(std::string_view s) {
  if (s.empty() || s.size() > 96) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
          c == '_' || c == '.'))
      return false;
  if (s.find("--") != std::string_view::npos || s.find("..") != std::string_view::npos) return false;
  return s.front() != '.' && s.front() != '-' && s.back() != '.' && s.back() != '-';
}

// A branch, tag or commit: git's ref characters memplan allows, '/'-separated segments none of
// which is empty, "." or starts with '.' (issue 32: "../", "/etc", "a//b", "%2e%2e" never reach a
// path or a URL).
bool valid_revision(std::string_view s) {
  if (s.empty() || s.size() > 255) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
          c == '_' || c == '.' || c == '/'))
      return false;
  size_t start = 0;
  for (;;) {
    const size_t end = std::min(s.find('/', start), s.size());
    const std::string_view part = s.substr(start, end - start);
    if (part.empty() || part.front() == '.' || part.find("..") != std::string_view::npos) return false;
    if (end == s.size()) return true;
    start = end + 1;
  }
}

bool is_commit_hash(std::string_view s) {
  if (s.size() != 40) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

// Issue 32: `path` (a refs file, a snapshot and each entry in it) must resolve inside the cache: a
// link to /etc/passwd or ~/.ssh planted in a shared cache is refused, not read. huggingface_hub's
// own links (snapshots/<commit>/config.json -> ../../blobs/<hash>) stay inside.
void check_inside_cache(const std::string& cache_dir, const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path root = fs::canonical(cache_dir, ec);
  if (ec) return;  // no cache: nothing is read from it
  const auto inside = [&root](const fs::path& p, fs::path& target) {
    std::error_code e;
    target = fs::weakly_canonical(p, e);
    if (e) return false;
    const auto mismatch = std::mismatch(root.begin(), root.end(), target.begin(), target.end());
    return mismatch.first == root.end();
  };
  const auto refuse = [&](const fs::path& p, const fs::path& target) {
    throw Error(terminal_field(p.string(), 1024),
                "links to " + terminal_field(target.string(), 1024) + ", outside the Hugging Face cache " +
                    terminal_field(root.string(), 1024) + " (memplan does not follow it)");
  };
  fs::path target;
  if (!inside(path, target)) refuse(path, target);
  if (!fs::is_directory(path, ec)) return;
  size_t seen = 0;
  for (fs::directory_iterator it(path, ec), end; !ec && it != end && seen < 100000; it.increment(ec), ++seen)
    if (!inside(it->path(), target)) refuse(it->path(), target);
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

}  // namespace

std::optional<HubModelId> parse_hub_model_id(std::string_view text) {
  HubModelId id;
  const size_t at = text.find('@');
  if (at != std::string_view::npos) {
    id.revision = std::string(text.substr(at + 1));
    text = text.substr(0, at);
    if (!valid_revision(id.revision)) return std::nullopt;
  }
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos || text.find('/', slash + 1) != std::string_view::npos)
    return std::nullopt;
  id.org = std::string(text.substr(0, slash));
  id.name = std::string(text.substr(slash + 1));
  if (!valid_part(id.org) || !valid_part(id.name)) return std::nullopt;
  return id;
}

HubCacheEnv HubCacheEnv::from_environment() {
  return {env("HF_HUB_CACHE"), env("HUGGINGFACE_HUB_CACHE"), env("HF_HOME"), env("XDG_CACHE_HOME"),
          env("HOME")};
}

std::string hub_cache_dir(const HubCacheEnv& e) {
  if (!e.hf_hub_cache.empty()) return e.hf_hub_cache;
  if (!e.huggingface_hub_cache.empty()) return e.huggingface_hub_cache;
  if (!e.hf_home.empty()) return join_path(e.hf_home, "hub");
  if (!e.xdg_cache_home.empty()) return join_path(e.xdg_cache_home, "huggingface/hub");
  return join_path(e.home.empty() ? "." : e.home, ".cache/huggingface/hub");
}

std::string parse_ref_file(std::string_view text, const std::string& ref_path) {
  std::string_view commit = text;
  while (!commit.empty() && (commit.back() == '\n' || commit.back() == '\r' || commit.back() == ' '))
    commit.remove_suffix(1);
  if (!is_commit_hash(commit))
    throw Error(ref_path, "is not a commit hash (expected 40 hexadecimal digits, as huggingface_hub writes)");
  return std::string(commit);
}

std::optional<std::string> find_cached_snapshot(const std::string& cache_dir, const HubModelId& id) {
  const std::string repo = join_path(cache_dir, "models--" + id.org + "--" + id.name);
  if (!is_directory(repo)) return std::nullopt;
  std::string commit;
  if (is_commit_hash(id.revision)) {
    commit = id.revision;
  } else {
    const std::string ref = join_path(repo, "refs/" + id.revision);
    if (!is_regular_file(ref)) return std::nullopt;
    check_inside_cache(cache_dir, ref);
    commit = parse_ref_file(read_small_file(ref, 4096), ref);
  }
  const std::string snapshot = join_path(repo, "snapshots/" + commit);
  if (!is_directory(snapshot)) return std::nullopt;
  check_inside_cache(cache_dir, snapshot);
  return snapshot;
}

}  // namespace memplan
