CUDA_VISIBLE_DEVICES=0,1,2 llama-server -m "m odel.gguf" -c 8192 -ngl all -ts 3/1 -fa -np 4 -ctk q8_0 2>&1 | tee log &
