// Hugging Face Hub model ids over HTTP, without the internet: a fixture server on 127.0.0.1 serves a
// small hub tree (model information, config.json, an index and two safetensors shards) with range
// support, and misbehaves on purpose for the hostile cases. Each case must end with a clear error
// within a bounded time.
#ifdef MEMPLAN_HAVE_NET
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include <nlohmann/json.hpp>

#include <memplan/error.hpp>
#include <memplan/model_files.hpp>
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

constexpr const char* k_hub_commit = "0123456789abcdef0123456789abcdef01234567";
const std::string k_repo = "/tiny-org/tiny-model";
const std::string k_resolve = k_repo + "/resolve/" + k_hub_commit + "/";

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// 2 shards: 4x8 + 8 (shard 1) and 8x4 BF16 (shard 2) = 72 parameters, counted by hand.
struct HubTree {
  std::string shard1 = test::st_file({{"a.weight", "F32", {4, 8}}, {"a.bias", "F32", {8}}});
  std::string shard2 = test::st_file({{"b.weight", "BF16", {8, 4}}});
  void serve(FixtureHttpServer& s,
             FixtureHttpServer::Behaviour shard_behaviour = FixtureHttpServer::Behaviour::normal) {
    const nlohmann::json info = {{"sha", k_hub_commit},
                                 {"siblings",
                                  {{{"rfilename", "config.json"}},
                                   {{"rfilename", "model.safetensors.index.json"}},
                                   {{"rfilename", "model-00001-of-00002.safetensors"}},
                                   {{"rfilename", "model-00002-of-00002.safetensors"}}}}};
    s.route("/api/models" + k_repo + "/revision/main", {200, info.dump()});
    s.route(k_resolve + "config.json", {200, read_text(std::string(MEMPLAN_TEST_DATA_DIR) +
                                                       "/hf_configs/TinyLlama-1.1B-Chat-v1.0.json")});
    const nlohmann::json index = {{"metadata", {{"total_size", 32 * 4 + 8 * 4 + 32 * 2}}},
                                  {"weight_map",
                                   {{"a.weight", "model-00001-of-00002.safetensors"},
                                    {"a.bias", "model-00001-of-00002.safetensors"},
                                    {"b.weight", "model-00002-of-00002.safetensors"}}}};
    s.route(k_resolve + "model.safetensors.index.json", {200, index.dump()});
    s.route(k_resolve + "model-00001-of-00002.safetensors", {200, shard1, shard_behaviour});
    s.route(k_resolve + "model-00002-of-00002.safetensors", {200, shard2, shard_behaviour});
  }
};

net::HubSettings hub_settings(const FixtureHttpServer& s, const TempDir& cache) {
  net::HubSettings h;
  h.endpoint = s.url();
  h.cache_dir = cache.path.string();
  return h;
}

}  // namespace

TEST_CASE("hub download: headers only, by range, into the cache layout", "[hub][net]") {
  FixtureHttpServer server;
  HubTree tree;
  tree.serve(server);
  server.start();
  TempDir cache("hub-cache");
  auto http = net::make_curl_client(quick_http_limits());
  const std::string snapshot = net::download_model_headers(*http, hub_settings(server, cache),
                                                           *parse_hub_model_id("tiny-org/tiny-model"));
  CHECK(fs::path(snapshot).filename() == k_hub_commit);
  CHECK(read_text((cache.path / "models--tiny-org--tiny-model" / "refs" / "main").string()) == k_hub_commit);
  // The shard keeps its real size, but only its header was fetched: the rest is a hole.
  CHECK(fs::file_size(fs::path(snapshot) / "model-00001-of-00002.safetensors") == tree.shard1.size());
  const ModelFileReport r = inspect_model_files(snapshot);
  CHECK(r.model.parameters == 32 + 8 + 32);
  CHECK(r.bytes == 32 * 4 + 8 * 4 + 32 * 2);
  // info + config + index + 2 x (8-byte length + header)
  CHECK(server.requests() == 7);
}

