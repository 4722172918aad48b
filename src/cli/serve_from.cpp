// A serving command line into memplan flags (serve_from.hpp); the flag tables are in
// serve_from_flags.cpp, the run in serve_from_run.cpp.
#include "cli/serve_from.hpp"

#include <cctype>

#include <memplan/error.hpp>

#include "cli/from_fields.hpp"
#include "cli/options.hpp"
#include "core/base/terminal_text.hpp"
#include "core/base/text.hpp"

namespace memplan::cli {

namespace {

std::string base_name(const std::string& w) { return w.substr(w.find_last_of('/') + 1); }

bool is_number(const std::string& t) {
  if (t.size() < 2 || t[0] != '-') return false;
  for (size_t i = 1; i < t.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(t[i])) && t[i] != '.') return false;
  return true;
}

bool is_flag(const std::string& t) { return t.size() >= 2 && t[0] == '-' && !is_number(t); }

// Where the engine's own arguments start in `c`, and which engine; false when `c` starts none.
bool find_engine(const ShellCommand& c, ServeEngine& engine, size_t& start) {
  const std::vector<CommandWord>& w = c.words;
  for (size_t i = 0; i < w.size(); ++i) {
    const std::string& t = w[i].text;
    const std::string next = i + 1 < w.size() ? w[i + 1].text : "";
    if (base_name(t) == "vllm" && next == "serve") {
      engine = ServeEngine::vllm;
      start = i + 2;
      return true;
    }
    if (t == "-m" &&
        (next == "vllm.entrypoints.openai.api_server" || next == "vllm.entrypoints.api_server")) {
      engine = ServeEngine::vllm;
      start = i + 2;
      return true;
    }
    if (t == "-m" && (next == "sglang.launch_server" || next == "sglang_router.launch_server")) {
      engine = ServeEngine::sglang;
      start = i + 2;
      return true;
    }
    if (base_name(t) == "llama-server" || base_name(t) == "llama-server.exe") {
      engine = ServeEngine::llama_server;
      start = i + 1;
      return true;
    }
    if (t.rfind("vllm/vllm-openai", 0) == 0) {  // docker run ... vllm/vllm-openai:TAG --model ...
      engine = ServeEngine::vllm;
      start = i + 1;
      return true;
    }
    if (t.find("llama.cpp:server") != std::string::npos) {  // ghcr.io/ggml-org/llama.cpp:server
      engine = ServeEngine::llama_server;
      start = i + 1;
      return true;
    }
  }
  return false;
}

// The devices CUDA_VISIBLE_DEVICES lists ("0,1" -> 2), from the environment or a docker -e.
size_t visible_devices(const ShellCommand& c, size_t start, std::string& value) {
  auto it = c.env.find("CUDA_VISIBLE_DEVICES");
  if (it != c.env.end()) value = it->second;
  for (size_t i = 0; i + 1 < start && i + 1 < c.words.size(); ++i) {
    const std::string& t = c.words[i].text;
    std::string e = t == "-e" || t == "--env"   ? c.words[i + 1].text
                    : t.rfind("--env=", 0) == 0 ? t.substr(6)
                                                : "";
    if (e.rfind("CUDA_VISIBLE_DEVICES=", 0) == 0) value = e.substr(21);
  }
  if (value.empty() && it == c.env.end()) return 0;
  size_t n = 0;
  bool in = false;
  for (const char ch : value) {
    if (ch == ',') {
      in = false;
    } else if (!in && ch != ' ') {
      in = true;
      ++n;
    }
  }
  return n;
}

class ServeFromReader {
 public:
  ServeFromReader(ServeFrom& out, const std::string& path) : s_(out), r_(out.report), path_(path) {}

  void read(const ShellCommand& c, size_t start);

 private:
  [[noreturn]] void fail(const CommandWord& w, const std::string& message) const {
    throw Error(word_where(path_, w), message);
  }
  // Sets memplan's `flag`, checked by its plan rule where it is a plan option.
  void set(const CommandWord& w, const std::string& name, const std::string& written, const std::string& flag,
           const std::string& value, const std::string& note = "");
  void not_modelled(const std::string& name, const std::string& value, const std::string& why) {
    r_.not_modelled.push_back({name, value, "", why});
  }
  void apply(const EngineFlag& f, const CommandWord& w, const std::string& name, const std::string& value);
  void model(const CommandWord& w, const std::string& name, const std::string& value);

