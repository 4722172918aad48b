// Issue 32: the Hub client against a hostile server on 127.0.0.1 (tests/unit/fixture_http_server.hpp):
// HF_TOKEN never sent to another host after a redirect and never printed, sizes above 2^63 refused,
// deep model information refused without a stack overflow, path traversal in org/name@revision
// refused before any request, and cache links pointing outside the cache not followed.
#ifdef MEMPLAN_HAVE_NET
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <functional>

#include <unistd.h>
#include <nlohmann/json.hpp>

#include <memplan/error.hpp>
#include "core/models/hf_cache.hpp"
#include "net/hub_download.hpp"

#include "../cli/cli_harness.hpp"
#include "fixture_http_server.hpp"
#include "hub_test_support.hpp"
#include "model_file_builders.hpp"
#include "probe_test_support.hpp"

namespace fs = std::filesystem;
using namespace memplan;
using memplan::test::EnvVar;
using memplan::test::error_or_empty;
using memplan::test::FixtureHttpServer;
using memplan::test::quick_http_limits;
using memplan::test::run_cli;
using memplan::test::TempDir;

namespace {

constexpr const char* k_hostile_commit = "0123456789abcdef0123456789abcdef01234567";
constexpr const char* k_secret = "hf_SECRETtoken0123456789";
const std::string k_info_path = "/api/models/tiny-org/tiny-model/revision/main";

net::HubSettings hostile_settings(const std::string& endpoint, const TempDir& cache) {
  net::HubSettings h;
  h.endpoint = endpoint;
  h.cache_dir = cache.path.string();
  h.token = k_secret;
  return h;
}

std::string model_info() {
  return nlohmann::json{{"sha", k_hostile_commit}, {"siblings", {{{"rfilename", "config.json"}}}}}.dump();
}

std::string download_error(const std::string& endpoint, const TempDir& cache) {
  auto http = net::make_curl_client(quick_http_limits());
  return error_or_empty([&] {
    net::download_model_headers(*http, hostile_settings(endpoint, cache),
                                *parse_hub_model_id("tiny-org/tiny-model"));
  });
}

bool has_authorization(const std::string& request) {
  std::string lower = request;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower.find("\r\nauthorization:") != std::string::npos;
}

}  // namespace

TEST_CASE("issue 32: a redirect to another host does not carry HF_TOKEN there", "[hub][net]") {
  TempDir cache("redirect");
  // The other host: localhost (another name) and 127.0.0.1 on another port (another origin).
  for (const std::string other_host : {"localhost", "127.0.0.1"}) {
    FixtureHttpServer hub, other;
    other.route(k_info_path, {200, model_info()});
    other.start();
    const std::string there = "http://" + other_host + ":" + other.url().substr(other.url().rfind(':') + 1);
    hub.route(k_info_path, {200, there + k_info_path, FixtureHttpServer::Behaviour::redirect});
    hub.start();
    const std::string e = download_error(hub.url(), cache);
    INFO(other_host << ": " << e);
    REQUIRE(hub.seen().size() >= 1);
    CHECK(has_authorization(hub.seen().front()));  // the Hub itself gets the token ...
    REQUIRE(other.seen().size() >= 1);             // ... the redirect was followed ...
    for (const std::string& request : other.seen()) {
      CHECK_FALSE(has_authorization(request));  // ... without it
      CHECK(request.find(k_secret) == std::string::npos);
    }
  }
}

