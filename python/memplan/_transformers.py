"""A live transformers model or config to memplan: its config.json, never its weights."""

import json
import os
import tempfile

from ._commands import run_json
from ._errors import InputError

_COMMANDS = ("estimate", "fit", "max-batch", "advise", "serve")


def _config_dict(config_or_model):
    """The config.json content of a PretrainedConfig, of a PreTrainedModel (its .config) or of a dict."""
    if isinstance(config_or_model, dict):
        return config_or_model
    config = getattr(config_or_model, "config", None)
    if config is not None and hasattr(config, "to_dict"):
        config_or_model = config  # a model: only its config is read, never a parameter
    if hasattr(config_or_model, "to_dict"):
        d = config_or_model.to_dict()
        if isinstance(d, dict):
            return d
    raise InputError("from_transformers: expected a transformers PretrainedConfig, a PreTrainedModel "
                     f"or a dict, not a {type(config_or_model).__name__}", 2)


def _json_value(value):
    # to_dict() may keep a torch.dtype (torch.bfloat16): config.json writes "bfloat16".
    text = str(value)
    return text[len("torch."):] if text.startswith("torch.") else text


def from_transformers(config_or_model, command="estimate", **options):
    """memplan ``command`` (estimate, fit, max-batch, advise or serve) for a transformers model:
    its config is written as a config.json to a temporary folder and passed as ``--config``; the
    other keywords are the command's flags. Returns the command's JSON as a dict.

        >>> model = AutoModelForCausalLM.from_pretrained("...")
        >>> memplan.from_transformers(model, "fit", mode="infer", seq=4096, gpu="rtx-4090")
    """
    command = command.replace("_", "-")
    if command not in _COMMANDS:
        raise InputError(f"from_transformers: {command!r} is not a command (expected one of: {', '.join(_COMMANDS)})", 2)
    for taken in ("config", "model", "safetensors", "gguf", "params"):
        if options.get(taken) is not None:
            raise InputError(f"from_transformers: {taken}= given too (the model is the object passed)", 2)
    text = json.dumps(_config_dict(config_or_model), default=_json_value)
    with tempfile.TemporaryDirectory(prefix="memplan-") as folder:
        path = os.path.join(folder, "config.json")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return run_json(command, dict(options, config=path))
