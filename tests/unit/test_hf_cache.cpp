// Hugging Face model ids and the local hub cache: a fake cache laid out as huggingface_hub writes
// it (models--org--name/refs/main -> snapshots/<commit>/config.json), holding TinyLlama's real
// config.json, whose published parameter count is 1,100,048,384 (tests/data/hf_configs/SOURCES.md).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <unistd.h>
#include <nlohmann/json.hpp>

#include <memplan/error.hpp>
#include "core/models/hf_cache.hpp"

#include "../cli/cli_harness.hpp"
#include "probe_test_support.hpp"

namespace fs = std::filesystem;
using namespace memplan;
using memplan::test::EnvVar;
using memplan::test::run_cli;

namespace {

constexpr const char* k_commit = "fe8a4ea1ffedaf415f4da2f062534de366a451e6";

// A fresh cache folder under the temporary directory, removed at the end.
struct FakeCache {
  fs::path root = fs::temp_directory_path() / ("memplan-hf-cache-" + std::to_string(::getpid()));
  FakeCache() {
    fs::remove_all(root);
    const fs::path repo = root / "models--TinyLlama--TinyLlama-1.1B-Chat-v1.0";
    fs::create_directories(repo / "refs");
    fs::create_directories(repo / "snapshots" / k_commit);
    std::ofstream(repo / "refs" / "main") << k_commit;  // huggingface_hub writes no newline
    // huggingface_hub keeps the bytes in blobs/<hash> and links them from the snapshot.
    fs::create_directories(repo / "blobs");
    fs::copy_file(fs::path(MEMPLAN_TEST_DATA_DIR) / "hf_configs" / "TinyLlama-1.1B-Chat-v1.0.json",
                  repo / "blobs" / "0a4b5e1d2c3f");
    fs::create_symlink("../../blobs/0a4b5e1d2c3f", repo / "snapshots" / k_commit / "config.json");
    fs::create_directories(root / "models--bad--ref" / "refs");
    std::ofstream(root / "models--bad--ref" / "refs" / "main") << "not a hash\n";
  }
  ~FakeCache() { fs::remove_all(root); }
};

}  // namespace

TEST_CASE("hub model ids: org/name[@revision], or not one", "[hf_cache]") {
  const auto id = parse_hub_model_id("meta-llama/Llama-3.1-8B");
  REQUIRE(id);
  CHECK(id->org == "meta-llama");
  CHECK(id->name == "Llama-3.1-8B");
  CHECK(id->revision == "main");
  const auto rev = parse_hub_model_id("Qwen/Qwen2.5-7B@refs/pr/1");
  REQUIRE(rev);
  CHECK(rev->revision == "refs/pr/1");
  for (const char* bad : {"llama-2-7b", "a/b/c", "/abs/path", "./dir/x", "org/", "/name", "org/na me",
                          "o--x/name", "org/name@", "org/name@../x", "org/..name"})
    CHECK_FALSE(parse_hub_model_id(bad));
}

TEST_CASE("hub cache folder: huggingface_hub's order of variables", "[hf_cache]") {
  CHECK(hub_cache_dir({"/c", "/old", "/h", "/x", "/home/u"}) == "/c");
  CHECK(hub_cache_dir({"", "/old", "/h", "/x", "/home/u"}) == "/old");
  CHECK(hub_cache_dir({"", "", "/h", "/x", "/home/u"}) == "/h/hub");
  CHECK(hub_cache_dir({"", "", "", "/x", "/home/u"}) == "/x/huggingface/hub");
  CHECK(hub_cache_dir({"", "", "", "", "/home/u"}) == "/home/u/.cache/huggingface/hub");
}

TEST_CASE("hub cache: a ref, a commit, a missing model, a broken ref", "[hf_cache]") {
  FakeCache cache;
  const std::string dir = cache.root.string();
  const auto main = find_cached_snapshot(dir, *parse_hub_model_id("TinyLlama/TinyLlama-1.1B-Chat-v1.0"));
  REQUIRE(main);
  CHECK(fs::path(*main).filename() == k_commit);
  CHECK(find_cached_snapshot(
      dir, *parse_hub_model_id(std::string("TinyLlama/TinyLlama-1.1B-Chat-v1.0@") + k_commit)));
  CHECK_FALSE(find_cached_snapshot(dir, *parse_hub_model_id("TinyLlama/TinyLlama-1.1B-Chat-v1.0@v2")));
  CHECK_FALSE(find_cached_snapshot(dir, *parse_hub_model_id("meta-llama/Llama-3.1-8B")));
  CHECK_THROWS_AS(find_cached_snapshot(dir, *parse_hub_model_id("bad/ref")), Error);
}

TEST_CASE("hub ids: estimate --model org/name and inspect org/name read the cache offline",
          "[hf_cache][cli]") {
  FakeCache cache;
  EnvVar hub("HF_HUB_CACHE", cache.root.string());
  EnvVar offline("HF_HUB_OFFLINE", std::string("1"));
  const auto r = run_cli({"estimate", "--model", "TinyLlama/TinyLlama-1.1B-Chat-v1.0", "--precision", "bf16",
                          "--mode", "infer", "--format", "json"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["model"]["parameters"] == 1100048384ull);
  CHECK(j["model"]["id"] == "TinyLlama/TinyLlama-1.1B-Chat-v1.0");
  CHECK(j["breakdown"]["parameters"] == 2 * 1100048384ull);

  const auto i = run_cli({"inspect", "TinyLlama/TinyLlama-1.1B-Chat-v1.0", "--format", "json"});
  INFO(i.err);
  CHECK(i.code == 0);
  CHECK(nlohmann::json::parse(i.out)["parameters"] == 1100048384ull);
  CHECK(nlohmann::json::parse(i.out)["inputs"]["path"] == "TinyLlama/TinyLlama-1.1B-Chat-v1.0");

  const auto missing = run_cli({"estimate", "--model", "meta-llama/Llama-3.1-8B", "--precision", "bf16"});
  CHECK(missing.code == 2);
  CHECK(missing.err.find("--model: \"meta-llama/Llama-3.1-8B\" is not in the Hugging Face cache (" +
                         (cache.root / "models--meta-llama--Llama-3.1-8B").string()) != std::string::npos);
  CHECK(memplan::test::line_count(missing.err) == 1);
}
