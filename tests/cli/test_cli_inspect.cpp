// memplan inspect: what was read from config.json, safetensors and GGUF files; malformed files
// give one stderr line, exit 2 and nothing on stdout.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "../unit/model_file_builders.hpp"
#include "cli_harness.hpp"

using namespace memplan::test;

namespace {
const std::string k_configs = std::string(MEMPLAN_TEST_DATA_DIR) + "/hf_configs/";

void expect_bad_input(const CliResult& r, const std::string& err_start) {
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(line_count(r.err) == 1);
  CHECK(r.err.rfind("memplan: error: " + err_start, 0) == 0);
}
}  // namespace

TEST_CASE("inspect a config.json", "[cli][inspect]") {
  CliResult r = run_cli({"inspect", k_configs + "Mixtral-8x7B-v0.1.json"});
  REQUIRE(r.code == 0);
  CHECK(r.err.empty());
  CHECK(r.out.find("parameters: 46,702,792,704 (46.70B)") != std::string::npos);
  CHECK(r.out.find("active per token: 12,879,925,248") != std::string::npos);
  CHECK(r.out.find("config fields read: model_type, vocab_size, hidden_size") != std::string::npos);

  CliResult j = run_cli({"inspect", k_configs + "t5-small.json", "--format", "json"});
  REQUIRE(j.code == 0);
  nlohmann::json doc = nlohmann::json::parse(j.out);
  CHECK(doc["schema"] == "memplan.inspect/1");
  CHECK(doc["kind"] == "config");
  CHECK(doc["parameters"] == 60506624);  // keras-hub t5_small_multi
  CHECK(doc["architecture"]["encoder_decoder"] == true);
  CHECK(doc["architecture"]["causal"] == false);

  CliResult q = run_cli({"inspect", k_configs + "gpt2.json", "--quiet"});
  CHECK(q.out == "124439808\n");
}

TEST_CASE("inspect a safetensors folder with its config", "[cli][inspect]") {
  TempDir dir("cli_st");
  dir.write("model.safetensors", st_file({{"embed.weight", "BF16", {10, 4}}, {"norm.weight", "F32", {4}}}));
  dir.write("config.json",
            R"({"model_type": "llama", "vocab_size": 10, "hidden_size": 4, "num_hidden_layers": 1,
      "num_attention_heads": 2, "intermediate_size": 8})");
  CliResult r = run_cli({"inspect", dir.path.string(), "--format", "json"});
  REQUIRE(r.code == 0);
  nlohmann::json doc = nlohmann::json::parse(r.out);
  CHECK(doc["kind"] == "safetensors");
  CHECK(doc["parameters"] == 44);
  CHECK(doc["bytes"] == 80 + 16);
  CHECK(doc["by_dtype"][0]["dtype"] == "BF16");
  CHECK(doc["by_dtype"][0]["elements"] == 40);
  CHECK(doc["by_dtype"][1]["bytes"] == 16);
  CHECK(doc["weight_format"] == "bf16");
  CHECK(doc["architecture"]["hidden"] == 4);
  CHECK(doc["files"].size() == 2);

  CliResult t = run_cli({"inspect", dir.file("model.safetensors")});
  REQUIRE(t.code == 0);
  CHECK(t.out.find("BF16") != std::string::npos);
  CHECK(t.out.find("weight format: bf16") != std::string::npos);

  CliResult csv = run_cli({"inspect", dir.file("model.safetensors"), "--format", "csv"});
  CHECK(csv.out == "dtype,tensors,elements,bytes\nBF16,1,40,80\nF32,1,4,16\ntotal,2,44,96\n");
}

TEST_CASE("inspect a GGUF file", "[cli][inspect]") {
  TempDir dir("cli_gguf");
  GgufBytes kv;
  kv.kv_str("general.architecture", "llama").kv_u32("llama.block_count", 1);
  // Q4_0 256 x 4: 1,024 / 32 = 32 blocks x 18 = 576 bytes; F32 256: 1,024 bytes.
  std::string path = dir.write(
      "m.gguf", gguf_file(kv, 2, {{"token_embd.weight", {256, 4}, 2}, {"output_norm.weight", {256}, 0}}));
  CliResult r = run_cli({"inspect", path, "--format", "json"});
  REQUIRE(r.code == 0);
  nlohmann::json doc = nlohmann::json::parse(r.out);
  CHECK(doc["kind"] == "gguf");
  CHECK(doc["weight_bytes"] == 576 + 1024);
  CHECK(doc["parameters"] == 1024 + 256);
  CHECK(doc["by_dtype"][0]["dtype"] == "F32");
  CHECK(doc["by_dtype"][1]["dtype"] == "Q4_0");
}

