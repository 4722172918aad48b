vllm serve m --tp $(cat x)
