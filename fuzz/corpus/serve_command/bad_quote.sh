vllm serve 'm
