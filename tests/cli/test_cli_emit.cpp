// advise / max-batch --emit FRAMEWORK: the config written for the chosen plan, fed back through
// --from, gives that plan: the same inputs and the same required bytes as the run written by hand
// as memplan flags (from reading the suggestion), for each framework; bad --emit values refused.
#include <catch2/catch.hpp>

#include <sstream>

#include <nlohmann/json.hpp>

#include "../unit/model_file_builders.hpp"
#include "cli/config_node.hpp"
#include "cli_harness.hpp"

using memplan::cli::ConfigNode;
using memplan::test::run_cli;

namespace {

std::string emit_sample(const std::string& name) {
  return std::string(MEMPLAN_TEST_DATA_DIR) + "/from/" + name;
}

std::vector<std::string> emit_words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

nlohmann::json emit_json_of(std::vector<std::string> args) {
  args.push_back("--format");
  args.push_back("json");
  const auto r = run_cli(args);
  INFO(r.err);
  REQUIRE(r.code <= 1);
  return nlohmann::json::parse(r.out);
}

// The fragment's keys laid over the file's (mappings merged key by key, the rest replaced).
void emit_overlay(ConfigNode& base, const ConfigNode& top) {
  for (const auto& entry : top.entries) {
    const std::string& key = entry.first;
    const ConfigNode& value = entry.second;
    auto it =
        std::find_if(base.entries.begin(), base.entries.end(), [&](const auto& e) { return e.first == key; });
    if (it == base.entries.end())
      base.entries.emplace_back(key, value);
    else if (it->second.kind == ConfigNode::Kind::map && value.kind == ConfigNode::Kind::map)
      emit_overlay(it->second, value);
    else
      it->second = value;
  }
}

// A tree as YAML: every scalar double-quoted (JSON's escapes are YAML's), so any text reads back.
void emit_write_yaml(const ConfigNode& n, const std::string& indent, std::string& out) {
  for (const auto& [key, v] : n.entries) {
    out += indent + nlohmann::json(key).dump() + ":";
    if (v.kind == ConfigNode::Kind::map && !v.entries.empty()) {
      out += "\n";
      emit_write_yaml(v, indent + "  ", out);
    } else if (v.kind == ConfigNode::Kind::list) {
      out += " [";
      for (size_t i = 0; i < v.items.size(); ++i)
        out += (i ? ", " : "") + (v.items[i].kind == ConfigNode::Kind::scalar
                                      ? nlohmann::json(v.items[i].text).dump()
                                      : std::string("null"));
      out += "]\n";
    } else if (v.kind == ConfigNode::Kind::scalar) {
      out += " " + nlohmann::json(v.text).dump() + "\n";
    } else {
      out += v.kind == ConfigNode::Kind::map ? " {}\n" : " null\n";
    }
  }
}

// `file` with the emitted YAML keys merged in, written to `dir`.
std::string emit_merged(const memplan::test::TempDir& dir, const std::string& file,
                        const std::string& fragment) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  ConfigNode base = memplan::cli::parse_yaml_config(text.str(), file);
  emit_overlay(base, memplan::cli::parse_yaml_config(fragment, "emitted"));
  std::string out;
  emit_write_yaml(base, "", out);
  return dir.write("merged.yaml", out);
}

// The inputs that make the plan (memplan's normalised names) and what it requires.
nlohmann::json emit_plan_of(std::vector<std::string> args) {
  args.insert(args.begin(), "estimate");
  const nlohmann::json d = emit_json_of(args);
  nlohmann::json plan = {{"required_bytes", d.at("required_bytes")}};
  for (const char* k : {"batch", "grad_accum", "seq", "precision", "optimizer", "checkpointing", "lora",
                        "quantize", "offload", "zero", "fsdp"})
    plan[k] = d.at("inputs").value(k, nlohmann::json());
  return plan;
}

std::vector<std::string> emit_join(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

struct EmitCase {
  const char* command;  // "advise", "max-batch"
  const char* file;
  const char* both;      // the GPU and the flags given beside the file, on every side
  const char* emit;      // "--emit" or "--emit FRAMEWORK [--emit-rank N]"
  const char* chosen;    // a word of the chosen suggestion
  const char* expected;  // the plan written, as memplan flags, by hand from the suggestion
  bool exact;            // the framework writes the suggestion exactly (no not-expressible note)
};

// clang-format off
const EmitCase k_emit_cases[] = {
  // Axolotl and torchtune double-quantize QLoRA's scales: nf4-dq, a little under the suggestion's nf4.
  {"advise", "axolotl/fft-8b.yaml", "--gpu rtx-4090 --model llama-3-8b", "--emit", "QLoRA",
   "--lora 16 --lora-targets q,v --quantize nf4-dq", false},
  // torchtune's profile (chunked fp32 loss, logits deleted before backward, fused AdamW): LoRA fits
  // unquantised.
  {"advise", "torchtune/8B_full_single_device.yaml", "--gpu rtx-4090 --seq 2048", "--emit torchtune", "LoRA",
   "--lora 16 --lora-targets q,v", false},
  {"advise", "deepspeed/ds_z3_config.json",
   "--gpu rtx-4090 --model llama-3-8b --gpus 2 --seq 1024 --batch 1 --precision mixed-bf16 --checkpointing full",
   "--emit --emit-rank 3", "offload", "--offload optimizer", true},
  {"advise", "accelerate/single_config.yaml", "--gpu a100-80gb --model llama-3-8b --seq 1024 --batch 1 "
   "--checkpointing full", "--emit from --emit-rank 3", "offload", "--zero 2 --offload optimizer", true},
  {"max-batch", "llamafactory/llama3_lora_sft.yaml", "--gpu a100-80gb --model llama-3-8b --effective-batch 64",
   "--emit", "micro-batch", "--batch 22 --grad-accum 3", true},
  {"max-batch", "torchtune/8B_lora_single_device.yaml", "--gpu rtx-4090 --seq 2048 --effective-batch 32",
   "--emit", "micro-batch", "--batch 3 --grad-accum 11", true},
};
// clang-format on

}  // namespace