  ServeFrom& s_;
  FromReport& r_;
  const std::string& path_;
  bool model_seen_ = false;
};

void ServeFromReader::set(const CommandWord& w, const std::string& name, const std::string& written,
                          const std::string& flag, const std::string& value, const std::string& note) {
  for (const OptionSpec& o : plan_options()) {
    if (flag != o.flag || o.is_switch) continue;
    PlanValues scratch;
    try {
      parse_option(o, value, scratch);
    } catch (const Error& e) {
      fail(w, name + ": " + with_flags(e.message()) + " (read as " + flag + ")");
    }
  }
  for (MemplanFlag& m : s_.flags)
    if (m.flag == flag) {  // given twice: the engine's parser keeps the last
      m.value = value;
      r_.used.push_back({name, written, flag + (value.empty() ? "" : " " + value), note});
      return;
    }
  s_.flags.push_back({flag, value});
  r_.used.push_back({name, written, flag + (value.empty() ? "" : " " + value), note});
}

void ServeFromReader::model(const CommandWord& w, const std::string& name, const std::string& value) {
  model_seen_ = true;
  if (value.empty()) fail(w, name + ": needs the model (a Hugging Face id or a directory)");
  if (value[0] == '/' || value[0] == '.' || value[0] == '~') {
    set(w, name, value, "--safetensors", value, "a local model directory (its headers only)");
    return;
  }
  std::string note;
  const std::string m = model_for_repo(value, note);
  set(w, name, value, "--model", m, note);
}

void ServeFromReader::apply(const EngineFlag& f, const CommandWord& w, const std::string& name,
                            const std::string& value) {
  const std::string v = to_lower(value);
  switch (f.act) {
    case FlagAct::to:
      if (f.takes == FlagTakes::none) return set(w, name, "true", f.option, "");
      return set(w, name, value, f.option, value);
    case FlagAct::known:
      return;
    case FlagAct::not_modelled:
      if (f.takes == FlagTakes::maybe && (v == "false" || v == "off" || v == "0")) return;
      return not_modelled(name, f.takes == FlagTakes::none ? "true" : value, f.why);
    case FlagAct::model:
      return model(w, name, value);
    case FlagAct::gguf:
      model_seen_ = true;
      return set(w, name, value, "--gguf", value,
                 "the .gguf file, as the server's working directory sees it");
    case FlagAct::dtype:
      if (v == "auto") return;
      if (v == "bfloat16" || v == "bf16") return set(w, name, value, "--precision", "bf16");
      if (v == "float16" || v == "half" || v == "fp16") return set(w, name, value, "--precision", "fp16");
      if (v == "float32" || v == "float" || v == "fp32") return set(w, name, value, "--precision", "fp32");
      fail(w, name + ": \"" + terminal_field(value) + "\" is not auto, bfloat16, float16 or float32");
    case FlagAct::quantization:
      if (v == "awq" || v == "awq_marlin") return set(w, name, value, "--quantize", "awq-4bit");
      if (v == "gptq" || v == "gptq_marlin") return set(w, name, value, "--quantize", "gptq-4bit");
      if (v == "fp8") return set(w, name, value, "--quantize", "fp8");
      if (v == "bitsandbytes") return set(w, name, value, "--quantize", "nf4", "bitsandbytes 4-bit");
      return not_modelled(name, value, "a quantization memplan does not map: give --quantize");
    case FlagAct::vllm_kv:
      if (v == "auto") return;
      if (v == "fp8" || v == "fp8_e4m3" || v == "fp8_e5m2") return set(w, name, value, "--kv-format", "fp8");
      return not_modelled(name, value, "a KV-cache format memplan does not map: give --kv-format");
    case FlagAct::chunked_on:
      if (v == "false" || v == "0") return set(w, name, value, "--chunked-prefill", "off");
      return set(w, name, value.empty() ? "true" : value, "--chunked-prefill", "on");
    case FlagAct::chunked_off:
      return set(w, name, "true", "--chunked-prefill", "off");
    case FlagAct::flash_attn:
      if (v.empty() || v == "on" || v == "true" || v == "1")
        return set(w, name, value.empty() ? "true" : value, "--flash-attn", "");
      if (v == "off" || v == "false" || v == "0") return;
      return not_modelled(name, value, "auto: on where the backend has it; give --flash-attn when it is");
    case FlagAct::gpu_layers:
      if (v == "auto") return not_modelled(name, value, "auto: memplan finds the largest -ngl that fits");
      return set(w, name, value, "--n-gpu-layers", v == "all" ? "999" : value,
                 v == "all" ? "every layer" : "");
    case FlagAct::tensor_split: {
      std::string split = value;
      size_t shares = 1;
      for (char& ch : split)
        if (ch == '/' || ch == ',') {
          ch = ',';
          ++shares;
        }
      s_.split_gpus = shares;
      return set(w, name, value, "--tensor-split", split);
    }
    case FlagAct::cpu_moe:
      return set(w, name, "true", "--n-cpu-moe", "999", "every layer's experts on the CPU");
    case FlagAct::ctx_size:
      if (value == "0")
        return not_modelled(name, value, "0: the model's training context; give --ctx-size with that length");
      return set(w, name, value, "--ctx-size", value);
    case FlagAct::split_mode:
      if (v == "layer") return;
      return not_modelled(name, value, "memplan splits by layers (-sm layer)");
  }
}

void ServeFromReader::read(const ShellCommand& c, size_t start) {
  const std::vector<CommandWord>& w = c.words;
  const ServeEngine e = s_.engine;
  for (size_t k = start; k < w.size(); ++k) {
    const std::string& t = w[k].text;
    if (t == "--") continue;
    if (!is_flag(t)) {
      if (e == ServeEngine::vllm && !model_seen_ && k == start) {
        if (!w[k].unset.empty())
          fail(w[k],
               "$" + terminal_field(w[k].unset) + " is not set in the file (expected the model written out)");
        model(w[k], "model (positional)", t);  // vllm serve MODEL
        continue;
      }
      r_.not_read.push_back(t);
      continue;
    }
    std::string name = t, value;
    bool has_value = false;
    if (const size_t eq = t.find('='); eq != std::string::npos) {
      name = t.substr(0, eq);
      value = t.substr(eq + 1);
      has_value = true;
    }
    if (e == ServeEngine::vllm)  // vLLM's parser reads --max_model_len as --max-model-len
      for (size_t i = 2; i < name.size(); ++i)
        if (name[i] == '_') name[i] = '-';
    const EngineFlag* f = find_engine_flag(e, name);
    const bool next_is_value = k + 1 < w.size() && !is_flag(w[k + 1].text);
    if (!f) {
      if (!has_value && next_is_value) value = w[++k].text;
      r_.not_read.push_back(name);
      continue;
    }
    if (f->takes == FlagTakes::value && !has_value) {
      if (!next_is_value) fail(w[k], "needs a value (expected " + name + " VALUE)");
      value = w[++k].text;
    } else if (f->takes == FlagTakes::maybe && !has_value && next_is_value) {
      const std::string n = to_lower(w[k + 1].text);
      if (n == "on" || n == "off" || n == "auto" || n == "true" || n == "false") value = w[++k].text;
    } else if (f->takes == FlagTakes::none && has_value) {
      fail(w[k], "takes no value (expected " + name + " alone)");
    }
    if (!w[k].unset.empty() && f->act != FlagAct::known && f->act != FlagAct::not_modelled)
      fail(w[k], "$" + terminal_field(w[k].unset) +
                     " is not set in the file (expected its value written out, or " +
                     terminal_field(w[k].unset) + "=... on a line before the command)");
    apply(*f, w[k], name, value);
  }
}

const char* engine_name(ServeEngine e) {
  return e == ServeEngine::vllm ? "vllm" : e == ServeEngine::sglang ? "sglang" : "llama-server";
}

}  // namespace

