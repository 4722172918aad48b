// --from FILE with transformers TrainingArguments / TRL configs (tests/data/from/trainer, SOURCES.md):
// each sample reads into the same plan as the flags written by hand from reading the file; the
// DeepSpeed config it names is read too; bad input refused in one line.
#include <catch2/catch.hpp>

#include <sstream>

#include <nlohmann/json.hpp>

#include "../unit/model_file_builders.hpp"
#include "cli_harness.hpp"

using memplan::test::run_cli;

namespace {

std::string trainer_sample(const std::string& name) {
  return std::string(MEMPLAN_TEST_DATA_DIR) + "/from/trainer/" + name;
}

std::vector<std::string> trainer_words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

nlohmann::json trainer_json(std::vector<std::string> args) {
  args.push_back("--format");
  args.push_back("json");
  const auto r = run_cli(args);
  INFO(r.err);
  REQUIRE(r.code <= 1);
  nlohmann::json doc = nlohmann::json::parse(r.out);
  doc["exit_code"] = r.code;
  return doc;
}

struct TrainerCase {
  const char* file;
  const char* both;   // on both sides: the GPU, a preset for a model that is none (tests run offline)
  const char* flags;  // the file's values, written by hand
};

// clang-format off
const TrainerCase k_trainer_samples[] = {
  {"zephyr-7b-beta-config_full.yaml", "--gpu a100-80gb",
   "--model mistral-7b --precision bf16 --seq 2048 --batch 16 --grad-accum 1 --checkpointing full --attention sdpa"},
  {"zephyr-7b-beta-config_qlora.yaml", "--gpu a100-80gb",
   "--model mistral-7b --lora 16 --lora-targets q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj "
   "--lora-dropout 0.05 --quantize nf4 --precision bf16 --seq 2048 --batch 4 --grad-accum 2 --checkpointing full "
   "--attention sdpa"},
  {"zephyr-7b-gemma-config_full.yaml", "--gpu h100-80gb",
   "--model gemma-7b --precision bf16 --seq 2048 --batch 4 --grad-accum 4 --checkpointing full --attention sdpa"},
  {"constitutional-ai-config_anthropic.yaml", "--gpu a100-80gb",
   "--model mistral-7b --precision bf16 --seq 2048 --batch 8 --grad-accum 4 --checkpointing full --attention sdpa"},
  {"smollm2-config.yaml", "--gpu a100-80gb --model llama-3-8b",
   "--precision bf16 --seq 8192 --batch 4 --grad-accum 4 --checkpointing full --attention sdpa"},
  {"example_config.yaml", "--gpu a100-80gb --model llama-3-8b --seq 1024", "--batch 8"},
  {"bart_training_args.json", "--gpu a100-80gb --model llama-3-8b --seq 1024", "--batch 1"},
  {"grpo_training_args.json", "--gpu a100-80gb --model llama-3-8b --seq 512",
   "--precision amp-fp16 --batch 6 --grad-accum 2 --optimizer paged-adamw-8bit"},
};
// clang-format on

}  // namespace

TEST_CASE("from trainer: each TrainingArguments sample reads into the plan its flags give",
          "[cli][from][many-runs]") {
  for (const TrainerCase& s : k_trainer_samples) {
    for (const char* command : {"estimate", "fit", "max-batch", "advise"}) {
      INFO(s.file << " " << command);
      std::vector<std::string> from{command, "--from", trainer_sample(s.file)};
      std::vector<std::string> flags{command};
      for (const std::string& w : trainer_words(s.both)) {
        from.push_back(w);
        flags.push_back(w);
      }
      for (const std::string& w : trainer_words(s.flags)) flags.push_back(w);
      nlohmann::json a = trainer_json(from);
      REQUIRE(a.contains("from"));
      CHECK(a["from"]["framework"] == "trainer");
      a.erase("from");
      CHECK(a == trainer_json(flags));
    }
  }
}

TEST_CASE("from trainer: the report names what it used, what it does not model and what it did not read",
          "[cli][from]") {
  const nlohmann::json j = trainer_json({"estimate", "--from", trainer_sample("grpo_training_args.json"),
                                         "--model", "llama-3-8b", "--gpu", "a100-80gb"});
  const nlohmann::json& f = j["from"];
  REQUIRE(f["notes"].size() == 1);
  CHECK(f["notes"][0].get<std::string>().find("name no model") != std::string::npos);
  bool optim = false, beta = false, empty_cache = false;
  for (const auto& u : f["used"])
    optim |= u["field"] == "optim" && u["option"] == "--optimizer paged-adamw-8bit";
  for (const auto& n : f["not_modelled"]) {
    beta |= n["field"] == "beta";
    empty_cache |= n["field"] == "torch_empty_cache_steps" && n["value"] == "250";
  }
  CHECK(optim);
  CHECK(beta);
  CHECK(empty_cache);
  // GRPO's own keys are not TrainingArguments': listed, never dropped.
  bool use_vllm = false;
  for (const auto& k : f["not_read"]) use_vllm |= k == "use_vllm";
  CHECK(use_vllm);

  const auto t =
      run_cli({"estimate", "--from", trainer_sample("zephyr-7b-beta-config_qlora.yaml"), "--gpu", "t4"});
  CHECK(t.out.find("  load_in_4bit = true -> --quantize nf4 (bitsandbytes nf4)\n") != std::string::npos);
  CHECK(t.out.find("  max_seq_length = 2048 -> --seq 2048") != std::string::npos);
}

