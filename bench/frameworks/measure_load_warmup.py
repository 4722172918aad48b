"""The bytes transformers' caching_allocator_warmup allocates for a bitsandbytes 4-bit load.

Runs transformers' own get_total_byte_count (modeling_utils.py, transformers 5.24.0) over a meta
model built from a config.json with the bnb 4-bit quantizer's preprocess_model (its Linear4bit
layers), as from_pretrained does before it warms the allocator up; no GPU and no weights are needed.
memplan's rule (src/core/memory/weight_load.cpp) is checked against the figure it prints:

    bench/frameworks/.venv/bin/python bench/frameworks/measure_load_warmup.py DIR_WITH_CONFIG_JSON
    memplan estimate --config DIR/config.json --lora 16 --quantize nf4 --precision bf16 --format json
        # its "load": {"warmup_bytes": ...}
"""
import sys

import torch
from transformers import AutoConfig, AutoModelForCausalLM, BitsAndBytesConfig
from transformers.modeling_utils import get_total_byte_count, local_torch_dtype
from transformers.quantizers import AutoHfQuantizer


def main() -> None:
    """Prints each device's warm-up bytes for the config.json in sys.argv[1]."""
    config = AutoConfig.from_pretrained(sys.argv[1])
    quantizer = AutoHfQuantizer.from_config(
        BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=torch.bfloat16)
    )
    # from_pretrained builds the model and runs preprocess_model inside local_torch_dtype(dtype), so
    # the Linear4bit layers' biases are made in the load format.
    with torch.device("meta"), local_torch_dtype(torch.bfloat16):
        model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
        quantizer.preprocess_model(model, device_map={"": 0}, keep_in_fp32_modules=[])
    device_map = {name: torch.device("cuda", 0) for name, _ in model.named_parameters()}
    for device, count in get_total_byte_count(model, device_map, quantizer).items():
        print(f"{device}: {int(count)} B")


if __name__ == "__main__":
    main()
