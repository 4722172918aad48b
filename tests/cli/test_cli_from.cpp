// --from FILE: real configs of DeepSpeed, Axolotl and LLaMA-Factory (tests/data/from, SOURCES.md)
// read into the same plan as the flags written by hand from reading each file; bad input refused
// in one line naming the file, line and column.
#include <catch2/catch.hpp>

#include <sstream>

#include <nlohmann/json.hpp>

#include "../unit/model_file_builders.hpp"
#include "cli_harness.hpp"

using memplan::test::run_cli;

namespace {

std::string from_sample(const std::string& name) {
  return std::string(MEMPLAN_TEST_DATA_DIR) + "/from/" + name;
}

std::vector<std::string> from_split_words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

nlohmann::json from_json_of(std::vector<std::string> args) {
  args.push_back("--format");
  args.push_back("json");
  const auto r = run_cli(args);
  INFO(r.err);
  REQUIRE(r.code <= 1);  // 1: fit's and max-batch's "does not fit"
  nlohmann::json doc = nlohmann::json::parse(r.out);
  doc["exit_code"] = r.code;
  return doc;
}

struct FromSampleCase {
  const char* file;
  const char* both;   // given on both sides (the GPU; a model that is no preset, as tests run offline)
  const char* flags;  // the file's values, written by hand
};

// clang-format off
const FromSampleCase k_from_samples[] = {
  {"axolotl/lora-8b.yml", "--gpu a100-80gb",
   "--model llama-3-8b --lora 32 --lora-targets all --lora-dropout 0.05 --quantize int8 --seq 4096 --batch 2 "
   "--grad-accum 4 --precision bf16 --checkpointing full --optimizer adamw-8bit --attention sdpa"},
  {"axolotl/qlora.yml", "--gpu rtx-4090",
   "--model llama-3-8b --lora 32 --lora-targets all --lora-dropout 0.05 --quantize nf4-dq --seq 4096 --batch 2 "
   "--grad-accum 4 --precision bf16 --checkpointing full --optimizer paged-adamw --attention sdpa"},
  {"axolotl/fft-8b.yaml", "--gpu h100-80gb --model llama-3-8b",
   "--seq 8192 --batch 1 --grad-accum 8 --optimizer paged-adamw-8bit --precision bf16 --checkpointing full "
   "--attention sdpa"},
  {"axolotl/instruct-lora-8b.yml", "--gpu a100-80gb --model llama-3-8b",
   "--lora 32 --lora-targets all --lora-dropout 0.05 --quantize int8 --seq 4096 --batch 2 --grad-accum 4 "
   "--precision bf16 --checkpointing full --optimizer adamw-8bit --attention sdpa"},
  {"axolotl/qlora-fsdp-70b.yaml", "--gpu a100-80gb --model llama-3-70b --gpus 2",
   "--lora 8 --lora-targets all --lora-dropout 0.05 --quantize nf4-dq --seq 512 --batch 1 --grad-accum 4 "
   "--optimizer adamw --precision bf16 --checkpointing full --attention sdpa --fsdp full-shard --offload parameters"},
  {"llamafactory/llama3_lora_sft.yaml", "--gpu a100-80gb --model llama-3-8b",
   "--lora 8 --lora-targets all --seq 1024 --batch 1 --grad-accum 8 --precision bf16 --checkpointing full"},
  {"llamafactory/llama3_lora_sft_ds3.yaml", "--gpu a100-80gb --model llama-3-8b",
   "--lora 8 --lora-targets all --seq 2048 --batch 1 --grad-accum 2 --precision bf16 --checkpointing full"},
  {"llamafactory/llama3_lora_pretrain.yaml", "--gpu a100-80gb --model llama-3-8b",
   "--lora 8 --lora-targets all --seq 2048 --batch 1 --grad-accum 8 --precision bf16 --checkpointing full"},
  {"llamafactory/llama3_lora_dpo.yaml", "--gpu a100-80gb --model llama-3-8b",
   "--lora 8 --lora-targets all --seq 1024 --batch 1 --grad-accum 8 --precision bf16 --checkpointing full"},
  {"llamafactory/qwen3_lora_sft.yaml", "--gpu a100-80gb --model qwen3-8b",
   "--lora 8 --lora-targets all --seq 2048 --batch 1 --grad-accum 8 --precision bf16 --checkpointing full"},
  {"torchtune/8B_lora_single_device.yaml", "--gpu a100-80gb --seq 2048",
   "--model llama-3-8b --lora 8 --lora-targets q,v,o,gate,up,down --lora-dropout 0.0 --batch 2 --grad-accum 8 "
   "--precision bf16 --checkpointing full --optimizer adamw --loss chunked"},
  {"torchtune/8B_qlora_single_device.yaml", "--gpu rtx-4090 --seq 2048",
   "--model llama-3-8b --lora 8 --lora-targets q,v,k,o,gate,up,down --quantize nf4-dq --batch 2 --grad-accum 16 "
   "--precision bf16 --checkpointing full --optimizer adamw"},
  {"torchtune/8B_full_single_device.yaml", "--gpu h100-80gb --seq 2048",
   "--model llama-3-8b --batch 2 --grad-accum 1 --precision bf16 --checkpointing full --optimizer paged-adamw-8bit"},
  {"torchtune/8B_full.yaml", "--gpu a100-80gb --seq 2048",
   "--model llama-3-8b --batch 2 --grad-accum 1 --precision bf16 --checkpointing full --optimizer adamw"},
  {"torchtune/8B_lora.yaml", "--gpu a100-80gb --seq 2048",
   "--model llama-3-8b --lora 8 --lora-targets q,v --batch 2 --grad-accum 32 --precision bf16 --optimizer adamw"},
  {"accelerate/fsdp_config.yaml", "--gpu a100-80gb --model llama-3-8b --seq 2048",
   "--fsdp full-shard --offload parameters --gpus 2 --nodes 1 --precision amp-bf16"},
  {"accelerate/fsdp_config_offload.yaml", "--gpu a100-80gb --model llama-3-8b --seq 2048",
   "--fsdp full-shard --offload parameters --gpus 2 --nodes 1 --precision amp-bf16"},
  {"accelerate/fsdp_v1_config.yaml", "--gpu a100-80gb --model llama-3-8b --seq 2048 --gpus 8",
   "--fsdp full-shard --precision amp-bf16"},
  {"accelerate/master_config.yaml", "--gpu a100-80gb --model llama-3-8b --seq 2048",
   "--gpus 16 --nodes 2 --precision amp-fp16"},
  {"accelerate/single_config.yaml", "--gpu a100-80gb --model llama-3-8b --seq 2048",
   "--gpus 4 --nodes 1 --precision amp-fp16"},
  {"deepspeed/ds_z0_config.json", "--gpu a100-80gb --model llama-3-8b --gpus 8 --seq 2048", "--zero 0"},
  {"deepspeed/ds_z2_config.json", "--gpu a100-80gb --model llama-3-8b --gpus 8 --seq 2048", "--zero 2"},
  {"deepspeed/ds_z2_offload_config.json", "--gpu a100-80gb --model llama-3-8b --gpus 8 --seq 2048", "--zero 2 --offload optimizer"},
  {"deepspeed/ds_z3_config.json", "--gpu a100-80gb --model llama-3-8b --gpus 8 --seq 2048", "--zero 3"},
  {"deepspeed/ds_z3_offload_config.json", "--gpu a100-80gb --model llama-3-8b --gpus 8 --seq 2048",
   "--zero 3 --offload parameters"},
};
// clang-format on

}  // namespace