TEST_CASE("from trainer: the DeepSpeed config it names is read, from a path beside it or inline",
          "[cli][from]") {
  memplan::test::TempDir dir("from_trainer_ds");
  dir.write("ds.json",
            R"({"zero_optimization": {"stage": 3, "offload_param": {"device": "cpu"}},
                "train_micro_batch_size_per_gpu": "auto", "bf16": {"enabled": "auto"}})");
  const std::string path =
      dir.write("args.json",
                R"({"output_dir": "out", "per_device_train_batch_size": 2, "gradient_accumulation_steps": 4,
                       "bf16": true, "gradient_checkpointing": true, "deepspeed": "ds.json"})");
  const std::string both = "--model llama-3-8b --gpu a100-80gb --gpus 8 --seq 2048";
  const std::string hand =
      "--batch 2 --grad-accum 4 --precision mixed-bf16 --checkpointing full --zero 3 --offload parameters";
  std::vector<std::string> from{"estimate", "--from", path}, flags{"estimate"};
  for (const std::string& w : trainer_words(both)) {
    from.push_back(w);
    flags.push_back(w);
  }
  for (const std::string& w : trainer_words(hand)) flags.push_back(w);
  nlohmann::json a = trainer_json(from);
  bool zero = false;
  for (const auto& u : a["from"]["used"]) zero |= u["field"] == "ds.json:zero_optimization.stage";
  CHECK(zero);
  a.erase("from");
  CHECK(a == trainer_json(flags));

  const std::string inline_ds =
      dir.write("inline.json",
                R"({"output_dir": "out", "per_device_train_batch_size": 2, "gradient_accumulation_steps": 4,
                         "bf16": true, "gradient_checkpointing": true,
                         "deepspeed": {"zero_optimization": {"stage": 3, "offload_param": {"device": "cpu"}}}})");
  from[2] = inline_ds;
  nlohmann::json b = trainer_json(from);
  b.erase("from");
  CHECK(b == trainer_json(flags));
}

TEST_CASE("from trainer: bad TrainingArguments are refused in one line", "[cli][from]") {
  memplan::test::TempDir dir("from_trainer_bad");
  struct TrainerBad {
    const char* name;
    std::string text;
    std::string expect;  // the error line after "memplan: error: "
  };
  const TrainerBad cases[] = {
      {"bool.yaml", "per_device_train_batch_size: 2\ngradient_checkpointing: sometimes\n",
       dir.file("bool.yaml") + ":2:25: gradient_checkpointing: \"sometimes\" is not true or false"},
      {"batch.json", R"({"output_dir": "o", "per_device_train_batch_size": "many"})",
       dir.file("batch.json") + ": per_device_train_batch_size: "},
      {"both.yaml", "per_device_train_batch_size: 2\nbf16: true\nfp16: true\n",
       dir.file("both.yaml") + ":3:7: fp16: cannot be true with bf16"},
      {"fsdp.json", R"({"output_dir": "o", "fsdp": "auto_wrap"})",
       dir.file("fsdp.json") + ": fsdp: \"auto_wrap\" names no sharding"},
      {"quant.yaml", "model_name_or_path: a/b\nload_in_4bit: true\nbnb_4bit_quant_type: int3\n",
       dir.file("quant.yaml") + ":3:22: bnb_4bit_quant_type: \"int3\" is not nf4 or fp4"},
      {"ds_missing.json", R"({"output_dir": "o", "deepspeed": "nowhere.json"})",
       dir.file("ds_missing.json") + ": deepspeed: cannot read \"" + dir.file("nowhere.json") + "\""},
      {"ds_mismatch.json",
       R"({"output_dir": "o", "per_device_train_batch_size": 2,
           "deepspeed": {"train_micro_batch_size_per_gpu": 4}})",
       dir.file("ds_mismatch.json") + ": deepspeed: sets --batch 4 but TrainingArguments 2"},
  };
  for (const TrainerBad& b : cases) {
    INFO(b.name);
    const std::string path = dir.write(b.name, b.text);
    const auto r = run_cli({"estimate", "--from", path, "--model", "llama-3-8b", "--gpu", "a100-80gb"});
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(memplan::test::line_count(r.err) == 1);
    CHECK(r.err.rfind("memplan: error: " + b.expect, 0) == 0);
  }
}
