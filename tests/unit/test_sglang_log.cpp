// read_sglang_log: the figures of SGLang's start-up lines, in the forms its versions print them.
#include <catch2/catch.hpp>

#include "core/serving/sglang_log.hpp"

using memplan::read_sglang_log;

TEST_CASE("read_sglang_log: weights, free memory, tokens and the pool (0.4.x lines)", "[sglang_log]") {
  const auto f = read_sglang_log(
      "[2025-03-08 12:29:13 TP0] Load weight begin. avail mem=21.63 GB\n"
      "[2025-03-08 12:29:21 TP0] Load weight end. type=Qwen2ForCausalLM, dtype=torch.bfloat16, avail "
      "mem=6.09 GB, "
      "mem usage=15.54 GB.\n"
      "[2025-03-08 12:29:21 TP0] KV Cache is allocated. #tokens: 46611, K size: 1.42 GB, V size: 1.42 GB\n"
      "[2025-03-08 12:29:28 TP0] Capture cuda graph end. Time elapsed: 7.23 s. avail mem=0.53 GB. mem "
      "usage=0.93 GB.\n"
      "[2025-03-08 12:29:29 TP0] max_total_num_tokens=46611, chunked_prefill_size=2048, "
      "context_len=131072\n");
  CHECK(*f.free_before_gib == Approx(21.63));
  CHECK(*f.free_after_gib == Approx(6.09));
  CHECK(*f.weights_gib == Approx(15.54));  // not the CUDA graph's "mem usage" on its own line
  CHECK(*f.kv_tokens == 46611);
  CHECK(*f.pool_gib == Approx(2.84));
  CHECK(*f.context_len == 131072);
  CHECK_FALSE(f.mem_fraction_static);
}

TEST_CASE("read_sglang_log: MLA's one KV size, tokens from max_total_num_tokens, the ServerArgs fraction",
          "[sglang_log]") {
  const auto f = read_sglang_log(
      "server_args=ServerArgs(model_path='x', mem_fraction_static=0.88, max_total_tokens=None)\n"
      "[TP0] KV Cache is allocated. KV size: 53.31 GB\n"
      "[TP0] max_total_num_tokens=2,795,207, max_prefill_tokens=16384\n");
  CHECK(*f.pool_gib == Approx(53.31));
  CHECK(*f.kv_tokens == 2795207);
  CHECK(*f.mem_fraction_static == Approx(0.88));
  CHECK_FALSE(f.weights_gib);
  CHECK(read_sglang_log("INFO vllm: # GPU blocks: 1952\n").empty());
}
