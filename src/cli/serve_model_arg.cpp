// The model argument of `vllm serve` / `sglang.launch_server --model-path` (serve_model_arg.hpp).
#include "cli/serve_model_arg.hpp"

namespace memplan::cli {
namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() > tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

ServeModelArg serve_model_arg(const ModelSpec& m, bool preset) {
  if (preset) {
    if (!m.hf_repo.empty()) return {m.hf_repo, std::nullopt};
    return {m.id, "no Hugging Face repository id is known for the preset " + m.id +
                      ": put the checkpoint's repository id or folder in its place in the flags"};
  }
  // A config.json or a safetensors file stands for the folder that holds it, which the engine loads.
  if (ends_with(m.id, ".json") || ends_with(m.id, ".safetensors")) {
    const size_t slash = m.id.find_last_of('/');
    return {slash == std::string::npos ? "." : m.id.substr(0, slash), std::nullopt};
  }
  if (m.id == "custom" || m.id == "mlp")
    return {"MODEL",
            std::string("the model was given by its size, not a checkpoint: MODEL in the flags stands "
                        "for its repository id or folder")};
  return {m.id, std::nullopt};  // a Hugging Face id, a folder or a GGUF file, as given
}

}  // namespace memplan::cli
