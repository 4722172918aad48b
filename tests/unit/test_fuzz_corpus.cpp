// Replays every seed of the fuzz corpus (fuzz/corpus/<parser>/) through the parser the fuzz
// target drives: each input parses or is refused with memplan::Error, never anything else.
// The hidden test "[.generate-corpus]" (re)writes the seeds from the builders in
// model_file_builders.hpp: `memplan_tests "[.generate-corpus]"`.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "../../fuzz/fuzz_entry.hpp"
#include "../../fuzz/fuzz_entry_cli.hpp"
#ifdef MEMPLAN_HAVE_NET
#include "../../fuzz/fuzz_entry_net.hpp"
#endif
#include "model_file_builders.hpp"

using namespace memplan::test;
namespace fs = std::filesystem;

namespace {

const fs::path k_corpus = fs::path(MEMPLAN_SOURCE_DIR) / "fuzz" / "corpus";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Replays the folder; returns {files, parsed}.
std::pair<int, int> replay(const std::string& parser, bool (*run)(std::string_view)) {
  int files = 0, parsed = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(k_corpus / parser)) {
    INFO(e.path().string());
    std::string bytes = slurp(e.path());
    bool ok = false;
    CHECK_NOTHROW(ok = run(bytes));
    ++files;
    parsed += ok;
  }
  return {files, parsed};
}

