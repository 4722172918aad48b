// --framework's profiles (framework_profile.hpp): each rule cites its code, fills only what the user
// did not give, is named in the assumptions, and gives the same answer as the flags it stands for.
// The byte figures are worked from the frameworks' code and from published parameter counts, not
// from memplan's output.

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include <memplan/framework_profile.hpp>

#include "cli_harness.hpp"

using memplan::test::run_cli;
using nlohmann::json;

namespace {

json profile_estimate(std::vector<std::string> args) {
  std::vector<std::string> a = {"estimate", "--format", "json"};
  a.insert(a.end(), args.begin(), args.end());
  const auto r = run_cli(a);
  INFO(r.err);
  REQUIRE(r.code == 0);
  return json::parse(r.out);
}

bool says(const json& j, const std::string& fragment) {
  for (const auto& a : j["assumptions"])
    if (a.get<std::string>().find(fragment) != std::string::npos) return true;
  return false;
}

// The ledger's rows after the last layer, by name (without the "[outside layers] " mark).
std::vector<std::pair<std::string, uint64_t>> outside_rows(const json& j) {
  const std::string mark = "[outside layers] ";
  std::vector<std::pair<std::string, uint64_t>> out;
  for (const auto& row : j["layer_ledger"]) {
    const std::string name = row["name"];
    if (name.rfind(mark, 0) == 0) out.emplace_back(name.substr(mark.size()), row["bytes"].get<uint64_t>());
  }
  return out;
}

uint64_t phase_transient(const json& j, const std::string& phase) {
  for (const auto& p : j["timeline"])
    if (p["phase"] == phase) return p["transient"].get<uint64_t>();
  return UINT64_MAX;
}

}  // namespace

TEST_CASE("every profile names its release and cites each rule it sets", "[cli][framework]") {
  using namespace memplan;
  for (const char* name :
       {"hf", "trainer", "trl", "axolotl", "llamafactory", "torchtune", "unsloth", "litgpt"}) {
    const Framework f = parse_framework("--framework", name);
    CHECK(std::string(to_string(f)) == name);
    const FrameworkProfile& p = framework_profile(f);
    INFO(name);
    CHECK(p.framework == f);
    CHECK(!p.release.empty());
    CHECK((!p.loss.value || !p.loss.source.empty()));
    CHECK((!p.lora_fp32.value || !p.lora_fp32.source.empty()));
    CHECK((!p.lora_dropout.value || !p.lora_dropout.source.empty()));
    CHECK((!p.lora_targets.value || !p.lora_targets.source.empty()));
    CHECK((!p.optimizer_loop.value || !p.optimizer_loop.source.empty()));
    CHECK((!p.keep_logits.value || !p.keep_logits.source.empty()));
    CHECK((!p.checkpointing.value || !p.checkpointing.source.empty()));
  }
}

TEST_CASE("torchtune's profile fills what is not given and says so, a flag given wins", "[cli][framework]") {
  const json j =
      profile_estimate({"--model", "llama-3-8b", "--precision", "bf16", "--lora", "8", "--seq", "512"});
  const json t = profile_estimate({"--model", "llama-3-8b", "--precision", "bf16", "--lora", "8", "--seq",
                                   "512", "--framework", "torchtune"});
  CHECK(j["inputs"]["loss"] == "plain");
  CHECK(t["inputs"]["loss"] == "chunked");
  CHECK(t["inputs"]["checkpointing"] == "full");
  CHECK(t["inputs"]["lora_targets"] == "q_proj,v_proj,o_proj,gate_proj,up_proj,down_proj");
  CHECK(says(t, "--framework torchtune: loss chunked (torchtune 0.6.1"));
  CHECK(says(t, "--framework torchtune: LoRA adapters in the model's format"));
  CHECK(says(t, "--framework torchtune: optimizer loop fused"));
  CHECK(says(t, "; --loss to change)"));
  // The config's LoRA: r=8 on q, v, o (4096 x 4096 and 4096 x 1024 for v: 8 kv heads x 128) and the
  // MLP (4096 <-> 14336), 32 layers: 8 x 32 x (8192 + 5120 + 8192 + 3 x 18432) = 19,660,800.
  CHECK(t["model"]["trainable_parameters"] == 19660800);
  const json plain =
      profile_estimate({"--model", "llama-3-8b", "--precision", "bf16", "--lora", "8", "--seq", "512",
                        "--framework", "torchtune", "--loss", "plain", "--checkpointing", "none"});
  CHECK(plain["inputs"]["loss"] == "plain");
  CHECK(plain["inputs"]["checkpointing"] == "none");
  CHECK(!says(plain, "--framework torchtune: loss"));
  CHECK(!says(plain, "activation checkpointing"));
}

TEST_CASE("torchtune's chunked loss keeps every chunk's fp32 log-softmax, not its bf16 logits",
          "[cli][framework]") {
  // CEWithChunkedOutputLoss: F.cross_entropy(chunk.float()) keeps the fp32 log-softmax of each of
  // the 8 chunks; the recipe deletes the bf16 logits before backward. Llama 3's vocabulary is
  // 128,256: 512 x 128,256 x 4 B = 262,668,288 B per sample.
  const json t = profile_estimate({"--model", "llama-3-8b", "--precision", "bf16", "--lora", "8", "--seq",
                                   "512", "--framework", "torchtune", "--explain"});
  bool kept = false, held = false;
  for (const auto& [name, bytes] : outside_rows(t)) {
    if (name == "log-softmax of each chunk (fp32, kept by cross-entropy)") kept = bytes == 262668288;
    if (name == "logits in 8 chunks (held for the loss, deleted before backward)") held = bytes == 131334144;
  }
  CHECK(kept);
  CHECK(held);
}

