#pragma once
// Out-of-memory messages as PyTorch, vLLM and llama.cpp print them, read back into numbers, and
// what those numbers mean (oom_reading). Parsers take text, never a file: `why-oom` reads the
// file or stdin through the one bounded reader.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace memplan {

enum class OomKind {
  pytorch,               // "CUDA out of memory. Tried to allocate X ..." (both wordings)
  vllm_max_seq_len,      // "The model's max seq len (N) is larger than ... KV cache (M)" (V0 engine)
  vllm_kv_needed,        // "To serve at least one request ... (X KV cache is needed, ... (Y)" (V1 engine)
  vllm_no_cache_blocks,  // "No available memory for the cache blocks"
  llama_cpp,             // "cudaMalloc failed: out of memory" / "failed to allocate CUDA0 buffer of size N"
};

// Which llama.cpp buffer failed, from the function that reported it.
enum class LlamaBuffer { unknown, weights, kv_cache, compute };

struct OomMessage {
  OomKind kind = OomKind::pytorch;
  size_t line = 0;  // 1-based line of the input where it was found

  // PyTorch. Sizes as printed (two decimals of B/KiB/MiB/GiB), in bytes.
  std::optional<int> device;
  std::optional<uint64_t> requested;
  std::optional<uint64_t> total;      // "total capacity"
  std::optional<uint64_t> free;       // free on the device (cudaMemGetInfo), all processes counted
  std::optional<uint64_t> allocated;  // live tensors of this process
  std::optional<uint64_t> reserved;   // held by the caching allocator ("reserved in total" / "cached")
  std::optional<uint64_t> reserved_unallocated;          // newer wording: reserved but not allocated
  std::optional<uint64_t> process_in_use;                // "this process has X memory in use"
  std::vector<std::pair<uint64_t, uint64_t>> processes;  // "Process PID has X memory in use": pid, bytes
  bool older_wording = false;                            // "(GPU 0; ... total capacity; ...)"
  bool cached_wording = false;                           // the oldest: "X cached" for what is now "reserved"

  // vLLM
  uint64_t max_seq_len = 0;
  uint64_t kv_tokens = 0;                // tokens the KV cache could hold (V0)
  std::optional<uint64_t> kv_needed;     // V1: KV cache one max-length request needs
  std::optional<uint64_t> kv_available;  // V1: KV cache memory left
  uint64_t estimated_max_len = 0;        // V1: the length that would fit

  // llama.cpp
  std::optional<uint64_t> buffer_bytes;  // exact when "of size N" was printed, else the MiB figure
  std::string buffer_device;             // "CUDA0", or "device 3"
  LlamaBuffer buffer = LlamaBuffer::unknown;
};

// At most this many distinct messages are kept (issue 32: a log of 300,000 distinct ones); the
// messages after are counted in `omitted`, not kept.
constexpr size_t k_max_oom_messages = 100;

// Every distinct out-of-memory message in `text`, in order (a repeated one counted once), the first
// k_max_oom_messages of them; `omitted` receives how many messages after those were not kept.
std::vector<OomMessage> parse_oom_messages(std::string_view text, size_t* omitted = nullptr);

// "2.26 GiB" / "0 bytes" / "781.59 MiB" -> bytes (rounded to the nearest byte); nullopt if `s` does
// not start with a size. `used` receives the characters read.
std::optional<uint64_t> parse_printed_size(std::string_view s, size_t* used = nullptr);

// What a PyTorch message's numbers mean, each derived from the printed ones.
struct OomReading {
  std::optional<uint64_t> reserved_unallocated;  // given, or reserved - allocated
  std::optional<uint64_t> available;            // free + reserved_unallocated: the most one request could get
  std::optional<uint64_t> shortfall;            // requested - available, when positive
  std::optional<uint64_t> outside_allocator;    // total - free - reserved: CUDA contexts and other processes
  std::optional<uint64_t> other_processes;      // total - free - this process (when it is printed)
  std::optional<uint64_t> process_non_pytorch;  // this process - reserved: its CUDA context, NCCL, cuBLAS
  bool request_exceeds_gpu = false;             // requested > total: no setting makes it fit
  bool fragmentation = false;            // the cache held enough, or a large share, but not in one piece
  bool free_but_failed = false;          // free >= requested: something other than memory size
  bool allocated_exceeds_total = false;  // more allocated than the GPU has (shared / unified memory)
};

OomReading read_pytorch_oom(const OomMessage& m);

}  // namespace memplan
