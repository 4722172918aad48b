llama-server -m model.gguf --mcp-servers-config mcp.json
