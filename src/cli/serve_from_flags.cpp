// The serving engines' flags as data: what each one sets in memplan, or why it is not modelled.
// Sources: vLLM's engine arguments (vllm/engine/arg_utils.py, docs/configuration/engine_args.md),
// SGLang's server arguments (python/sglang/srt/server_args.py, docs/advanced_features/server_arguments.md),
// llama.cpp's server README (tools/server/README.md, common/arg.cpp).
#include <cstring>

#include "cli/serve_from.hpp"

namespace memplan::cli {

namespace {

using A = FlagAct;
using T = FlagTakes;

const char* const k_graphs = "CUDA graphs' capture sizes: the graph pool is counted at the engine's default";
const char* const k_draft = "a draft model and its KV cache (speculative decoding) are not counted";
const char* const k_lora = "LoRA adapter slots are not counted";
const char* const k_replicas =
    "data-parallel replicas: each holds the same per-GPU budget (memplan plans one replica)";
const char* const k_experts = "experts split across GPUs, not tensor slices: the per-GPU weights differ";

const std::vector<EngineFlag> k_vllm = {
    {"--model", T::value, A::model, "", ""},
    {"-tp --tensor-parallel-size", T::value, A::to, "--tp", ""},
    {"-pp --pipeline-parallel-size", T::value, A::to, "--pp", ""},
    {"--max-model-len", T::value, A::to, "--max-model-len", ""},
    {"--gpu-memory-utilization", T::value, A::to, "--gpu-memory-utilization", ""},
    {"--max-num-seqs", T::value, A::to, "--max-num-seqs", ""},
    {"--max-num-batched-tokens", T::value, A::to, "--max-num-batched-tokens", ""},
    {"--block-size", T::value, A::to, "--block-size", ""},
    {"--enable-chunked-prefill", T::maybe, A::chunked_on, "", ""},
    {"--no-enable-chunked-prefill", T::none, A::chunked_off, "", ""},
    {"--kv-cache-dtype", T::value, A::vllm_kv, "", ""},
    {"--dtype", T::value, A::dtype, "", ""},
    {"-q --quantization", T::value, A::quantization, "", ""},
    {"--cpu-offload-gb", T::value, A::not_modelled, "", "weights offloaded to the CPU are not subtracted"},
    {"--enforce-eager", T::maybe, A::not_modelled, "",
     "eager mode keeps no CUDA graph pool: counted as with graphs"},
    {"--enable-lora", T::maybe, A::not_modelled, "", k_lora},
    {"--speculative-config --num-speculative-tokens --speculative-model", T::value, A::not_modelled, "",
     k_draft},
    {"-dp --data-parallel-size", T::value, A::not_modelled, "", k_replicas},
    {"--enable-expert-parallel -ep", T::maybe, A::not_modelled, "", k_experts},
    {"--limit-mm-per-prompt --mm-processor-kwargs", T::value, A::not_modelled, "",
     "the multimodal encoder's profiling inputs are counted at vLLM's default"},
    {"--max-seq-len-to-capture --cuda-graph-sizes --compilation-config -O", T::value, A::not_modelled, "",
     k_graphs},
    {"--kv-transfer-config --kv-offloading-size --kv-offloading-backend", T::value, A::not_modelled, "",
     "KV-cache transfer or offload is not modelled"},
    {"--hf-overrides --rope-scaling --override-neuron-config", T::value, A::not_modelled, "",
     "changes to the model's config are not applied"},
    {"--disable-sliding-window", T::maybe, A::not_modelled, "",
     "sliding-window layers keep the whole context: counted with the window"},
    {"--swap-space --max-loras --max-lora-rank --max-cpu-loras --lora-modules --host --port "
     "--served-model-name "
     "--api-key --tokenizer --revision --tokenizer-revision --code-revision --download-dir --load-format "
     "--seed "
     "--chat-template --chat-template-content-format --tool-call-parser --tool-parser-plugin "
     "--reasoning-parser "
     "--uvicorn-log-level --distributed-executor-backend --tokenizer-mode --config-format --max-logprobs "
     "--root-path --response-role --ssl-keyfile --ssl-certfile --ssl-ca-certs --allowed-origins "
     "--allowed-methods --allowed-headers --generation-config --override-generation-config "
     "--guided-decoding-backend --task --runner --convert --middleware --otlp-traces-endpoint --hf-token "
     "--max-parallel-loading-workers --worker-cls --model-impl --structured-outputs-config "
     "--logits-processor-pattern --api-server-count --data-parallel-address --data-parallel-rpc-port "
     "--data-parallel-size-local --data-parallel-start-rank --log-config-file --tokenizer-pool-size "
     "--max-log-len --uds --lora-dtype --long-lora-scaling-factors --preemption-mode --scheduling-policy "
     "--num-scheduler-steps --collect-detailed-traces --show-hidden-metrics-for-version "
     "--reasoning-parser-plugin --seed",
     T::value, A::known, "", ""},
    {"--trust-remote-code --disable-log-requests --disable-log-stats --enable-log-requests "
     "--enable-auto-tool-choice --enable-prefix-caching --no-enable-prefix-caching "
     "--disable-custom-all-reduce "
     "--disable-frontend-multiprocessing --enable-sleep-mode --enable-reasoning "
     "--enable-prompt-tokens-details "
     "--disable-fastapi-docs --enable-request-id-headers --return-tokens-as-token-ids "
     "--enable-server-load-tracking --headless --skip-tokenizer-init --disable-async-output-proc "
     "--async-scheduling --enable-force-include-usage --enable-log-outputs --disable-uvicorn-access-log "
     "--calculate-kv-scales --enable-auto-tool-choice --use-v2-block-manager --worker-use-ray "
     "--ray-workers-use-nsight --disable-log-stats --enable-tokenizer-info-endpoint",
     T::maybe, A::known, "", ""},
};

const std::vector<EngineFlag> k_sglang = {
    {"--model-path --model", T::value, A::model, "", ""},
    {"--tp-size --tp --tensor-parallel-size", T::value, A::to, "--tp", ""},
    {"--pp-size --pp --pipeline-parallel-size", T::value, A::to, "--pp", ""},
    {"--mem-fraction-static", T::value, A::to, "--mem-fraction-static", ""},
    {"--max-total-tokens", T::value, A::to, "--max-total-tokens", ""},
    {"--chunked-prefill-size", T::value, A::to, "--chunked-prefill-size", ""},
    {"--context-length", T::value, A::to, "--context-length", ""},
    {"--kv-cache-dtype", T::value, A::to, "--kv-cache-dtype", ""},
    {"--cuda-graph-max-bs", T::value, A::to, "--cuda-graph-max-bs", ""},
    {"--dtype", T::value, A::dtype, "", ""},
    {"--quantization", T::value, A::quantization, "", ""},
    {"--dp-size --dp --data-parallel-size", T::value, A::not_modelled, "", k_replicas},
    {"--ep-size --ep --expert-parallel-size", T::value, A::not_modelled, "", k_experts},
    {"--enable-ep-moe --enable-deepep-moe", T::none, A::not_modelled, "", k_experts},
    {"--max-running-requests", T::value, A::not_modelled, "",
     "the request slots (req_to_token pool) are counted at SGLang's default"},
    {"--max-prefill-tokens --page-size", T::value, A::not_modelled, "", "counted at SGLang's default"},
    {"--disable-cuda-graph", T::none, A::not_modelled, "", "no CUDA graphs: counted as with graphs"},
    {"--cuda-graph-bs", T::value, A::not_modelled, "", k_graphs},
    {"--enable-dp-attention", T::none, A::not_modelled, "", "data-parallel attention is not modelled"},
    {"--enable-torch-compile", T::none, A::not_modelled, "", "torch.compile's buffers are not counted"},
    {"--speculative-algorithm --speculative-draft-model-path --speculative-num-steps "
     "--speculative-eagle-topk "
     "--speculative-num-draft-tokens",
     T::value, A::not_modelled, "", k_draft},
    {"--lora-paths --max-loras-per-batch --max-lora-rank", T::value, A::not_modelled, "", k_lora},
    {"--cpu-offload-gb", T::value, A::not_modelled, "", "weights offloaded to the CPU are not subtracted"},
    {"--json-model-override-args", T::value, A::not_modelled, "",
     "changes to the model's config are not applied"},
    {"--host --port --served-model-name --tokenizer-path --log-level --log-level-http --api-key "
     "--grammar-backend "
     "--chat-template --reasoning-parser --tool-call-parser --random-seed --dist-init-addr --nnodes "
     "--node-rank "
     "--device --load-format --download-dir --revision --tokenizer-mode --watchdog-timeout --schedule-policy "
     "--schedule-conservativeness --attention-backend --sampling-backend --model-impl --stream-interval "
     "--decode-log-interval --num-continuous-decode-steps --mm-attention-backend --tokenizer-worker-num "
     "--file-storage-path --base-gpu-id --gpu-id-step --prefill-attention-backend --decode-attention-backend "
     "--moe-runner-backend --load-balance-method",
     T::value, A::known, "", ""},
    {"--trust-remote-code --disable-overlap-schedule --enable-metrics --skip-tokenizer-init --log-requests "
     "--show-time-cost --disable-radix-cache --enable-cache-report --disable-custom-all-reduce "
     "--enable-multimodal --is-embedding --enable-memory-saver --enable-mixed-chunk "
     "--disable-cuda-graph-padding "
     "--enable-p2p-check --allow-auto-truncate --enable-nan-detection --enable-hierarchical-cache",
     T::none, A::known, "", ""},
};

const std::vector<EngineFlag> k_llama = {
    {"-m --model", T::value, A::gguf, "", ""},
    {"-hf -hfr --hf-repo -hff --hf-file -mu --model-url -dr --docker-repo", T::value, A::not_modelled, "",
     "a model the server downloads: give its file with --gguf (or --model)"},
    {"-c --ctx-size", T::value, A::ctx_size, "", ""},
    {"-ngl --gpu-layers --n-gpu-layers", T::value, A::gpu_layers, "", ""},
    {"-ub --ubatch-size", T::value, A::to, "--ubatch-size", ""},
    {"-ctk --cache-type-k", T::value, A::to, "--cache-type-k", ""},
    {"-ctv --cache-type-v", T::value, A::to, "--cache-type-v", ""},
    {"-fa --flash-attn", T::maybe, A::flash_attn, "", ""},
    {"--swa-full", T::none, A::to, "--swa-full", ""},
    {"--no-op-offload", T::none, A::to, "--no-op-offload", ""},
    {"-ncmoe --n-cpu-moe", T::value, A::to, "--n-cpu-moe", ""},
    {"-cmoe --cpu-moe", T::none, A::cpu_moe, "", ""},
    {"-ts --tensor-split", T::value, A::tensor_split, "", ""},
    {"-mm --mmproj", T::value, A::to, "--mmproj", ""},
    {"-np --parallel", T::value, A::to, "--parallel", ""},
    {"-kvu --kv-unified", T::none, A::to, "--kv-unified", ""},
    {"-sm --split-mode", T::value, A::split_mode, "", ""},
    {"-nkvo --no-kv-offload", T::none, A::not_modelled, "",
     "the KV cache stays on the host: the GPUs hold none of it"},
    {"-ot --override-tensor", T::value, A::not_modelled, "",
     "tensors moved to other buffers are not followed"},
    {"--lora --lora-scaled --control-vector --control-vector-scaled", T::value, A::not_modelled, "",
     "LoRA adapters and control vectors are not counted"},
    {"-md --model-draft -hfd -hfrd --hf-repo-draft", T::value, A::not_modelled, "", k_draft},
    {"-fit --fit", T::value, A::not_modelled, "",
     "llama.cpp shrinks the -c and -ngl left unset until they fit: memplan plans the values given"},
    {"-dev --device", T::value, A::not_modelled, "", "the devices used: give the GPUs with --gpu"},
    {"--no-mmproj-offload", T::none, A::not_modelled, "",
     "the projector stays on the CPU: memplan counts it on the first GPU"},
    {"--moe-cache-mib -ncffn --n-cpu-ffn", T::value, A::not_modelled, "", "counted as if absent"},
    {"-b --batch-size -t --threads -tb --threads-batch --host --port -a --alias --api-key --api-key-file "
     "--chat-template --chat-template-file -n --n-predict --predict --temp --temperature --top-k --top-p "
     "--min-p "
     "--repeat-penalty --repeat-last-n -s --seed --log-file --path --timeout -to --threads-http --keep "
     "--rope-scaling --rope-scale --rope-freq-base --rope-freq-scale --yarn-orig-ctx -mg --main-gpu "
     "--reasoning-format --reasoning-budget --pooling --ssl-key-file --ssl-cert-file --slot-save-path --prio "
     "--poll -lv --verbosity --log-verbosity -sps --slot-prompt-similarity --cache-reuse --override-kv "
     "--chat-template-kwargs -cram --cache-ram --numa -ctkd -ctvd --cache-type-k-draft --cache-type-v-draft "
     "-cd --ctx-size-draft -ngld --gpu-layers-draft --n-gpu-layers-draft --draft-max --draft-min --draft "
     "--samplers --media-path -lm --load-mode -fitt --fit-target -fitc --fit-ctx --models-dir --models-max "
     "--tools --webui-config --mmproj-hf --mmproj-url",
     T::value, A::known, "", ""},
    {"--embedding --embeddings --reranking --rerank --jinja --no-jinja --metrics --slots --no-slots "
     "--cont-batching -cb -nocb --no-cont-batching --no-webui -v --verbose --log-verbose --log-disable "
     "--no-warmup --mlock --no-mmap --no-perf --props --log-colors --log-prefix "
     "--log-timestamps -e --escape --no-escape --offline --check-tensors --context-shift --no-context-shift "
     "-fa-off --repack -nr --no-repack --no-host --no-mmproj",
     T::none, A::known, "", ""},
};

}  // namespace

const std::vector<EngineFlag>& engine_flags(ServeEngine e) {
  return e == ServeEngine::vllm ? k_vllm : e == ServeEngine::sglang ? k_sglang : k_llama;
}

const EngineFlag* find_engine_flag(ServeEngine e, const std::string& name) {
  for (const EngineFlag& f : engine_flags(e)) {
    const char* p = f.names;
    while (*p) {
      const char* end = std::strchr(p, ' ');
      const size_t n = end ? static_cast<size_t>(end - p) : std::strlen(p);
      if (n == name.size() && name.compare(0, n, p, n) == 0) return &f;
      if (!end) break;
      p = end + 1;
    }
  }
  return nullptr;
}

}  // namespace memplan::cli