TEST_CASE("from: --from reads each sample config into the plan its flags give", "[cli][from][many-runs]") {
  for (const FromSampleCase& s : k_from_samples) {
    for (const char* command : {"estimate", "fit", "max-batch", "advise"}) {
      INFO(s.file << " " << command);
      std::vector<std::string> from{command, "--from", from_sample(s.file)};
      std::vector<std::string> flags{command};
      for (const std::string& w : from_split_words(s.both)) {
        from.push_back(w);
        flags.push_back(w);
      }
      for (const std::string& w : from_split_words(s.flags)) flags.push_back(w);
      // The file's framework runs the step: its profile is the flags' --framework.
      const std::string file(s.file);
      for (const char* fw : {"axolotl", "torchtune", "llamafactory"})
        if (file.rfind(std::string(fw) + "/", 0) == 0) flags.insert(flags.end(), {"--framework", fw});
      nlohmann::json a = from_json_of(from);
      const nlohmann::json b = from_json_of(flags);
      REQUIRE(a.contains("from"));
      CHECK(a["from"]["file"] == from_sample(s.file));
      a.erase("from");
      CHECK(a == b);
    }
  }
}

TEST_CASE("from: --from names every field it used, and what it does not model", "[cli][from]") {
  const auto r = run_cli({"estimate", "--from", from_sample("axolotl/lora-8b.yml"), "--gpu", "a100-80gb"});
  REQUIRE(r.code == 0);
  CHECK(r.out.rfind("inputs from " + from_sample("axolotl/lora-8b.yml") + " (axolotl):\n", 0) == 0);
  CHECK(r.out.find("  micro_batch_size = 2 -> --batch 2\n") != std::string::npos);
  CHECK(r.out.find("  load_in_8bit = true -> --quantize int8") != std::string::npos);
  CHECK(r.out.find("  not modelled: lora_modules_to_save = embed_tokens,lm_head: ") != std::string::npos);

  const nlohmann::json j =
      from_json_of({"estimate", "--from", from_sample("deepspeed/ds_z3_offload_config.json"), "--model",
                    "llama-3-8b", "--gpu", "a100-80gb"});
  const nlohmann::json& used = j["from"]["used"];
  REQUIRE(used.size() == 2);
  CHECK(used[0]["field"] == "zero_optimization.stage");
  CHECK(used[0]["option"] == "--zero 3");
  CHECK(used[1]["field"] == "zero_optimization.offload_param.device");
  CHECK(used[1]["option"] == "--offload parameters");
  bool auto_batch = false;
  for (const auto& n : j["from"]["not_modelled"])
    auto_batch |= n["field"] == "train_micro_batch_size_per_gpu" && n["value"] == "auto";
  CHECK(auto_batch);
}

