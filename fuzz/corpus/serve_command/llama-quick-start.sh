./llama-server -m models/7B/ggml-model.gguf -c 2048
