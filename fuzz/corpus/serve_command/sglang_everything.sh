python -m sglang.launch_server --model-path x --tp-size 2 --context-length 8192 --kv-cache-dtype fp8_e5m2 --dp 2 --max-running-requests 64