TEST_CASE("emit: the config written reads back through --from as the plan chosen", "[cli][emit][many-runs]") {
  const memplan::test::TempDir dir("emit_round_trip");
  for (const EmitCase& c : k_emit_cases) {
    INFO(c.command << " " << c.file << " " << c.both << " " << c.emit);
    const std::string file = emit_sample(c.file);
    const std::vector<std::string> both = emit_words(c.both);
    std::vector<std::string> args = {c.command, "--from", file};
    args = emit_join(emit_join(args, both), emit_words(c.emit));
    const nlohmann::json emit = emit_json_of(args).at("emit");
    INFO(emit.dump(2));
    CHECK(emit.at("chosen").get<std::string>().find(c.chosen) != std::string::npos);
    CHECK(emit.at("verdict") != "no");
    const std::string text = emit.at("text");
    const bool is_json = std::string(c.file).find("deepspeed/") == 0;
    if (is_json) REQUIRE_NOTHROW(nlohmann::json::parse(text));  // a complete DeepSpeed JSON
    const std::string written = is_json ? dir.write("written.json", text) : emit_merged(dir, file, text);

    // max-batch's own flags name no plan: estimate takes the plan alone.
    std::vector<std::string> plan_flags;
    for (size_t i = 0; i < both.size(); ++i) {
      if (both[i] == "--effective-batch") {
        ++i;
        continue;
      }
      plan_flags.push_back(both[i]);
    }
    const nlohmann::json read_back = emit_plan_of(emit_join({"--from", written}, plan_flags));
    const nlohmann::json by_hand =
        emit_plan_of(emit_join(emit_join({"--from", file}, plan_flags), emit_words(c.expected)));
    CHECK(read_back == by_hand);
    if (c.exact) CHECK(read_back.at("required_bytes") == emit.at("required_bytes"));
    CHECK(emit.at("notes").empty() == c.exact);
  }
}

TEST_CASE("emit flags: memplan's flags beside the file give the suggestion's bytes",
          "[cli][emit][many-runs]") {
  const std::string file = emit_sample("axolotl/fft-8b.yaml");
  const nlohmann::json emit = emit_json_of({"advise", "--from", file, "--gpu", "rtx-4090", "--model",
                                            "llama-3-8b", "--emit", "flags"})
                                  .at("emit");
  CHECK(emit.at("text") == "--lora 16 --lora-targets q,v --quantize nf4\n");
  const nlohmann::json plan = emit_plan_of(
      emit_join({"--from", file, "--gpu", "rtx-4090", "--model", "llama-3-8b"}, emit_words(emit.at("text"))));
  CHECK(plan.at("required_bytes") == emit.at("required_bytes"));
  // The suggestion advise lists first, with the same bytes.
  const nlohmann::json advice =
      emit_json_of({"advise", "--from", file, "--gpu", "rtx-4090", "--model", "llama-3-8b"});
  bool listed = false;
  for (const auto& s : advice.at("suggestions"))
    listed = listed || (s.at("required_bytes") == emit.at("required_bytes") &&
                        s.at("change").get<std::string>().find("QLoRA") == 0);
  CHECK(listed);
}

