# a pasted command with a quote left open
vllm serve meta-llama/Meta-Llama-3-8B \
  --max-model-len "8192
