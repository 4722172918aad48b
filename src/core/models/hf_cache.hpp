#pragma once
// Hugging Face model ids ("org/name", "org/name@revision") and the local hub cache, laid out as the
// huggingface_hub library writes it:
//   <cache>/models--<org>--<name>/refs/<revision>      a file holding the commit hash
//   <cache>/models--<org>--<name>/snapshots/<commit>/  config.json, *.safetensors, *.gguf, ...
// Offline: reads directories and one small refs file, never the network.

#include <optional>
#include <string>
#include <string_view>

namespace memplan {

struct HubModelId {
  std::string org;
  std::string name;
  std::string revision = "main";  // a branch, tag or commit hash
  std::string repo() const { return org + "/" + name; }
};

// "meta-llama/Llama-3.1-8B" or "...@revision"; nullopt when `text` is not shaped like one (no '/',
// several, an empty part, a character the Hub does not allow, or an existing local path's shape "./x").
std::optional<HubModelId> parse_hub_model_id(std::string_view text);

// The environment values that choose the cache directory (empty = unset).
struct HubCacheEnv {
  std::string hf_hub_cache;           // HF_HUB_CACHE
  std::string huggingface_hub_cache;  // HUGGINGFACE_HUB_CACHE (the older name)
  std::string hf_home;                // HF_HOME: its hub/ folder
  std::string xdg_cache_home;         // XDG_CACHE_HOME: huggingface/hub under it
  std::string home;                   // HOME: .cache/huggingface/hub under it
  static HubCacheEnv from_environment();
};

// HF_HUB_CACHE, else HUGGINGFACE_HUB_CACHE, else HF_HOME/hub, else XDG_CACHE_HOME/huggingface/hub,
// else ~/.cache/huggingface/hub (huggingface_hub's own order).
std::string hub_cache_dir(const HubCacheEnv& env);

// The commit hash a refs file holds (`text`: its bytes; trailing newline, CR and spaces dropped), or
// Error naming `ref_path` when it is not 40 lower-case hexadecimal digits.
std::string parse_ref_file(std::string_view text, const std::string& ref_path);

// The snapshot folder of `id` in `cache_dir`, or nullopt when the cache does not hold it (no repo
// folder, no such ref, or the ref's commit has no snapshot). Throws Error for a refs file that is
// not a commit hash, and for a refs file, snapshot or entry of it that links outside `cache_dir`.
std::optional<std::string> find_cached_snapshot(const std::string& cache_dir, const HubModelId& id);

}  // namespace memplan