TEST_CASE("emit: the text output is the config alone, the choice on stderr", "[cli][emit][many-runs]") {
  const std::string ds = emit_sample("deepspeed/ds_z3_config.json");
  const auto r = run_cli({"advise",
                          "--from",
                          ds,
                          "--gpu",
                          "rtx-4090",
                          "--model",
                          "llama-3-8b",
                          "--gpus",
                          "2",
                          "--seq",
                          "1024",
                          "--batch",
                          "1",
                          "--precision",
                          "mixed-bf16",
                          "--checkpointing",
                          "full",
                          "--emit",
                          "--emit-rank",
                          "3"});
  REQUIRE(r.code == 0);
  const nlohmann::json doc = nlohmann::json::parse(r.out);  // nothing but the JSON on stdout
  CHECK(doc.at("zero_optimization").at("stage") == 3);
  CHECK(doc.at("zero_optimization").at("offload_optimizer").at("device") == "cpu");
  CHECK(doc.at("train_micro_batch_size_per_gpu") == "auto");  // unchanged: left to the trainer
  CHECK(r.err.find("memplan: advise --emit deepspeed: suggestion 3: CPU offload of the optimizer") == 0);

  // Without --from: a minimal DeepSpeed JSON, and the knobs it cannot hold named.
  const auto m = run_cli({"advise", "--model", "llama-3-8b", "--gpu", "a100-80gb", "--seq", "2048", "--batch",
                          "8", "--precision", "mixed-bf16", "--emit", "deepspeed"});
  REQUIRE(m.code == 0);
  const nlohmann::json minimal = nlohmann::json::parse(m.out);
  CHECK(minimal.at("zero_optimization").at("stage") == 0);
  CHECK(minimal.at("bf16").at("enabled") == true);
  CHECK(m.err.find("not expressible in deepspeed") != std::string::npos);

  // YAML: the keys to change, with comment lines naming the file and what was chosen.
  const std::string axo = emit_sample("axolotl/fft-8b.yaml");
  const auto y = run_cli({"advise", "--from", axo, "--gpu", "rtx-4090", "--model", "llama-3-8b", "--emit"});
  REQUIRE(y.code == 0);
  CHECK(y.err.empty());
  CHECK(y.out.find("# the keys to change in " + axo) != std::string::npos);
  CHECK(y.out.find("\nadapter: qlora\nlora_r: 16\n") != std::string::npos);
  CHECK(y.out.find("micro_batch_size") == std::string::npos);  // unchanged keys are not written
}

TEST_CASE("emit: LLaMA-Factory's DeepSpeed files for sharding, trainer flags, and what cannot be said",
          "[cli][emit]") {
  const std::string lf = emit_sample("llamafactory/llama3_lora_sft.yaml");
  const auto r = run_cli({"advise", "--from", lf, "--model", "llama-3-8b", "--gpu", "t4", "--emit"});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("\ndeepspeed: examples/deepspeed/ds_z3_config.json\n") != std::string::npos);
  CHECK(r.out.find("# launch on 2 GPUs") != std::string::npos);
  CHECK(r.out.find("# not expressible in llamafactory: DeepSpeed zero-3") != std::string::npos);

  const auto t = run_cli({"advise", "--from", lf, "--model", "llama-3-8b", "--gpu", "t4", "--emit", "trainer",
                          "--emit-rank", "2"});
  REQUIRE(t.code == 0);
  CHECK(t.out ==
        "--per_device_train_batch_size 1 --gradient_accumulation_steps 8 --gradient_checkpointing true "
        "--bf16 true "
        "--optim adamw_torch --deepspeed ds_config.json\n");
  CHECK(t.err.find("--use_peft --lora_r 8") != std::string::npos);  // the adapters: TRL's flags, said
}

TEST_CASE("emit: bad values refused in one line", "[cli][emit][many-runs]") {
  const std::string axo = emit_sample("axolotl/fft-8b.yaml");
  const std::vector<std::string> run = {"advise",   "--from",  axo,         "--gpu",
                                        "rtx-4090", "--model", "llama-3-8b"};
  const auto bad = run_cli(emit_join(run, {"--emit", "nosuch"}));
  CHECK(bad.code == 2);
  CHECK(bad.err ==
        "memplan: error: --emit: \"nosuch\" is not one of deepspeed, axolotl, llamafactory, torchtune, "
        "accelerate, "
        "trainer, flags, from\n");
  const auto no_file = run_cli({"advise", "--model", "llama-3-8b", "--gpu", "rtx-4090", "--emit"});
  CHECK(no_file.code == 2);
  CHECK(no_file.err.find("--emit: without a value needs --from FILE") != std::string::npos);
  const auto rank = run_cli(emit_join(run, {"--emit", "--emit-rank", "99"}));
  CHECK(rank.code == 2);
  CHECK(rank.err.find("--emit-rank: 99 is past the last fitting suggestion") != std::string::npos);
  const auto lone = run_cli(emit_join(run, {"--emit-rank", "2"}));
  CHECK(lone.code == 2);
  const auto infer = run_cli({"advise", "--model", "llama-3-8b", "--mode", "infer", "--gpu", "t4", "--seq",
                              "8192", "--batch", "16", "--emit", "axolotl"});
  CHECK(infer.code == 2);
  CHECK(infer.err.find("the run is inference") != std::string::npos);
  for (const auto* r : {&bad, &no_file, &rank, &lone, &infer}) CHECK(memplan::test::line_count(r->err) == 1);
  const auto mb = run_cli(
      {"max-batch", "--model", "llama-3-8b", "--gpu", "t4,a100-80gb", "--seq", "1024", "--emit", "flags"});
  CHECK(mb.code == 2);
  CHECK(mb.err.find("--emit: writes the batch of one GPU") != std::string::npos);
}
