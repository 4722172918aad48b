f() { vllm serve m; }