TEST_CASE("trl's fused LM head keeps the head's input copy, no logits", "[cli][framework]") {
  // trl 1.16.0 add_fused_lm_head: last_hidden_state[:, :-1] reshaped, 2047 x 4096 x 2 B (bf16).
  const json t = profile_estimate(
      {"--model", "llama-3-8b", "--precision", "bf16", "--lora", "8", "--seq", "2048", "--framework", "trl"});
  CHECK(t["inputs"]["loss"] == "logprob");
  CHECK(t["inputs"]["checkpointing"] == "full");
  bool copy = false, logits = false;
  for (const auto& [name, bytes] : outside_rows(t)) {
    if (name.rfind("final norm output[:, :-1] copy", 0) == 0) copy = bytes == 16769024;
    if (name.find("logits") != std::string::npos) logits = true;
  }
  CHECK(copy);
  CHECK(!logits);
  // transformers chose adamw_torch_fused from 4.54.0 (huggingface/transformers#37358): before, foreach.
  const json old = profile_estimate({"--model", "llama-3-8b", "--precision", "bf16", "--lora", "8", "--seq",
                                     "2048", "--framework", "trl", "--transformers", "4.53"});
  CHECK(says(t, "optimizer loop fused"));
  CHECK(!says(old, "optimizer loop fused"));
}

TEST_CASE("fused AdamW has no step temporaries, foreach's is one copy of every trainable number",
          "[cli][framework]") {
  // GPT-2: 124,439,808 parameters (published); foreach's sqrt(exp_avg_sq) is 4 B each in fp32.
  const json foreach = profile_estimate({"--model", "gpt2", "--seq", "1024"});
  const json fused = profile_estimate({"--model", "gpt2", "--seq", "1024", "--optimizer-loop", "fused"});
  const json trainer = profile_estimate({"--model", "gpt2", "--seq", "1024", "--framework", "trainer"});
  CHECK(phase_transient(foreach, "optimizer") == 124439808ull * 4);
  CHECK(phase_transient(fused, "optimizer") == 0);
  CHECK(phase_transient(trainer, "optimizer") == 0);
  CHECK(trainer["peak_bytes"] == fused["peak_bytes"]);
  CHECK(trainer["reserved_bytes"] == fused["reserved_bytes"]);
}

TEST_CASE("litgpt's profile is the flags its published rows were run with", "[cli][framework]") {
  const std::vector<std::string> base = {"--model", "llama-2-7b", "--precision", "bf16",        "--lora",
                                         "8",       "--seq",      "512",         "--framework", "litgpt"};
  std::vector<std::string> flags = base;
  flags.insert(flags.end(),
               {"--loss", "chunked", "--lora-dtype", "base", "--lora-dropout", "0.05", "--keep-logits"});
  const json implied = profile_estimate(base);
  const json given = profile_estimate(flags);
  CHECK(implied["peak_bytes"] == given["peak_bytes"]);
  CHECK(implied["reserved_bytes"] == given["reserved_bytes"]);
  CHECK(implied["breakdown"] == given["breakdown"]);
  CHECK(says(implied, "--framework litgpt: LoRA dropout 0.05"));
}

TEST_CASE("unsloth's checkpointing keeps one layer input and two reload buffers on the GPU",
          "[cli][framework]") {
  // Llama 3 8B, batch 1 x 2048, bf16: a layer input is 2048 x 4096 x 2 = 16,777,216 B.
  const json u = profile_estimate({"--model", "llama-3-8b", "--precision", "bf16", "--lora", "16", "--seq",
                                   "2048", "--framework", "unsloth"});
  const json hf =
      profile_estimate({"--model", "llama-3-8b", "--precision", "bf16", "--lora", "16", "--seq", "2048",
                        "--lora-targets", "all", "--checkpointing", "full", "--loss", "fused"});
  uint64_t last = 0, buffers = 0;
  for (const auto& [name, bytes] : outside_rows(u)) {
    if (name.rfind("the last layer's input", 0) == 0) last = bytes;
    if (name.rfind("unsloth's two GPU reload buffers", 0) == 0) buffers = bytes;
  }
  CHECK(last == 16777216);
  CHECK(buffers == 2 * 16777216);
  // Against transformers' own checkpointing: 32 layer inputs on the GPU instead of 1 + 2.
  CHECK(hf["breakdown"]["activations"].get<uint64_t>() - u["breakdown"]["activations"].get<uint64_t>() ==
        29ull * 16777216);
}

TEST_CASE("a transformers release is refused where the model code is not transformers'", "[cli][framework]") {
  const auto r =
      run_cli({"estimate", "--model", "llama-3-8b", "--framework", "torchtune", "--transformers", "4.46"});
  CHECK(r.code == 2);
  CHECK(r.err.find("--transformers") != std::string::npos);
}
