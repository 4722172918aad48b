// --from: transformers' TrainingArguments (and TRL's SFTConfig with its ModelConfig) as the JSON that
// HfArgumentParser reads or `to_json_string()` writes, or as a TRL CLI / alignment-handbook YAML:
// per_device_train_batch_size, gradient_accumulation_steps, bf16/fp16, gradient_checkpointing, optim,
// max_length, fsdp, and the DeepSpeed config it names (a path or an inline mapping).
#include <string>

#include "cli/from_config.hpp"
#include "cli/from_fields.hpp"
#include "cli/options.hpp"
#include "core/base/file_reader.hpp"

namespace memplan::cli {

namespace {

// A value HfArgumentParser leaves unset: JSON null, or the text None of a dump through str().
const ConfigNode* trainer_get(FromFields& f, const std::string& path) {
  const ConfigNode* n = f.get(path);
  if (n && n->kind == ConfigNode::Kind::scalar && (n->text == "None" || n->text.empty())) return nullptr;
  return n;
}

bool trainer_true(FromFields& f, const std::string& path) {
  const ConfigNode* n = trainer_get(f, path);
  return n && f.boolean(path, *n);
}

// TRL's ModelConfig: use_peft with lora_r (default 16), its targets, 4- and 8-bit loading.
void trainer_peft(FromFields& f) {
  if (trainer_true(f, "use_peft")) {
    const ConfigNode* rank = trainer_get(f, "lora_r");
    f.use("lora_r", rank, Field::lora, rank ? f.text("lora_r", *rank) : "16", rank ? "" : "TRL's default");
    if (const ConfigNode* mods = trainer_get(f, "lora_target_modules")) {
      const std::string names = joined_names(f, "lora_target_modules", *mods);
      f.use("lora_target_modules", mods, Field::lora_targets, names == "all-linear" ? "all" : names,
            names == "all-linear" ? "every linear layer of the blocks" : "");
    }
    const ConfigNode* dropout = trainer_get(f, "lora_dropout");
    f.use("lora_dropout", dropout, Field::lora_dropout, dropout ? f.text("lora_dropout", *dropout) : "0.05",
          dropout ? "" : "TRL's default");
    if (const ConfigNode* n = trainer_get(f, "lora_modules_to_save"))
      f.not_modelled("lora_modules_to_save", joined_names(f, "lora_modules_to_save", *n),
                     "these modules train in full beside the adapters (their gradients and optimizer state)");
    if (trainer_true(f, "use_dora"))
      f.not_modelled("use_dora", "true", "DoRA's magnitude vectors and their activations are not counted");
  }
  const bool four = trainer_true(f, "load_in_4bit"), eight = trainer_true(f, "load_in_8bit");
  if (four && eight) f.fail("load_in_8bit", *f.get("load_in_8bit"), "cannot be true with load_in_4bit");
  if (four) {
    const ConfigNode* type = trainer_get(f, "bnb_4bit_quant_type");
    const std::string t = type ? f.text("bnb_4bit_quant_type", *type) : "nf4";
    if (t != "nf4" && t != "fp4") f.fail("bnb_4bit_quant_type", *type, "\"" + t + "\" is not nf4 or fp4");
    const bool nested = trainer_true(f, "use_bnb_nested_quant");
    f.use("load_in_4bit", f.get("load_in_4bit"), Field::quantize,
          t == "fp4" ? "int4"
          : nested   ? "nf4-dq"
                     : "nf4",
          std::string("bitsandbytes ") + t + (nested ? ", nested quantization" : ""));
  }
  if (eight) f.use("load_in_8bit", f.get("load_in_8bit"), Field::quantize, "int8", "bitsandbytes LLM.int8()");
}

// The dtype the weights load in (TRL's ModelConfig dtype/torch_dtype), "" when not given.
std::string trainer_weight_dtype(FromFields& f, std::string& key) {
  for (const char* k : {"dtype", "torch_dtype", "model_init_kwargs.dtype", "model_init_kwargs.torch_dtype"})
    if (const ConfigNode* n = trainer_get(f, k)) {
      key = k;
      return f.text(k, *n);
    }
  return "";
}

// bf16/fp16 with the weights' dtype: autocast over fp32 weights unless the weights load in half
// precision; under DeepSpeed its bf16/fp16 mode (half weights, an fp32 master copy).
void trainer_precision(FromFields& f, bool deepspeed) {
  std::string dtype_key;
  const std::string dtype = trainer_weight_dtype(f, dtype_key);
  const bool bf16 = trainer_true(f, "bf16"), fp16 = trainer_true(f, "fp16");
  if (bf16 && fp16) f.fail("fp16", *f.get("fp16"), "cannot be true with bf16");
  const char* half = bf16 ? "bf16" : fp16 ? "fp16" : nullptr;
  const bool dtype_half = dtype == "bfloat16" || dtype == "float16";
  if (half && deepspeed) {
    f.use(half, f.get(half), Field::precision, std::string("mixed-") + half,
          "DeepSpeed's " + std::string(half) + " mode: half weights, fp32 master copy");
  } else if (half && dtype_half) {
    f.use(dtype_key, f.get(dtype_key), Field::precision, dtype == "bfloat16" ? "bf16" : "fp16",
          "weights loaded in " + dtype + ", " + half + " autocast");
  } else if (half) {
    f.use(half, f.get(half), Field::precision, std::string("amp-") + half,
          "autocast over fp32 weights (no dtype given: give --precision " + std::string(half) +
              " when the script loads them in half precision)");
  } else if (dtype_half) {
    f.use(dtype_key, f.get(dtype_key), Field::precision, dtype == "bfloat16" ? "bf16" : "fp16",
          "weights loaded in " + dtype);
  } else if (f.get("bf16") || f.get("fp16") || dtype == "float32") {
    const std::string key = f.get("bf16") ? "bf16" : f.get("fp16") ? "fp16" : dtype_key;
    f.use(key, f.get(key), Field::precision, "fp32", "neither bf16 nor fp16: fp32 training");
  }
}

// fsdp: "full_shard auto_wrap offload" or a list of those words.
void trainer_fsdp(FromFields& f) {
  const ConfigNode* n = trainer_get(f, "fsdp");
  if (!n) return;
  std::string words = joined_names(f, "fsdp", *n);
  for (char& c : words)
    if (c == ',') c = ' ';
  if (words.empty() || words == "false") return;
  std::string mode;
  for (const auto& [word, m] : {std::pair<const char*, const char*>{"full_shard", "full-shard"},
                                {"shard_grad_op", "shard-grad-op"},
                                {"hybrid_shard_zero2", ""},
                                {"hybrid_shard", "hybrid-shard"},
                                {"no_shard", "no-shard"}}) {
    if (words.find(word) == std::string::npos) continue;
    if (!*m)
      f.fail("fsdp", *n,
             "\"" + words +
                 "\": hybrid_shard_zero2 is not modelled (expected full_shard, "
                 "shard_grad_op, hybrid_shard or no_shard)");
    mode = m;
    break;
  }
  if (mode.empty())
    f.fail(
        "fsdp", *n,
        "\"" + words + "\" names no sharding (expected full_shard, shard_grad_op, hybrid_shard or no_shard)");
  f.use("fsdp", n, Field::fsdp, mode);
  if (words.find("offload") != std::string::npos)
    f.use("fsdp", n, Field::offload, "parameters", "offload: parameters, gradients and optimizer on the CPU");
}

// deepspeed: a path (relative to this file, as the launch directory usually is) or an inline mapping,
// read by the DeepSpeed reader; its explicit batch values must agree with TrainingArguments'.
void trainer_deepspeed(FromFields& f, FromReport& r, const ConfigNode& n) {
  const std::map<std::string, std::string> before = r.values;
  if (n.kind == ConfigNode::Kind::map) {
    read_deepspeed(n, r, "deepspeed.");
  } else {
    const std::string rel = f.text("deepspeed", n);
    const size_t slash = r.path.find_last_of('/');
    const std::string path =
        rel.empty() || rel[0] == '/' || slash == std::string::npos ? rel : r.path.substr(0, slash + 1) + rel;
    const std::string text = read_small_file(path, config_limit::k_file, r.path + ": deepspeed");
    const ConfigNode ds = parse_json_config(text, path);
    if (ds.kind != ConfigNode::Kind::map)
      throw Error(path, "is not a mapping of keys to values (expected a DeepSpeed config)");
    read_deepspeed(ds, r, rel + ":");
  }
  // transformers refuses a DeepSpeed value that contradicts TrainingArguments (deepspeed.py).
  for (const char* key : {"batch", "grad_accum", "precision"}) {
    const auto was = before.find(key);
    const auto now = r.values.find(key);
    if (was != before.end() && now != r.values.end() && was->second != now->second) {
      if (std::string(key) == "precision") continue;  // DeepSpeed's own mode (mixed-*) replaces autocast
      throw Error(r.path + ": deepspeed",
                  "sets " + flag_for(field_for_key(key)) + " " + now->second + " but TrainingArguments " +
                      was->second +
                      " (transformers refuses the mismatch; expected \"auto\" or the same value)");
    }
  }
}

}  // namespace

void read_trainer(const ConfigNode& root, FromReport& r) {
  FromFields f(root, r);
  const ConfigNode* ds = trainer_get(f, "deepspeed");
  if (ds && ds->kind == ConfigNode::Kind::scalar && (ds->text == "false" || ds->text == "null")) ds = nullptr;
  if (trainer_get(f, "model_name_or_path"))
    f.use_model("model_name_or_path");
  else
    r.notes.push_back("TrainingArguments name no model: the model is the one given by flags (--model)");
  trainer_peft(f);
  trainer_precision(f, ds != nullptr);
  for (const char* key : {"max_length", "max_seq_length"})
    if (const ConfigNode* n = trainer_get(f, key)) {
      f.use(key, n, Field::seq, f.text(key, *n), "SFTConfig's longest tokenized row");
      break;
    }
  const ConfigNode* batch = trainer_get(f, "per_device_train_batch_size");
  f.use("per_device_train_batch_size", batch, Field::batch,
        batch ? f.text("per_device_train_batch_size", *batch) : "8", batch ? "" : "transformers' default");
  if (const ConfigNode* n = trainer_get(f, "gradient_accumulation_steps"))
    f.use("gradient_accumulation_steps", n, Field::grad_accum, f.text("gradient_accumulation_steps", *n));
  if (trainer_true(f, "gradient_checkpointing"))
    f.use("gradient_checkpointing", f.get("gradient_checkpointing"), Field::checkpointing, "full");
  const bool ds_optimizer = ds && ds->kind == ConfigNode::Kind::map && ds->find("optimizer");
  if (!ds_optimizer) f.use_optimizer("optim");
  if (trainer_true(f, "adafactor"))
    f.use("adafactor", f.get("adafactor"), Field::optimizer, "adafactor", "the older adafactor switch");
  if (const ConfigNode* n = trainer_get(f, "attn_implementation")) {
    const std::string a = f.text("attn_implementation", *n);
    if (a == "eager")
      f.use("attn_implementation", n, Field::attention, "eager");
    else
      f.use("attn_implementation", n, Field::attention, "sdpa", "fused attention");
  }
  if (trainer_true(f, "use_liger_kernel"))
    f.use("use_liger_kernel", f.get("use_liger_kernel"), Field::loss, "fused",
          "Liger's fused linear cross-entropy");
  trainer_fsdp(f);
  if (ds) trainer_deepspeed(f, r, *ds);
  if (trainer_true(f, "torch_compile"))
    f.not_modelled("torch_compile", "true",
                   "compiled graphs fuse and free activations differently: not modelled");
  if (trainer_true(f, "activation_offloading"))
    f.not_modelled("activation_offloading", "true",
                   "activations kept on the CPU between forward and backward");
  for (const char* key : {"torch_empty_cache_steps", "ddp_bucket_cap_mb"})
    if (const ConfigNode* n = trainer_get(f, key))
      f.not_modelled(key, f.text(key, *n),
                     std::string(key) == "ddp_bucket_cap_mb"
                         ? "DDP's gradient buckets are counted at their default"
                         : "emptying the cache changes what is reserved, not used");
  if (trainer_true(f, "auto_find_batch_size"))
    f.not_modelled("auto_find_batch_size", "true",
                   "the trainer halves the batch after an out-of-memory error");
  const ConfigNode* strategy = trainer_get(f, "eval_strategy");
  if (!strategy) strategy = trainer_get(f, "evaluation_strategy");
  const bool evaluates = trainer_true(f, "do_eval") || (strategy && strategy->text != "no");
  if (const ConfigNode* n = trainer_get(f, "per_device_eval_batch_size"); n && evaluates)
    f.not_modelled("per_device_eval_batch_size", f.text("per_device_eval_batch_size", *n),
                   "evaluation steps are not planned");
  for (const char* pref : {"beta", "num_generations", "ref_model_init_kwargs"})
    if (const ConfigNode* n = trainer_get(f, pref))
      f.not_modelled(pref, n->kind == ConfigNode::Kind::scalar ? n->text : "",
                     "preference and RL training (chosen and rejected rows, reference models, generations) "
                     "is not modelled");
  f.known(trainer_known_keys());
  f.finish();
}

}  // namespace memplan::cli
