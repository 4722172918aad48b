vllm serve m ${A