TEST_CASE(
    "hub download: estimate --model org/name from the fixture server, then offline from memplan's cache",
    "[hub][net][cli]") {
  FixtureHttpServer server;
  HubTree tree;
  tree.serve(server);
  server.start();
  TempDir xdg("hub-xdg"), empty("hub-empty");
  EnvVar endpoint("HF_ENDPOINT", server.url());
  EnvVar xdg_env("XDG_CACHE_HOME", xdg.path.string());
  EnvVar hf_cache("HF_HUB_CACHE", empty.path.string());
  EnvVar offline("HF_HUB_OFFLINE", std::nullopt);
  const std::vector<std::string> args = {"estimate",    "--model",  "tiny-org/tiny-model",
                                         "--precision", "bf16",     "--mode",
                                         "infer",       "--format", "json"};
  const auto r = run_cli(args);
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out)["model"]["parameters"] == 72);
  const int served = server.requests();
  EnvVar now_offline("HF_HUB_OFFLINE", std::string("1"));
  CHECK(run_cli(args).code == 0);
  CHECK(server.requests() == served);  // the second run read the cache only
}

TEST_CASE("hub download: a gated model with HF_TOKEN", "[hub][net]") {
  FixtureHttpServer server;
  HubTree tree;
  tree.serve(server);
  const nlohmann::json info = {{"sha", k_hub_commit}, {"siblings", {{{"rfilename", "config.json"}}}}};
  server.route(
      "/api/models" + k_repo + "/revision/main",
      {200, info.dump(), FixtureHttpServer::Behaviour::normal, "Authorization: Bearer hf_test_token"});
  server.start();
  TempDir cache("hub-token");
  auto http = net::make_curl_client(quick_http_limits());
  net::HubSettings s = hub_settings(server, cache);
  const HubModelId id = *parse_hub_model_id("tiny-org/tiny-model");
  CHECK(error_or_empty([&] { net::download_model_headers(*http, s, id); }).find("HTTP 401") !=
        std::string::npos);
  s.token = "hf_test_token";
  const std::string snapshot = net::download_model_headers(*http, s, id);
  CHECK(inspect_model_files(snapshot).model.parameters == 1100048384ull);  // TinyLlama's config.json
}

TEST_CASE("hub download: a GGUF repository's one .gguf, header only", "[hub][net]") {
  test::GgufBytes kv;
  kv.kv_str("general.architecture", "llama").kv_u32("llama.block_count", 1);
  // 256 x 100 F16 + 256 F32 = 25,856 parameters; 51,712 + 1,024 bytes of data (never fetched)
  const std::string gguf =
      test::gguf_file(kv, 2, {{"token_embd.weight", {256, 100}, 1}, {"output_norm.weight", {256}, 0}});
  FixtureHttpServer server;
  const nlohmann::json info = {
      {"sha", k_hub_commit}, {"siblings", {{{"rfilename", "tiny-F16.gguf"}}, {{"rfilename", "README.md"}}}}};
  server.route("/api/models" + k_repo + "/revision/main", {200, info.dump()});
  server.route(k_resolve + "tiny-F16.gguf", {200, gguf});
  server.start();
  TempDir cache("hub-gguf");
  auto http = net::make_curl_client(quick_http_limits());
  const std::string snapshot = net::download_model_headers(*http, hub_settings(server, cache),
                                                           *parse_hub_model_id("tiny-org/tiny-model"));
  const ModelFileReport r = inspect_model_files(snapshot);
  CHECK(r.kind == ModelFileKind::gguf);
  CHECK(r.model.parameters == 256 * 100 + 256);
  CHECK(fs::file_size(fs::path(snapshot) / "tiny-F16.gguf") == gguf.size());
}