TEST_CASE("inspect: malformed files exit 2 with one line", "[cli][inspect]") {
  TempDir dir("cli_bad");
  auto st = [&](const std::string& name, const std::string& bytes) {
    return dir.write(name + ".safetensors", bytes);
  };
  std::string f = dir.file("");
  expect_bad_input(run_cli({"inspect", st("short", "abc")}), f + "short.safetensors: is 3 bytes, too short");
  expect_bad_input(run_cli({"inspect", st("beyond", le64(1000) + "{}")}),
                   f + "beyond.safetensors: header length 1,000 runs past the end");
  expect_bad_input(run_cli({"inspect", st("huge", le64(1ull << 63) + "{}")}),
                   f + "huge.safetensors: header length 9,223,372,036,854,775,808 is larger");
  expect_bad_input(run_cli({"inspect", st("json", st_raw("{nope", 0))}),
                   f + "json.safetensors: the safetensors header is not valid JSON");
  expect_bad_input(
      run_cli(
          {"inspect", st("dtype", st_raw(R"({"w":{"dtype":"X9","shape":[1],"data_offsets":[0,1]}})", 1))}),
      f + "dtype.safetensors: tensor \"w\": unknown dtype \"X9\"");
  expect_bad_input(
      run_cli({"inspect", st("neg", st_raw(R"({"w":{"dtype":"U8","shape":[-1],"data_offsets":[0,1]}})", 1))}),
      f + "neg.safetensors: tensor \"w\": shape value -1 is negative");
  expect_bad_input(
      run_cli(
          {"inspect", st("frac", st_raw(R"({"w":{"dtype":"U8","shape":[0.5],"data_offsets":[0,1]}})", 1))}),
      f + "frac.safetensors: tensor \"w\": shape value 0.5 is not a whole number");
  expect_bad_input(
      run_cli({"inspect", st("overlap", st_raw(R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},
      "b":{"dtype":"U8","shape":[2],"data_offsets":[1,3]}})",
                                               3))}),
      f + "overlap.safetensors: tensor \"b\": data_offsets [1, 3] overlap");
  expect_bad_input(run_cli({"inspect", dir.write("bad.gguf", "GGUF\x03")}),
                   f + "bad.gguf: truncated at byte 4");
  expect_bad_input(run_cli({"inspect", dir.write("config.json", "{\"model_type\": \"llama\"}")}),
                   f + "config.json: missing \"vocab_size\"");
  expect_bad_input(run_cli({"inspect", f + "missing.safetensors"}), f + "missing.safetensors: no such file");
  expect_bad_input(run_cli({"inspect", k_configs + "gpt2.json", "--format", "yaml"}),
                   "--format: \"yaml\" is not a format");
}

TEST_CASE("inspect shows each layer kind, its count and its config fields", "[cli][inspect][moe]") {
  CliResult r = run_cli({"inspect", k_configs + "DeepSeek-R1.json"});
  REQUIRE(r.code == 0);
  // 3 dense layers before the first MoE layer (first_k_dense_replace 3), 58 MoE, 1 MTP module.
  CHECK(r.out.find("  moe x 58: ") != std::string::npos);
  CHECK(r.out.find("  dense x 3: ") != std::string::npos);
  CHECK(r.out.find("  mtp x 1: ") != std::string::npos);
  CHECK(r.out.find("first_k_dense_replace") != std::string::npos);
  // The latent cache: kv_lora_rank 512 + qk_rope_head_dim 64 per token and layer.
  CHECK(r.out.find("  full attention (latent) x 61: 576 cached elements per token") != std::string::npos);

  CliResult j = run_cli({"inspect", k_configs + "gpt-oss-120b.json", "--format", "json"});
  REQUIRE(j.code == 0);
  nlohmann::json doc = nlohmann::json::parse(j.out);
  bool sliding = false;
  for (const auto& k : doc["layer_kinds"])
    if (k["kind"] == "sliding attention") {
      sliding = true;
      CHECK(k["layers"] == 18);  // layer_types: 18 x [sliding, full]
      CHECK(k["window"] == 128);
      CHECK(k["fields"] == "num_key_value_heads, head_dim, sliding_window");
    }
  CHECK(sliding);
}

TEST_CASE("an unknown model_type: exit 2 naming it, or counted when --assume-llama names it",
          "[cli][inspect]") {
  TempDir dir("cli_unknown_type");
  const std::string path = dir.write("config.json", R"({"model_type": "newmodel", "hidden_size": 64,
      "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100,
      "tie_word_embeddings": false})");
  CliResult bad = run_cli({"estimate", "--config", path});
  expect_bad_input(bad, path + ": model_type \"newmodel\" is not one memplan knows (llama,");
  CHECK(bad.err.find("give --assume-llama") != std::string::npos);

  CliResult ok = run_cli({"inspect", path, "--assume-llama"});
  REQUIRE(ok.code == 0);
  CHECK(ok.out.find("assumed: model_type \"newmodel\" is not one memplan knows: counted as a llama-style") !=
        std::string::npos);
  CHECK(ok.out.find("as --assume-llama asked") != std::string::npos);
  CHECK(ok.out.find("parameters: 95,040") != std::string::npos);
}