ServeFrom read_serve_command(std::string_view text, const std::string& path) {
  const std::vector<ShellCommand> commands = split_commands(text, path);
  ServeFrom s;
  s.report.path = path;
  const ShellCommand* found = nullptr;
  size_t start = 0, more = 0;
  for (const ShellCommand& c : commands) {
    ServeEngine e;
    size_t at = 0;
    if (!find_engine(c, e, at)) continue;
    if (found) {
      ++more;
      continue;
    }
    found = &c;
    s.engine = e;
    start = at;
  }
  if (!found)
    throw Error(
        path,
        "is not a serving command line memplan reads (expected vllm serve MODEL ..., python -m "
        "vllm.entrypoints.openai.api_server ..., python -m sglang.launch_server ... or llama-server ...)");
  s.report.framework = engine_name(s.engine);
  s.command = s.engine == ServeEngine::llama_server ? "gguf-fit" : "serve";
  if (s.engine == ServeEngine::sglang) s.flags.push_back({"--engine", "sglang"});
  if (more)
    s.report.notes.push_back("the file holds " + std::to_string(more + 1) +
                             " engine commands: the first is read");
  std::string visible;
  s.visible_gpus = visible_devices(*found, start, visible);
  if (s.engine == ServeEngine::llama_server && s.visible_gpus)
    s.report.used.push_back(
        {"CUDA_VISIBLE_DEVICES", visible, "--gpu (one per device)",
         std::to_string(s.visible_gpus) + " GPUs: llama.cpp splits the layers over them"});
  else if (!visible.empty())
    s.report.notes.push_back("CUDA_VISIBLE_DEVICES=" + terminal_field(visible) + ": " +
                             std::to_string(s.visible_gpus) + (s.visible_gpus == 1 ? " GPU" : " GPUs") +
                             " visible; the engine uses tp x pp of them");
  ServeFromReader(s, path).read(*found, start);
  if (s.engine != ServeEngine::llama_server && s.visible_gpus) {
    uint64_t tp = 1, pp = 1;
    for (const MemplanFlag& m : s.flags) {
      if (m.flag == "--tp") tp = std::stoull(m.value);
      if (m.flag == "--pp") pp = std::stoull(m.value);
    }
    if (tp * pp > s.visible_gpus)
      s.report.notes.push_back("tp x pp = " + std::to_string(tp * pp) +
                               " GPUs but CUDA_VISIBLE_DEVICES shows " + std::to_string(s.visible_gpus) +
                               ": the engine would not start");
  }
  return s;
}

}  // namespace memplan::cli
