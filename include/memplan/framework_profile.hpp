#pragma once
// A framework's profile: the defaults a user of that framework really gets where memplan has a
// choice to make (the loss, the LoRA adapters' format and dropout, the optimizer's loop, whether
// the loop keeps the logits, whether activation checkpointing is on). Each rule cites the code
// that makes it, at a release. A profile implies its rules; a flag given overrides one (the CLI
// applies them and says which came from the profile). One file per profile under
// src/core/profiles/.

#include <cstdint>
#include <optional>
#include <string_view>

#include <memplan/bitsandbytes_release.hpp>
#include <memplan/compute.hpp>
#include <memplan/framework.hpp>
#include <memplan/timeline.hpp>

namespace memplan {

// How the framework puts 4-bit (bitsandbytes) weights on the GPU before the first step, with the
// loader's own temporaries (core/memory/weight_load.hpp):
//   direct:           each weight allocated once, in its final format (memplan's default)
//   transformers_bnb: from_pretrained with a BitsAndBytesConfig: the allocator warm-up, then one
//                     weight at a time staged in 16 bits on the GPU and quantised there
//   litgpt_bnb:       Fabric's BitsandbytesPrecision: every Linear built on the GPU and quantised
//                     from an fp16 copy, then quantised again from the checkpoint's fp16 copy
enum class WeightLoad : uint8_t { direct, transformers_bnb, litgpt_bnb };

// One default of a profile: its value (none: the profile leaves memplan's own default) and the
// code that sets it ("torchtune 0.6.1 recipes/configs/llama3_1/8B_lora_single_device.yaml: ...").
template <class T>
struct ProfileRule {
  std::optional<T> value;
  std::string_view source;
};

struct FrameworkProfile {
  Framework framework = Framework::hf;
  std::string_view release;  // the release whose code the rules cite ("0.6.1")
  std::string_view runs;     // what the profile runs, in a few words
  ProfileRule<Loss> loss;
  ProfileRule<bool> lora_fp32;                 // LoRA adapters in fp32 on a half model (else the base format)
  ProfileRule<double> lora_dropout;            // LoRA dropout probability
  ProfileRule<std::string_view> lora_targets;  // the adapted matrices, as --lora-targets takes them
  ProfileRule<OptimizerLoop> optimizer_loop;   // for torch's Adam/AdamW
  // The loop rule holds from these torch and transformers releases on ({0, 0}: any).
  uint32_t optimizer_loop_from_torch[2] = {0, 0};
  uint32_t optimizer_loop_from_transformers[2] = {0, 0};
  ProfileRule<bool> keep_logits;             // the loop keeps the logits through backward
  ProfileRule<Checkpointing> checkpointing;  // activation checkpointing when the user does not say
  // Full checkpointing offloads each checkpointed layer's input to pinned host memory but the last
  // one's, reloading it into one of two GPU buffers in backward (unsloth's "unsloth" checkpointing).
  ProfileRule<bool> offloaded_checkpoints;
  // The bitsandbytes release its QLoRA runs used (none: today's, the default).
  ProfileRule<BitsandbytesRelease> bitsandbytes;
  // Its loop runs a half model under torch.autocast all the same (no flag: the framework does it).
  ProfileRule<bool> autocast_over_half;
  // How its QLoRA runs load and quantise the weights (none: direct).
  ProfileRule<WeightLoad> weight_load;
};

// The profile of `f` (a static table: one file per framework).
const FrameworkProfile& framework_profile(Framework f);

}  // namespace memplan
