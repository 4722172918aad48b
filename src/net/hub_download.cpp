#include "net/hub_download.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <memplan/error.hpp>
#include "core/base/file_reader.hpp"
#include "core/base/text.hpp"
#include "core/models/gguf.hpp"
#include "core/models/safetensors.hpp"
#include "net/model_info.hpp"

namespace memplan::net {
namespace {

namespace fs = std::filesystem;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// A file name the Hub listed, safe to write under the snapshot: top level, no path tricks.
bool safe_name(const std::string& n) {
  if (n.empty() || n.size() > 255 || n.find('/') != std::string::npos || n.find('\\') != std::string::npos)
    return false;
  return n != "." && n != ".." && n.front() != '.';
}

// The most bytes read from the Hub for one model, all requests together.
constexpr uint64_t k_max_total_bytes = 1ull << 30;

class Hub {
 public:
  Hub(HttpClient& http, const HubSettings& s, const HubModelId& id) : m_http(http), m_s(s), m_id(id) {}

  HttpResponse fetch(const std::string& path, uint64_t max_bytes,
                     std::optional<std::pair<uint64_t, uint64_t>> range = std::nullopt) {
    HttpRequest r;
    r.url = m_s.endpoint + path;
    r.max_bytes = max_bytes;
    r.range = range;
    if (!m_s.token.empty()) r.headers.push_back("Authorization: Bearer " + m_s.token);
    if (m_fetched + max_bytes > k_max_total_bytes) r.max_bytes = k_max_total_bytes - m_fetched;
    if (r.max_bytes == 0 || (range && range->second - range->first + 1 > r.max_bytes))
      throw Error(m_id.repo(), "the headers of its files add up to more than " +
                                   std::to_string(k_max_total_bytes >> 20) +
                                   " MiB (the most memplan reads for one model)");
    HttpResponse res = m_http.get(r);
    m_fetched += res.body.size();
    const std::string what = m_id.repo() + (m_id.revision == "main" ? "" : "@" + m_id.revision);
    if (res.status == 401 || res.status == 403)
      throw Error(what, "is gated or private on " + m_s.endpoint + " (HTTP " + std::to_string(res.status) +
                            "): accept its terms on the model page and set HF_TOKEN");
    if (res.status == 404)
      throw Error(
          what, "not found on " + m_s.endpoint + " (HTTP 404: no such model, revision or file " + path + ")");
    if (res.status != 200 && res.status != 206)
      throw Error(r.url, "HTTP " + std::to_string(res.status) + " (expected 200 or 206)");
    if (range) {
      // A range past the end is cut at the end (RFC 9110 14.1.2).
      const uint64_t want =
          res.total_size && range->second >= *res.total_size && *res.total_size > range->first
              ? *res.total_size - range->first
              : range->second - range->first + 1;
      if (res.status != 206 || res.body.size() != want || !res.total_size)
        throw Error(r.url, "sent " + std::to_string(res.body.size()) + " bytes (HTTP " +
                               std::to_string(res.status) + ") for a range of " + std::to_string(want) +
                               " (expected 206 Partial Content with " + "Content-Range)");
    }
    return res;
  }

  std::string resolve(const std::string& commit, const std::string& file) {
    return "/" + m_id.repo() + "/resolve/" + commit + "/" + file;
  }