TEST_CASE("issue 32: HF_TOKEN is never printed in an error", "[hub][net][cli]") {
  TempDir cache("token"), xdg("token-xdg"), hf("token-hf");
  struct Case {
    std::string name;
    FixtureHttpServer::Route route;
    std::string index = "";  // served as model.safetensors.index.json when not empty
  };
  const std::string with_index =
      nlohmann::json{{"sha", k_hostile_commit},
                     {"siblings", {{{"rfilename", "model.safetensors.index.json"}}}}}
          .dump();
  // The server reflects the token into a shard name, which the error names.
  const std::string reflected = nlohmann::json{{"metadata", {{"total_size", 8}}},
                                               {"weight_map", {{"a", std::string("../") + k_secret}}}}
                                    .dump();
  const std::vector<Case> cases = {
      {"gated", {401, ""}},
      {"missing", {404, ""}},
      {"server error", {500, ""}},
      {"redirect loop", {200, "", FixtureHttpServer::Behaviour::redirect_loop}},
      {"not json", {200, "<html>rate limited</html>"}},
      {"the token as the commit", {200, nlohmann::json{{"sha", k_secret}}.dump()}},
      {"the token as a file",
       {200, nlohmann::json{{"sha", k_hostile_commit},
                            {"siblings", {{{"rfilename", std::string("../") + k_secret}}}}}
                 .dump()}},
      {"the token as a shard name", {200, with_index}, reflected},
  };
  for (const Case& c : cases) {
    FixtureHttpServer server;
    server.route(k_info_path, c.route);
    if (!c.index.empty())
      server.route(
          "/tiny-org/tiny-model/resolve/" + std::string(k_hostile_commit) + "/model.safetensors.index.json",
          {200, c.index});
    server.start();
    const std::string e = download_error(server.url(), cache);
    INFO(c.name << ": " << e);
    CHECK_FALSE(e.empty());
    if (!c.index.empty()) CHECK(e.find("../<HF_TOKEN>: is not a plain file name") == 0);
    CHECK(e.find(k_secret) == std::string::npos);
    // The same through the command line, with the token in HF_TOKEN.
    EnvVar endpoint("HF_ENDPOINT", server.url());
    EnvVar token("HF_TOKEN", std::string(k_secret));
    EnvVar xdg_env("XDG_CACHE_HOME", xdg.path.string());
    EnvVar hf_cache("HF_HUB_CACHE", hf.path.string());
    const auto r = run_cli({"estimate", "--model", "tiny-org/tiny-model"});
    CHECK(r.code == 2);
    CHECK(r.err.find(k_secret) == std::string::npos);
    CHECK(memplan::test::line_count(r.err) == 1);
  }
  // Nothing listens: curl's own words, without the token.
  const std::string e = download_error("http://127.0.0.1:1", cache);
  CHECK_FALSE(e.empty());
  CHECK(e.find(k_secret) == std::string::npos);
}

TEST_CASE("issue 32: Content-Range and Content-Length above 2^63 are refused", "[hub][net]") {
  TempDir cache("sizes");
  const std::string info = model_info();
  const std::string config_path =
      "/tiny-org/tiny-model/resolve/" + std::string(k_hostile_commit) + "/config.json";
  // 2^63 = 9,223,372,036,854,775,808 and a 20-digit value (was cut to its first 19 digits).
  for (const std::string header :
       {"Content-Range: bytes 0-7/9223372036854775808", "Content-Range: bytes 0-7/99999999999999999999",
        "Content-Length: 18446744073709551616"}) {
    FixtureHttpServer server;
    server.route(k_info_path, {200, "HTTP/1.1 200 OK\r\n" + header + "\r\nConnection: close\r\n\r\n" + info,
                               FixtureHttpServer::Behaviour::raw});
    server.start();
    const std::string e = download_error(server.url(), cache);
    INFO(header << ": " << e);
    CHECK(e.find(server.url() + k_info_path) == 0);
    const bool ours = e.find("above 2^63 - 1 bytes") != std::string::npos;
    // curl may refuse a Content-Length it cannot hold before memplan sees it: an error either way.
    CHECK((ours || header.rfind("Content-Length", 0) == 0));
    CHECK_FALSE(e.empty());
  }
  // 2^63 - 1 itself is a size (the file system's limit), not refused as too large.
  FixtureHttpServer server;
  server.route(k_info_path, {200, info});
  server.route(config_path,
               {200,
                "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-1/9223372036854775807\r\n"
                "Content-Length: 2\r\nConnection: close\r\n\r\n{}",
                FixtureHttpServer::Behaviour::raw});
  server.start();
  CHECK(download_error(server.url(), cache).find("above 2^63") == std::string::npos);
}

