python3 -m vllm.entrypoints.openai.api_server --model=org/m --max_model_len 32k --enable-chunked-prefill=False -q awq --kv-cache-dtype fp8