 private:
  HttpClient& m_http;
  const HubSettings& m_s;
  const HubModelId& m_id;
  uint64_t m_fetched = 0;
};

void write_file(const fs::path& p, const std::string& bytes, uint64_t full_size) {
  {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw Error(p.string(), "cannot be written");
  }
  std::error_code ec;
  if (full_size > bytes.size()) fs::resize_file(p, full_size, ec);  // a hole: no weights are stored
  if (ec)
    throw Error(p.string(), "cannot be made " + std::to_string(full_size) +
                                " bytes long (the size the server gave; " + ec.message() + ")");
}

// The 8-byte length, then the header: written as the shard's first bytes.
void fetch_safetensors_header(Hub& hub, const std::string& commit, const std::string& file,
                              const fs::path& dir) {
  const std::string path = hub.resolve(commit, file);
  const HttpResponse len = hub.fetch(path, 8, std::pair<uint64_t, uint64_t>{0, 7});
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(len.body[static_cast<size_t>(i)]);
  const uint64_t total = *len.total_size;
  if (n == 0 || n > read_limit::k_safetensors_header || 8 + n > total) {
    parse_safetensors_header(len.body, total, file);  // the reader's own words for a bad length
    throw Error(file, "header length " + std::to_string(n) + " does not fit the file");
  }
  const HttpResponse header = hub.fetch(path, n, std::pair<uint64_t, uint64_t>{8, 8 + n - 1});
  const std::string bytes = len.body + header.body;
  parse_safetensors_header(bytes, total, file);  // validated before anything is kept
  write_file(dir / file, bytes, total);
}

// A GGUF header has no length field: read a growing prefix until it parses, up to the reader's limit.
void fetch_gguf_header(Hub& hub, const std::string& commit, const std::string& file, const fs::path& dir) {
  const std::string path = hub.resolve(commit, file);
  uint64_t want = 1u << 20;
  for (;;) {
    const HttpResponse first = hub.fetch(path, want, std::pair<uint64_t, uint64_t>{0, want - 1});
    const uint64_t total = *first.total_size;
    try {
      parse_gguf(first.body, total, file);
      write_file(dir / file, first.body, total);
      return;
    } catch (const Error&) {
      if (want >= total || want >= read_limit::k_gguf_header) throw;
    }
    want = std::min<uint64_t>({want * 4, total, read_limit::k_gguf_header});
  }
}

}  // namespace

HubSettings HubSettings::from_environment() {
  HubSettings s;
  if (!env("HF_ENDPOINT").empty()) s.endpoint = env("HF_ENDPOINT");
  while (!s.endpoint.empty() && s.endpoint.back() == '/') s.endpoint.pop_back();
  s.token = env("HF_TOKEN");
  const std::string xdg = env("XDG_CACHE_HOME");
  s.cache_dir = !xdg.empty() ? join_path(xdg, "memplan/hub")
                             : join_path(env("HOME").empty() ? "." : env("HOME"), ".cache/memplan/hub");
  return s;
}

bool hub_offline_from_environment() {
  std::string v = env("HF_HUB_OFFLINE");
  for (char& c : v)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return v == "1" || v == "ON" || v == "YES" || v == "TRUE";
}

namespace {

// `text` with every copy of the token replaced: a server that reflects HF_TOKEN into a file name,
// a commit or a URL must not get it printed (issue 32).
std::string without_token(std::string text, const std::string& token) {
  if (token.empty()) return text;
  for (size_t at = text.find(token); at != std::string::npos; at = text.find(token, at))
    text.replace(at, token.size(), "<HF_TOKEN>");
  return text;
}

std::string download_headers(HttpClient& http, const HubSettings& s, const HubModelId& id);

}  // namespace

std::string download_model_headers(HttpClient& http, const HubSettings& s, const HubModelId& id) {
  try {
    return download_headers(http, s, id);
  } catch (const Error& e) {
    if (s.token.empty() || std::string(e.what()).find(s.token) == std::string::npos) throw;
    throw Error(without_token(e.subject(), s.token), without_token(e.message(), s.token));
  }
}

namespace {

std::string download_headers(HttpClient& http, const HubSettings& s, const HubModelId& id) {
  Hub hub(http, s, id);
  const HttpResponse info = hub.fetch("/api/models/" + id.repo() + "/revision/" + id.revision, 16u << 20);
  const HubModelInfo model = parse_model_info(info.body, s.endpoint, id.repo());
  const std::string& commit = model.commit;
  const std::vector<std::string>& files = model.files;
  auto has = [&files](const std::string& n) {
    return std::find(files.begin(), files.end(), n) != files.end();
  };

  const fs::path repo = fs::path(s.cache_dir) / ("models--" + id.org + "--" + id.name);
  const fs::path partial = repo / "snapshots" / (commit + ".partial");
  fs::remove_all(partial);
  fs::create_directories(partial);

  if (has("config.json"))
    write_file(partial / "config.json",
               hub.fetch(hub.resolve(commit, "config.json"), read_limit::k_config).body, 0);
  std::vector<std::string> shards;
  if (has("model.safetensors.index.json")) {
    const std::string text =
        hub.fetch(hub.resolve(commit, "model.safetensors.index.json"), read_limit::k_safetensors_index).body;
    shards = parse_safetensors_index(text, "model.safetensors.index.json").shards;
    write_file(partial / "model.safetensors.index.json", text, 0);
  } else {
    for (const std::string& f : files)
      if (ends_with(f, ".safetensors")) shards.push_back(f);
  }
  std::vector<std::string> ggufs;
  for (const std::string& f : files)
    if (ends_with(f, ".gguf") && safe_name(f)) ggufs.push_back(f);
  for (const std::string& f : shards) {
    if (!safe_name(f))
      throw Error(f, "is not a plain file name (a shard name from the Hub must not hold a path)");
    fetch_safetensors_header(hub, commit, f, partial);
  }
  if (shards.empty() && ggufs.size() == 1) fetch_gguf_header(hub, commit, ggufs.front(), partial);
  if (shards.empty() && ggufs.size() > 1) {
    std::string names;
    for (const std::string& g : ggufs) names += (names.empty() ? "" : ", ") + g;
    throw Error(id.repo(), "holds " + std::to_string(ggufs.size()) + " GGUF files (" + names +
                               "): download the one you run and give it with --gguf");
  }
  if (shards.empty() && ggufs.empty() && !has("config.json"))
    throw Error(id.repo(), "has no config.json, safetensors or GGUF file memplan reads");

  const fs::path snapshot = repo / "snapshots" / commit;
  fs::remove_all(snapshot);
  fs::rename(partial, snapshot);
  if (id.revision != commit) {
    fs::create_directories((repo / "refs" / id.revision).parent_path());
    write_file(repo / "refs" / id.revision, commit, 0);
  }
  return snapshot.string();
}

}  // namespace

}  // namespace memplan::net