TEST_CASE("issue 32: deeply nested model information is refused without a stack overflow", "[hub][net]") {
  TempDir cache("deep");
  for (const std::string& body : {std::string(1'000'000, '['), "{\"sha\": " + std::string(100'000, '{'),
                                  "{\"sha\": \"" + std::string(k_hostile_commit) + "\", \"siblings\": " +
                                      std::string(5000, '[') + std::string(5000, ']') + "}"}) {
    FixtureHttpServer server;
    server.route(k_info_path, {200, body});
    server.start();
    const std::string e = download_error(server.url(), cache);
    INFO(e.substr(0, 300));
    CHECK(e.find("the model information nests deeper than 64 levels") != std::string::npos);
    CHECK(e.size() < 300);
  }
}

TEST_CASE("issue 32: path traversal in org/name@revision is refused before any request", "[hub][net][cli]") {
  FixtureHttpServer server;
  server.start();
  TempDir xdg("traversal-xdg"), hf("traversal-hf");
  EnvVar endpoint("HF_ENDPOINT", server.url());
  EnvVar xdg_env("XDG_CACHE_HOME", xdg.path.string());
  EnvVar hf_cache("HF_HUB_CACHE", hf.path.string());
  EnvVar online("HF_HUB_OFFLINE", std::nullopt);
  for (const std::string id :
       {"tiny-org/tiny-model@../../../etc", "tiny-org/tiny-model@main/../../x",
        "tiny-org/tiny-model@/etc/passwd", "tiny-org/tiny-model@%2e%2e/x", "tiny-org/tiny-model@%2E%2E%2Fx",
        "tiny-org/tiny-model@main/./x", "tiny-org/tiny-model@a//b", "tiny-org/tiny-model@main/",
        "../tiny-model", "tiny-org/..", "tiny-org/tiny-model/../x", "/etc/passwd@main", "tiny-org/%2e%2e",
        "tiny-org/tiny-model@..\\x"}) {
    INFO(id);
    CHECK_FALSE(parse_hub_model_id(id));
    const auto r = run_cli({"estimate", "--model", id});
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(memplan::test::line_count(r.err) == 1);
  }
  CHECK(server.requests() == 0);
  // A revision with a '/' (a pull request's ref) is still an id.
  CHECK(parse_hub_model_id("tiny-org/tiny-model@refs/pr/1"));
}

TEST_CASE("issue 32: HF cache links pointing outside the cache are not followed", "[hf_cache]") {
  TempDir root("links"), outside("links-outside");
  const fs::path cache = root.path / "hub";
  const fs::path repo = cache / "models--tiny-org--tiny-model";
  const fs::path snapshot = repo / "snapshots" / k_hostile_commit;
  fs::create_directories(snapshot);
  fs::create_directories(repo / "refs");
  fs::create_directories(repo / "blobs");
  std::ofstream(repo / "refs" / "main") << k_hostile_commit;
  std::ofstream(repo / "blobs" / "abc") << "{}";
  std::ofstream(outside.path / "secret.json") << "{}";
  const HubModelId id = *parse_hub_model_id("tiny-org/tiny-model");
  // huggingface_hub's own links (into blobs/) are followed.
  fs::create_symlink("../../blobs/abc", snapshot / "config.json");
  CHECK(find_cached_snapshot(cache.string(), id) == snapshot.string());
  // A link out of the cache, in the snapshot: refused with one line naming it.
  fs::create_symlink(outside.path / "secret.json", snapshot / "model.safetensors.index.json");
  const std::string e = error_or_empty([&] { find_cached_snapshot(cache.string(), id); });
  INFO(e);
  CHECK(e.find("model.safetensors.index.json: links to " + (outside.path / "secret.json").string() +
               ", outside the Hugging Face cache") != std::string::npos);
  EnvVar hf_cache("HF_HUB_CACHE", cache.string());
  EnvVar offline("HF_HUB_OFFLINE", std::string("1"));
  const auto r = run_cli({"inspect", "tiny-org/tiny-model"});
  CHECK(r.code == 2);
  CHECK(r.err.find("outside the Hugging Face cache") != std::string::npos);
  CHECK(memplan::test::line_count(r.err) == 1);
  fs::remove(snapshot / "model.safetensors.index.json");
  // A refs file, and a whole snapshot folder, linked out of the cache.
  fs::remove(repo / "refs" / "main");
  std::ofstream(outside.path / "ref") << k_hostile_commit;
  fs::create_symlink(outside.path / "ref", repo / "refs" / "main");
  CHECK(error_or_empty([&] {
          find_cached_snapshot(cache.string(), id);
        }).find("outside the Hugging Face cache") != std::string::npos);
  fs::remove(repo / "refs" / "main");
  std::ofstream(repo / "refs" / "main") << k_hostile_commit;
  fs::remove_all(snapshot);
  fs::create_directories(outside.path / "snap");
  fs::create_directory_symlink(outside.path / "snap", snapshot);
  CHECK(error_or_empty([&] {
          find_cached_snapshot(cache.string(), id);
        }).find("outside the Hugging Face cache") != std::string::npos);
}
#endif
