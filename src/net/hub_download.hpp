#pragma once
// A model on the Hugging Face Hub read without its weights: the file list and commit
// (/api/models/<repo>/revision/<rev>), config.json, model.safetensors.index.json, and each shard's
// header only, by HTTP range requests (8 bytes, then the header); for a GGUF repository its one
// .gguf file's header. What was read is written under memplan's cache in the hub cache layout
// (refs/<rev>, snapshots/<commit>/), each weights file as its header followed by a hole up to the
// file's real size (a sparse file), so the local readers read it back unchanged and offline.

#include <string>

#include "core/models/hf_cache.hpp"
#include "net/http_client.hpp"

namespace memplan::net {

struct HubSettings {
  std::string endpoint = "https://huggingface.co";  // HF_ENDPOINT
  std::string token;                                // HF_TOKEN: sent as a bearer token
  std::string cache_dir;                            // memplan's hub cache: $XDG_CACHE_HOME/memplan/hub
  static HubSettings from_environment();
};

// True when HF_HUB_OFFLINE asks for no network (1, ON, YES, TRUE, any case).
bool hub_offline_from_environment();

// Downloads the headers of `id` into settings.cache_dir and returns the snapshot folder. Throws
// memplan::Error with one clear line: gated or private (401/403), no such model or revision (404),
// no weights files, a hostile or broken response (wrong length, a header over the readers' limits).
std::string download_model_headers(HttpClient& http, const HubSettings& settings, const HubModelId& id);

}  // namespace memplan::net