TEST_CASE("from: flags beside --from override its values, and the output says so", "[cli][from]") {
  const nlohmann::json a = from_json_of({"estimate", "--from", from_sample("axolotl/qlora.yml"), "--gpu",
                                         "rtx-4090", "--batch", "1", "--seq", "2048"});
  CHECK(a["inputs"]["batch"] == 1);
  CHECK(a["inputs"]["seq"] == 2048);
  const nlohmann::json& o = a["from"]["overridden"];
  REQUIRE(o.size() == 2);
  CHECK(o[0] == "--batch 1 replaces 2");
  CHECK(o[1] == "--seq 2048 replaces 4096");
  const auto t =
      run_cli({"estimate", "--from", from_sample("axolotl/qlora.yml"), "--gpu", "rtx-4090", "--batch", "1"});
  CHECK(t.out.find("  overridden: --batch 1 replaces 2\n") != std::string::npos);
}

TEST_CASE("from: --from refuses bad input in one line naming the file, line and column", "[cli][from]") {
  memplan::test::TempDir dir("from");
  struct FromBadCase {
    const char* name;
    std::string text;
    std::string expect;  // the whole error line after "memplan: error: "
  };
  const std::string deep = "a: " + std::string(40, '[') + "\n";
  const FromBadCase cases[] = {
      {"dup.yml", "base_model: a/b\nbase_model: c/d\n",
       dir.file("dup.yml") + ":2:1: key \"base_model\" appears twice (expected each key once)"},
      {"batch.yml", "base_model: meta-llama/Meta-Llama-3-8B\nmicro_batch_size: abc\n",
       dir.file("batch.yml") + ":2:19: micro_batch_size: "},
      {"bool.yml", "base_model: meta-llama/Meta-Llama-3-8B\nload_in_4bit: maybe\n",
       dir.file("bool.yml") + ":2:15: load_in_4bit: \"maybe\" is not true or false"},
      {"syntax.yml", "base_model: [a\n", dir.file("syntax.yml") + ":"},
      {"alias.yml", "base_model: &m a/b\nmodel_type: *m\n",
       dir.file("alias.yml") + ":2:13: YAML aliases (*name) are not read (expected the values written out)"},
      {"deep.yml", deep, dir.file("deep.yml") + ":1:"},
      {"lora.yml", "base_model: meta-llama/Meta-Llama-3-8B\nadapter: lora\n",
       dir.file("lora.yml") + ":2:10: adapter: needs lora_r (the adapters' rank)"},
      {"what.yml", "learning_rate: 2e-5\n", dir.file("what.yml") + ": is not a configuration memplan reads"},
      {"list.yml", "- a\n- b\n", dir.file("list.yml") + ":1:1: is not a mapping of keys to values"},
      {"empty.yml", "", dir.file("empty.yml") + ": is empty (expected a configuration)"},
      {"tune.yaml",
       "model:\n  _component_: torchtune.models.llama3.lora_llama3_8b\n  lora_rank: 8\n  lora_attn_modules: "
       "['q_proj', 'x_proj']\n",
       dir.file("tune.yaml") +
           ":4:33: model.lora_attn_modules: \"x_proj\" is not q_proj, k_proj, v_proj or output_proj"},
      {"fsdp.yaml", "distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: HALF_SHARD\n",
       dir.file("fsdp.yaml") + ":3:27: fsdp_config.fsdp_sharding_strategy: \"HALF_SHARD\" is not FULL_SHARD, "
                               "SHARD_GRAD_OP, NO_SHARD or "
                               "HYBRID_SHARD"},
      {"null_type.yaml", "distributed_type:\nnum_processes: 2\n",
       dir.file("null_type.yaml") + ":2:1: distributed_type: is empty (expected NO, MULTI_GPU, FSDP"},
      {"dup.json", "{\"zero_optimization\": {\"stage\": 1, \"stage\": 2}}",
       dir.file("dup.json") + ": key \"stage\" appears twice (expected each key once)"},
      {"stage.json", "{\"zero_optimization\": {\"stage\": 4}}",
       dir.file("stage.json") + ": zero_optimization.stage: "},
      {"broken.json", "{\"zero_optimization\": {\"stage\": 1}",
       dir.file("broken.json") + ": is not valid JSON ("},
      {"device.json", "{\"zero_optimization\": {\"stage\": 3, \"offload_param\": {\"device\": \"gpu\"}}}",
       dir.file("device.json") +
           ": zero_optimization.offload_param.device: \"gpu\" is not none, cpu or nvme"},
  };
  for (const FromBadCase& b : cases) {
    INFO(b.name);
    const std::string path = dir.write(b.name, b.text);
    const auto r = run_cli({"estimate", "--from", path, "--gpu", "a100-80gb"});
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(memplan::test::line_count(r.err) == 1);
    CHECK(r.err.rfind("memplan: error: " + b.expect, 0) == 0);
  }
  const std::string big = dir.write("big.yml", "base_model: a/b\n#" + std::string(2u << 20, 'x') + "\n");
  const auto r = run_cli({"estimate", "--from", big, "--gpu", "a100-80gb"});
  CHECK(r.code == 2);
  CHECK(memplan::test::line_count(r.err) == 1);
  // A key that is not UTF-8 is listed as not read, escaped: the JSON output stays valid.
  const std::string odd =
      dir.write("odd.yml", "base_model: meta-llama/Meta-Llama-3-8B\nsequence_len: 512\nweird\xff: 1\n");
  const nlohmann::json j = from_json_of({"estimate", "--from", odd, "--gpu", "t4"});
  CHECK(j["from"]["not_read"] == nlohmann::json::array({"weird\\xFF"}));
  const auto missing = run_cli({"estimate", "--from", dir.file("none.yml"), "--gpu", "a100-80gb"});
  CHECK(missing.code == 2);
  CHECK(memplan::test::line_count(missing.err) == 1);
}