void put(const std::string& parser, const std::string& name, const std::string& bytes) {
  fs::create_directories(k_corpus / parser);
  std::ofstream out(k_corpus / parser / name, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

TEST_CASE("fuzz corpus: every seed parses or is refused cleanly", "[fuzz]") {
  auto [hf_files, hf_ok] = replay("hf_config", memplan::fuzz::run_hf_config);
  auto [st_files, st_ok] = replay("safetensors", memplan::fuzz::run_safetensors);
  auto [gg_files, gg_ok] = replay("gguf", memplan::fuzz::run_gguf);
  // The corpus holds good and bad inputs for each parser.
  CHECK(hf_files >= 30);
  CHECK(hf_ok >= 30);
  CHECK(hf_files > hf_ok);
  CHECK(st_files >= 10);
  CHECK(st_ok >= 2);
  CHECK(st_files > st_ok);
  CHECK(gg_files >= 10);
  CHECK(gg_ok >= 2);
  CHECK(gg_files > gg_ok);
}

// The corpora of the readers and the command line (written by hand, committed): plan files,
// presets files, `scale --values` files, argument vectors split at NUL bytes.
TEST_CASE("fuzz corpus: plan, presets, gradient values and command-line seeds", "[fuzz]") {
  auto [plan_files, plan_ok] = replay("plan", memplan::fuzz::run_plan);
  auto [pre_files, pre_ok] = replay("presets", memplan::fuzz::run_presets);
  auto [val_files, val_ok] = replay("gradient_values", memplan::fuzz::run_gradient_values);
  auto [cli_files, cli_ok] = replay("command_line", memplan::fuzz::run_command_line);
  CHECK(plan_files >= 10);
  CHECK(plan_ok >= 5);
  CHECK(plan_files > plan_ok);
  CHECK(pre_files >= 8);
  CHECK(pre_ok >= 4);
  CHECK(pre_files > pre_ok);
  CHECK(val_files >= 6);
  CHECK(val_ok >= 3);
  CHECK(val_files > val_ok);
  CHECK(cli_files >= 20);
  CHECK(cli_ok >= 15);
  CHECK(cli_files > cli_ok);
}

// Issue 32's four readers: why-oom logs, diff inputs, HF cache refs files (and model ids), the Hub's
// responses. Each corpus holds inputs that read and the defects found by hand (escapes, sums past
// 2^64, sizes past 2^63, deep JSON, path traversal).
TEST_CASE("fuzz corpus: why-oom log, diff input, refs file and Hub response seeds", "[fuzz]") {
  auto [oom_files, oom_ok] = replay("oom_log", memplan::fuzz::run_oom_log);
  auto [diff_files, diff_ok] = replay("diff_input", memplan::fuzz::run_diff_input);
  auto [refs_files, refs_ok] = replay("hf_refs", memplan::fuzz::run_hf_refs);
  CHECK(oom_files >= 20);
  CHECK(oom_ok >= 15);
  CHECK(oom_files > oom_ok);
  CHECK(diff_files >= 12);
  CHECK(diff_ok >= 4);
  CHECK(diff_files > diff_ok);
  CHECK(refs_files >= 10);
  CHECK(refs_ok >= 4);
  CHECK(refs_files > refs_ok);
#ifdef MEMPLAN_HAVE_NET
  auto [hub_files, hub_ok] = replay("hub_response", memplan::fuzz::run_hub_response);
  CHECK(hub_files >= 10);
  CHECK(hub_ok >= 1);
  CHECK(hub_files > hub_ok);
#endif
}

// Issue 30's readers: --from training configs (every framework) and pasted serving command lines.
TEST_CASE("fuzz corpus: --from config and serving command-line seeds", "[fuzz]") {
  auto [cfg_files, cfg_ok] = replay("from_config", memplan::fuzz::run_from_config);
  auto [cmd_files, cmd_ok] = replay("serve_command", memplan::fuzz::run_serve_command);
  CHECK(cfg_files >= 15);
  CHECK(cfg_ok >= 8);
  CHECK(cfg_files > cfg_ok);
  CHECK(cmd_files >= 20);
  CHECK(cmd_ok >= 15);
  CHECK(cmd_files > cmd_ok);
}

TEST_CASE("fuzz corpus: the presets seeds parse as what they hold", "[fuzz]") {
  const std::string gpus = slurp(k_corpus / "presets" / "gpus.json");
  const std::string models = slurp(k_corpus / "presets" / "model_presets.json");
  CHECK_NOTHROW(memplan::parse_presets(gpus, models, "corpus"));
  CHECK_THROWS_AS(memplan::parse_presets(slurp(k_corpus / "presets" / "bad_empty_gpus.json"), "", "corpus"),
                  memplan::Error);
}

TEST_CASE("fuzz corpus: write the seeds", "[.generate-corpus]") {
  // config.json: every real config, plus broken ones.
  for (const fs::directory_entry& e : fs::directory_iterator(fs::path(MEMPLAN_TEST_DATA_DIR) / "hf_configs"))
    if (e.path().extension() == ".json") put("hf_config", e.path().filename().string(), slurp(e.path()));
  put("hf_config", "bad_truncated.json", R"({"model_type": "llama", "hidden_size": 40)");
  put("hf_config", "bad_negative.json", R"({"model_type": "llama", "vocab_size": 10, "hidden_size": -1})");
  put("hf_config", "bad_unknown.json", R"({"model_type": "newmodel", "hidden_size": 64})");
  put("hf_config", "generic.json", R"({"model_type": "newmodel", "hidden_size": 64, "num_hidden_layers": 2,
      "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100})");
  put("hf_config", "bad_huge.json", R"({"model_type": "gpt2", "vocab_size": 4294967296, "n_embd": 4294967296,
      "n_layer": 4294967296, "n_head": 1, "n_positions": 1})");

  // safetensors: good files and each malformed case.
  put("safetensors", "good.safetensors",
      st_file({{"embed.weight", "BF16", {4, 2}},
               {"norm.weight", "F32", {2}},
               {"rotary_emb.inv_freq", "F32", {1}}},
              R"({"format":"pt"})"));
  put("safetensors", "good_all_dtypes.safetensors",
      st_file({{"a", "F64", {1}},
               {"b", "F16", {2}},
               {"c", "I64", {1}},
               {"d", "I32", {1}},
               {"e", "I16", {1}},
               {"f", "I8", {1}},
               {"g", "U8", {1}},
               {"h", "BOOL", {1}},
               {"i", "F8_E4M3", {1}},
               {"j", "F8_E5M2", {1}},
               {"k", "F4", {2}}}));
  put("safetensors", "bad_short.safetensors", "abc");
  put("safetensors", "bad_beyond.safetensors", le64(1000) + "{}");
  put("safetensors", "bad_2p63.safetensors", le64(1ull << 63) + "{}");
  put("safetensors", "bad_json.safetensors", st_raw("{\"a\": ", 0));
  put("safetensors", "bad_dtype.safetensors",
      st_raw(R"({"w":{"dtype":"X9","shape":[1],"data_offsets":[0,1]}})", 1));
  put("safetensors", "bad_negative.safetensors",
      st_raw(R"({"w":{"dtype":"U8","shape":[-1],"data_offsets":[0,1]}})", 1));
  put("safetensors", "bad_fraction.safetensors",
      st_raw(R"({"w":{"dtype":"U8","shape":[0.5],"data_offsets":[0,1]}})", 1));
  put("safetensors", "bad_overlap.safetensors",
      st_raw(
          R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"b":{"dtype":"U8","shape":[2],"data_offsets":[1,3]}})",
          3));
  put("safetensors", "bad_duplicate.safetensors",
      st_raw(
          R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})",
          2));
  put("safetensors", "bad_overflow.safetensors",
      st_raw(R"({"w":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", 8));
  put("safetensors", "index.json",
      R"({"metadata": {"total_size": 16}, "weight_map": {"a": "model-00001-of-00002.safetensors"}})");

  // GGUF: a good file with every kind of value, and malformed ones.
  GgufBytes kv;
  kv.kv_str("general.architecture", "llama")
      .kv_u32("llama.block_count", 1)
      .kv_u64("llama.context_length", 2048)
      .kv_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f)
      .kv_strings("tokenizer.ggml.tokens", {"a", "b", "c"})
      .kv_u32("general.alignment", 32);
  std::vector<GgTensor> ts = {{"token_embd.weight", {32, 3}, 2},
                              {"blk.0.ffn_gate.weight", {32, 2}, 8},
                              {"output_norm.weight", {32}, 0},
                              {"output.weight", {32, 3}, 1}};
  std::string good = gguf_file(kv, 6, ts);
  put("gguf", "good.gguf", good);
  GgufBytes none;
  put("gguf", "good_empty.gguf", gguf_file(none, 0, {}));
  put("gguf", "bad_magic.gguf", "GGML" + good.substr(4));
  put("gguf", "bad_truncated.gguf", good.substr(0, good.size() / 2));
  put("gguf", "bad_data_cut.gguf", good.substr(0, good.size() - 8));
  GgufBytes huge;
  huge.u32(0x46554747).u32(3).u64(1ull << 63).u64(1ull << 62);
  put("gguf", "bad_counts.gguf", huge.b);
  put("gguf", "bad_block.gguf", gguf_file(none, 0, {{"t", {100, 2}, 12}}));
  put("gguf", "bad_type.gguf", gguf_file(none, 0, {{"t", {8}, 4}}));
  GgufBytes dup;
  dup.kv_u32("a", 1).kv_u32("a", 2);
  put("gguf", "bad_dup_key.gguf", gguf_file(dup, 2, {}));
  GgufBytes align;
  align.kv_u32("general.alignment", 0);
  put("gguf", "bad_alignment.gguf", gguf_file(align, 1, {}));
  GgufBytes nested;
  nested.str("k").u32(9).u32(9).u64(1);
  put("gguf", "bad_nested.gguf", gguf_file(nested, 1, {}));
}
