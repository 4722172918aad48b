#include "core/models/hf_cache.hpp"

#include <cstdlib>

#include <memplan/error.hpp>
#include "core/base/file_reader.hpp"

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

bool valid_revision(std::string_view s) {
  if (s.empty() || s.size() > 255 || s.find("..") != std::string_view::npos) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
          c == '_' || c == '.' || c == '/'))
      return false;
  return s.front() != '/' && s.front() != '.';
}

bool is_commit_hash(std::string_view s) {
  if (s.size() != 40) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
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

std::optional<std::string> find_cached_snapshot(const std::string& cache_dir, const HubModelId& id) {
  const std::string repo = join_path(cache_dir, "models--" + id.org + "--" + id.name);
  if (!is_directory(repo)) return std::nullopt;
  std::string commit;
  if (is_commit_hash(id.revision)) {
    commit = id.revision;
  } else {
    const std::string ref = join_path(repo, "refs/" + id.revision);
    if (!is_regular_file(ref)) return std::nullopt;
    commit = read_small_file(ref, 4096);
    while (!commit.empty() && (commit.back() == '\n' || commit.back() == '\r' || commit.back() == ' '))
      commit.pop_back();
    if (!is_commit_hash(commit))
      throw Error(ref, "is not a commit hash (expected 40 hexadecimal digits, as huggingface_hub writes)");
  }
  const std::string snapshot = join_path(repo, "snapshots/" + commit);
  if (!is_directory(snapshot)) return std::nullopt;
  return snapshot;
}

}  // namespace memplan