TEST_CASE("hub download: HF_HUB_OFFLINE and --offline never touch the network", "[hub][net][cli]") {
  FixtureHttpServer server;
  server.start();
  TempDir xdg("hub-xdg-off"), empty("hub-empty-off");
  EnvVar endpoint("HF_ENDPOINT", server.url());
  EnvVar xdg_env("XDG_CACHE_HOME", xdg.path.string());
  EnvVar hf_cache("HF_HUB_CACHE", empty.path.string());
  EnvVar offline("HF_HUB_OFFLINE", std::string("1"));
  const auto r = run_cli({"estimate", "--model", "tiny-org/tiny-model", "--precision", "bf16"});
  CHECK(r.code == 2);
  CHECK(r.err.find("HF_HUB_OFFLINE forbids the network") != std::string::npos);
  EnvVar online("HF_HUB_OFFLINE", std::nullopt);
  const auto flag = run_cli({"inspect", "tiny-org/tiny-model", "--offline"});
  CHECK(flag.code == 2);
  CHECK(flag.err.find("--offline forbids the network") != std::string::npos);
  const auto plan_flag = run_cli({"fit", "--model", "tiny-org/tiny-model", "--offline", "--gpu", "t4"});
  CHECK(plan_flag.code == 2);
  CHECK(plan_flag.err.find("--offline forbids the network") != std::string::npos);
  CHECK(server.requests() == 0);
}

TEST_CASE("hub download: gated, missing, hostile responses each end in one clear error", "[hub][net]") {
  const HubModelId id = *parse_hub_model_id("tiny-org/tiny-model");
  TempDir cache("hub-hostile");
  auto http = net::make_curl_client(quick_http_limits());

  SECTION("gated (401) and missing (404)") {
    FixtureHttpServer server;
    server.route("/api/models" + k_repo + "/revision/main", {401, ""});
    server.start();
    CHECK(error_or_empty([&] {
            net::download_model_headers(*http, hub_settings(server, cache), id);
          }).find("is gated or private") != std::string::npos);
    CHECK(error_or_empty([&] {
            net::download_model_headers(*http, hub_settings(server, cache), *parse_hub_model_id("no/such"));
          }).find("not found on " + server.url() + " (HTTP 404") != std::string::npos);
  }
  SECTION("a server that ignores the range sends more than asked") {
    FixtureHttpServer server;
    HubTree().serve(server, FixtureHttpServer::Behaviour::ignore_range);
    server.start();
    CHECK(error_or_empty([&] {
            net::download_model_headers(*http, hub_settings(server, cache), id);
          }).find("larger than 8 bytes") != std::string::npos);
  }
  SECTION("wrong length") {
    FixtureHttpServer server;
    HubTree().serve(server, FixtureHttpServer::Behaviour::short_body);
    server.start();
    CHECK(error_or_empty([&] {
            net::download_model_headers(*http, hub_settings(server, cache), id);
          }).find("bytes (HTTP 206) for a range of 8") != std::string::npos);
  }
  SECTION("a header length over the reader's limit") {
    FixtureHttpServer server;
    HubTree tree;
    tree.shard1 = test::le64(1ull << 40) + std::string(64, ' ');
    tree.serve(server);
    server.start();
    CHECK(error_or_empty([&] {
            net::download_model_headers(*http, hub_settings(server, cache), id);
          }).find("header length 1,099,511,627,776 is larger than") != std::string::npos);
  }
  SECTION("a redirect loop") {
    FixtureHttpServer server;
    server.route("/api/models" + k_repo + "/revision/main",
                 {200, "", FixtureHttpServer::Behaviour::redirect_loop});
    server.start();
    CHECK(error_or_empty([&] {
            net::download_model_headers(*http, hub_settings(server, cache), id);
          }).find("more than 5 redirects") != std::string::npos);
  }
  SECTION("a slow server") {
    FixtureHttpServer server;
    server.route("/api/models" + k_repo + "/revision/main",
                 {200, std::string(4096, ' '), FixtureHttpServer::Behaviour::trickle});
    server.start();
    const auto t0 = std::chrono::steady_clock::now();
    CHECK(error_or_empty([&] {
            net::download_model_headers(*http, hub_settings(server, cache), id);
          }).find("timed out") != std::string::npos);
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(8));
  }
  SECTION("nothing listens") {
    net::HubSettings s;
    s.endpoint = "http://127.0.0.1:1";
    s.cache_dir = cache.path.string();
    CHECK_FALSE(error_or_empty([&] { net::download_model_headers(*http, s, id); }).empty());
  }
  // Nothing half-written is left as a snapshot.
  CHECK_FALSE(fs::exists(cache.path / "models--tiny-org--tiny-model" / "snapshots" / k_hub_commit));
}
#endif
