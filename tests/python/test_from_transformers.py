"""from_transformers reads a live config (or a model's .config) and never a weight. transformers is
not installed here: the fakes have what memplan uses of it, to_dict() and .config."""

import json
import os

import pytest

import memplan
from conftest import DATA

CONFIG = os.path.join(DATA, "hf_configs", "Meta-Llama-3-8B.json")


class FakeDtype:
    """What to_dict() may hold instead of a string: a torch.dtype prints as torch.bfloat16."""

    def __str__(self):
        return "torch.bfloat16"


class FakeConfig:
    def __init__(self, d):
        self._d = d

    def to_dict(self):
        return dict(self._d)


class FakeModel:
    """A PreTrainedModel's surface: .config, and weights that must not be read."""

    def __init__(self, config):
        self.config = config

    def parameters(self):
        raise AssertionError("from_transformers read the weights")

    state_dict = named_parameters = parameters


def config_dict():
    with open(CONFIG, encoding="utf-8") as f:
        return json.load(f)


def strip_path(result):
    """The JSON names the config file it read; the helper's is a temporary one."""
    text = json.dumps(result)
    for path in (CONFIG,):
        text = text.replace(json.dumps(path)[1:-1], "CONFIG")
    return json.loads(text)


def with_temp_path_as_config(result):
    text = json.dumps(result)
    import re
    return json.loads(re.sub(r"/[^\"]*memplan-[^\"/]*/config\.json", "CONFIG", text))


def expected(cli, *args):
    return strip_path(cli.json("estimate", "--config", CONFIG, *args))


def test_config_equals_the_cli_on_its_config_json(cli):
    got = memplan.from_transformers(FakeConfig(config_dict()), mode="infer", seq=2048, batch=4)
    assert with_temp_path_as_config(got) == expected(cli, "--mode", "infer", "--seq", "2048", "--batch", "4")


def test_model_reads_only_its_config(cli):
    model = FakeModel(FakeConfig(config_dict()))
    got = memplan.from_transformers(model, "fit", mode="infer", seq=4096, gpu=["rtx-4090", "a100-80gb"])
    want = strip_path(cli.json("fit", "--config", CONFIG, "--mode", "infer", "--seq", "4096",
                               "--gpu", "rtx-4090,a100-80gb"))
    assert with_temp_path_as_config(got) == want


def test_torch_dtype_object_is_written_as_its_name(cli):
    d = config_dict()
    assert d["torch_dtype"] == "bfloat16"
    d["torch_dtype"] = FakeDtype()
    got = memplan.from_transformers(FakeConfig(d), precision="amp-bf16", seq=1024)
    assert with_temp_path_as_config(got) == expected(cli, "--precision", "amp-bf16", "--seq", "1024")


def test_refusals():
    with pytest.raises(memplan.InputError, match="PretrainedConfig"):
        memplan.from_transformers(42)
    with pytest.raises(memplan.InputError, match="model="):
        memplan.from_transformers(FakeConfig(config_dict()), model="gpt2")
    with pytest.raises(memplan.InputError, match="not a command"):
        memplan.from_transformers(FakeConfig(config_dict()), "gpus")
    with pytest.raises(memplan.InputError, match="unknown keyword 'sequence'"):
        memplan.from_transformers(FakeConfig(config_dict()), sequence=2048)
