// Ollama's layer placement by version (see ollama_placement.hpp).
#include "core/serving/ollama_placement.hpp"

#include <algorithm>
#include <cstdlib>
#include <numeric>

#include <memplan/error.hpp>
#include "core/base/checked.hpp"
#include "core/models/gguf_mix.hpp"

namespace memplan {

OllamaVersion parse_ollama_version(const std::string& text) {
  OllamaVersion v;
  v.text = text;
  std::string s = text;
  if (!s.empty() && (s[0] == 'v' || s[0] == 'V')) s.erase(0, 1);
  uint64_t part[3] = {0, 0, 0};
  size_t at = 0;
  int n = 0;
  bool ok = !s.empty();
  while (ok && at < s.size() && n < 3) {
    size_t end = at;
    while (end < s.size() && s[end] >= '0' && s[end] <= '9') ++end;
    if (end == at || end - at > 6) {
      ok = false;
      break;
    }
    part[n++] = std::strtoull(s.substr(at, end - at).c_str(), nullptr, 10);
    if (end == s.size()) {
      at = end;
      break;
    }
    if (s[end] == '-') {  // a release candidate: "0.12.11-rc0" follows 0.12.11's code
      at = s.size();
      break;
    }
    if (s[end] != '.') ok = false;
    at = end + 1;
  }
  if (!ok || n < 2 || at < s.size())
    throw Error("Ollama version", "\"" + text + "\" is not a version (expected e.g. 0.5.4 or 0.13.0)");
  v.major = part[0];
  v.minor = part[1];
  v.patch = part[2];
  if (v.major == 0 && v.minor < 2)
    throw Error("Ollama version",
                "\"" + text + "\" is older than 0.2.0 (memplan follows Ollama's estimator from 0.2.0 on)");
  return v;
}

OllamaRule ollama_rule(const OllamaVersion& v) {
  auto key = [](uint64_t a, uint64_t b, uint64_t c) { return (a << 40) | (b << 20) | c; };
  const uint64_t k = key(v.major, v.minor, v.patch);
  if (k < key(0, 7, 0)) return OllamaRule::memory_go_forward;
  if (k < key(0, 12, 11)) return OllamaRule::memory_go_backward;
  if (k < key(0, 30, 0)) return OllamaRule::layout;
  return OllamaRule::llama_server_fit;
}

const char* ollama_rule_source(OllamaRule r) {
  switch (r) {
    case OllamaRule::memory_go_forward:
      return "llm/memory.go EstimateGPULayers (Ollama v0.2.0-v0.6.8)";
    case OllamaRule::memory_go_backward:
      return "llm/memory.go estimateGPULayers (Ollama v0.7.0-v0.12.10)";
    case OllamaRule::layout:
      return "llm/server.go llamaServer.Load and buildLayout (Ollama v0.12.11-v0.25)";
    case OllamaRule::llama_server_fit:
      break;
  }
  return "llm/llama_server.go: upstream llama-server picks -ngl itself (Ollama v0.30.0 and later)";
}

namespace {

struct OllamaLayers {
  std::vector<uint64_t> blk;  // GroupLayers "blk.N" sizes
  uint64_t output = 0;        // output_norm + (output, else token_embd)
};

OllamaLayers ollama_group_layers(const GgufFile& g, uint64_t n_layers) {
  OllamaLayers l;
  l.blk.assign(n_layers, 0);
  uint64_t norm = 0, output = 0, token_embd = 0;
  bool has_output = false;
  for (const GgufTensor& t : g.tensors) {
    const int64_t layer = gguf_tensor_layer(t.name);
    const std::string group = t.name.substr(0, t.name.find('.'));
    if (layer >= 0 && static_cast<uint64_t>(layer) < n_layers)
      l.blk[static_cast<size_t>(layer)] = checked_add(l.blk[static_cast<size_t>(layer)], t.bytes);
    else if (group == "output_norm")
      norm = checked_add(norm, t.bytes);
    else if (group == "output") {
      output = checked_add(output, t.bytes);
      has_output = true;
    } else if (group == "token_embd")
      token_embd = checked_add(token_embd, t.bytes);
  }
  l.output = checked_add(norm, has_output ? output : token_embd);
  return l;
}

// memory.go: GPUs that can hold the overhead, the graph, the minimum and two layers; then each
// layer goes to gpusWithSpace[i % j], a GPU that is full leaving the list; the output layer last.
OllamaPlacement place_memory_go(const OllamaPlacementRequest& req, OllamaPlacement p, const OllamaLayers& L) {
  const size_t n_gpu = req.free_bytes.size();
  const uint64_t n = L.blk.size();
  uint64_t partial = p.graph.partial_offload, full = p.graph.full_offload;
  if (req.metal)
    partial = full;  // "on metal there's no partial offload overhead"
  else if (n_gpu > 1)
    full = partial;  // "multigpu should always use the partial graph size"
  const uint64_t graph_max = std::max(partial, full);
  const uint64_t overhead = req.gpu_overhead;
  p.allocations.assign(n_gpu, 0);
  p.split.assign(n_gpu, 0);
  std::vector<size_t> with_space;
  for (size_t i = 0; i < n_gpu; ++i) {
    const uint64_t gzo = with_space.empty() ? req.projector_bytes : 0;
    const uint64_t need = overhead + gzo + graph_max + req.minimum_bytes + 2 * p.layer_buffer;
    if (req.free_bytes[i] < need) continue;
    with_space.push_back(i);
    p.allocations[i] += req.minimum_bytes + p.layer_buffer;
  }
  if (!with_space.empty()) p.allocations[with_space[0]] += req.projector_bytes;
  uint64_t count = 0;
  auto place_layer = [&](uint64_t i) {
    const uint64_t size = checked_add(L.blk[i], p.graph.kv[i]);
    if (req.num_gpu >= 0 && count >= static_cast<uint64_t>(req.num_gpu)) return;
    for (size_t j = with_space.size(); j > 0; --j) {
      const size_t at = static_cast<size_t>(i % j);
      const size_t g = with_space[at];
      if (req.free_bytes[g] > overhead + p.allocations[g] + graph_max + size) {
        p.allocations[g] += size;
        ++p.split[g];
        ++count;
        return;
      }
      with_space.erase(with_space.begin() + static_cast<long>(at));
    }
  };
  if (req.rule == OllamaRule::memory_go_forward)
    for (uint64_t i = 0; i < n; ++i) place_layer(i);
  else
    for (uint64_t i = n; i-- > 0;) place_layer(i);
  bool fully = count >= n;
  if (L.output > 0) {
    if (req.num_gpu < 0 || count < static_cast<uint64_t>(req.num_gpu)) {
      for (size_t j = with_space.size(); j > 0; --j) {
        const size_t g = with_space[static_cast<size_t>(count % j)];
        if (req.free_bytes[g] > overhead + p.allocations[g] + graph_max + L.output) {
          p.allocations[g] += L.output;
          ++p.split[g];
          ++count;
          break;
        }
      }
    }
    if (count < n + 1) fully = false;
  }
  p.graph_used = fully ? full : partial;
  for (size_t i = 0; i < n_gpu; ++i)
    if (p.split[i]) p.allocations[i] += p.graph_used;
  p.layers = count;
  return p;
}

struct OllamaGpuLayers {
  size_t device;               // index into the sorted GPU list
  std::vector<size_t> layers;  // layer indices
};

using OllamaLayout = std::vector<OllamaGpuLayers>;

uint64_t ollama_layout_sum(const OllamaLayout& l) {
  uint64_t s = 0;
  for (const OllamaGpuLayers& g : l) s += g.layers.size();
  return s;
}

// greedyFit: from the last layer down, onto the last GPU of the list until it is full, then
// the one before it; each GPU holds capacity x its free memory (float32, as Ollama computes).
OllamaLayout ollama_greedy_fit(const std::vector<uint64_t>& layers, const std::vector<uint64_t>& free,
                               size_t n_gpus, float capacity, long requested) {
  size_t device = n_gpus - 1;
  OllamaLayout out{{device, {}}};
  uint64_t space = static_cast<uint64_t>(static_cast<float>(free[device]) * capacity);
  for (size_t i = layers.size(); i-- > 0;) {
    if (requested >= 0 && layers.size() - 1 - i >= static_cast<uint64_t>(requested)) break;
    for (;;) {
      if (layers[i] <= space) {
        out.front().layers.insert(out.front().layers.begin(), i);
        space -= layers[i];
        break;
      }
      if (device == 0) return out;
      --device;
      out.insert(out.begin(), OllamaGpuLayers{device, {}});
      space = static_cast<uint64_t>(static_cast<float>(free[device]) * capacity);
    }
  }
  return out;
}

// findBestFit: the smallest capacity that still fits as many layers as capacity 1 does.
OllamaLayout ollama_best_fit(const std::vector<uint64_t>& layers, const std::vector<uint64_t>& free,
                             size_t n_gpus, long requested, bool force) {
  float high = 1, low = 0;
  if (requested >= 0 && force) high = 1000;
  OllamaLayout best = ollama_greedy_fit(layers, free, n_gpus, high, requested);
  const uint64_t most = ollama_layout_sum(best);
  while (high - low > 1e-6f) {
    const float mid = (low + high) / 2;
    OllamaLayout a = ollama_greedy_fit(layers, free, n_gpus, mid, requested);
    if (ollama_layout_sum(a) == most) {
      high = mid;
      best = std::move(a);
    } else {
      low = mid;
    }
  }
  return best;
}

// assignLayers: as few GPUs as possible, then without the output layer if not everything fits.
OllamaLayout ollama_assign(std::vector<uint64_t> layers, const std::vector<uint64_t>& free, long requested,
                           size_t last_used) {
  OllamaLayout out;
  for (int round = 0; round < 2; ++round) {
    if (requested >= 0) requested = std::min(requested, static_cast<long>(layers.size()));
    for (size_t i = last_used; i < free.size(); ++i) {
      out = ollama_best_fit(layers, free, i + 1, requested, i == free.size() - 1);
      const uint64_t sum = ollama_layout_sum(out);
      if (sum == layers.size() || (requested >= 0 && sum == static_cast<uint64_t>(requested))) break;
    }
    if (ollama_layout_sum(out) == layers.size() || layers.empty()) return out;
    layers.pop_back();
  }
  return out;
}

OllamaPlacement place_layout(const OllamaPlacementRequest& req, OllamaPlacement p, const OllamaLayers& L) {
  const size_t n_gpu = req.free_bytes.size();
  const uint64_t n = L.blk.size();
  uint64_t partial = p.graph.partial_offload, full = p.graph.full_offload;
  if (req.metal) partial = full;
  // llamaServer.Load: one layer's weights and KV set aside on every GPU, the projector on the first.
  std::vector<uint64_t> free = req.free_bytes;
  for (size_t i = 0; i < n_gpu; ++i) {
    free[i] = free[i] > p.layer_buffer ? free[i] - p.layer_buffer : 0;
    if (i == 0) free[i] = free[i] > req.projector_bytes ? free[i] - req.projector_bytes : 0;
  }
  std::vector<uint64_t> layers(n + 1);
  for (uint64_t i = 0; i < n; ++i) layers[i] = checked_add(L.blk[i], p.graph.kv[i]);
  layers[n] = L.output;
  // buildLayout sorts by free memory, largest first.
  std::vector<size_t> order(n_gpu);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return free[a] > free[b]; });
  std::vector<uint64_t> graph(n_gpu, 0);  // per sorted GPU
  OllamaLayout layout;
  for (;;) {
    std::vector<uint64_t> avail(n_gpu);
    size_t last_used = 0;
    for (size_t k = 0; k < n_gpu; ++k) {
      if (graph[k]) last_used = k;
      const uint64_t reserved = req.minimum_bytes + req.gpu_overhead + graph[k];
      avail[k] = free[order[k]] > reserved ? free[order[k]] - reserved : 0;
    }
    const OllamaLayout next = n_gpu ? ollama_assign(layers, avail, req.num_gpu, last_used) : OllamaLayout{};
    const bool grew = next.size() > layout.size();
    layout = next;
    if (!grew) break;
    for (const OllamaGpuLayers& g : layout) graph[g.device] = std::max(partial, full);
  }
  p.split.assign(n_gpu, 0);
  p.allocations.assign(n_gpu, 0);
  const uint64_t sum = ollama_layout_sum(layout);
  p.graph_used = sum < n + 1 ? partial : full;
  for (const OllamaGpuLayers& g : layout) {
    const size_t gpu = order[g.device];
    p.split[gpu] += g.layers.size();
    for (size_t l : g.layers) p.allocations[gpu] += layers[l];
    p.allocations[gpu] += p.graph_used;
  }
  p.layers = sum;
  return p;
}

}  // namespace

OllamaPlacement place_ollama(const OllamaPlacementRequest& req) {
  if (!req.graph.weights) throw Error("ollama", "placement needs the model's tensors");
  OllamaPlacement p;
  p.graph = ollama_graph_size(req.graph);
  const OllamaLayers L = ollama_group_layers(*req.graph.weights, req.graph.arch.layers);
  p.model_layers = req.graph.arch.layers + 1;
  p.output_bytes = L.output;
  p.layer_buffer = L.blk.empty() ? 0 : checked_add(L.blk[0], p.graph.kv[0]);
  if (req.free_bytes.empty() || req.rule == OllamaRule::llama_server_fit) return p;
  if (req.rule == OllamaRule::layout) return place_layout(req, p, L);
  return place_memory_go(req, p, L);
}

}  // namespace memplan
