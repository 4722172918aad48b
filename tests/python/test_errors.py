"""Errors are typed, and carry the command line's own line."""

import pytest

import memplan


def cli_error_line(cli, *args):
    code, out, err = cli.run(*args, "--format", "json")
    assert code == 2 and out == ""
    line = err.strip().splitlines()[-1]
    assert line.startswith("memplan: error: ")
    return line[len("memplan: error: "):]


def test_bad_value_is_input_error_with_the_cli_line(cli):
    expected = cli_error_line(cli, "estimate", "--model", "llama-3-8b", "--seq", "abc")
    with pytest.raises(memplan.InputError) as e:
        memplan.estimate(model="llama-3-8b", seq="abc")
    assert str(e.value) == expected and "--seq" in expected
    assert isinstance(e.value, ValueError) and isinstance(e.value, memplan.MemplanError)
    assert e.value.code == 2


def test_unknown_model_is_input_error(cli):
    expected = cli_error_line(cli, "fit", "--model", "llama-9-8b", "--gpu", "t4")
    with pytest.raises(memplan.InputError, match="llama-9-8b") as e:
        memplan.fit(model="llama-9-8b", gpu="t4")
    assert str(e.value) == expected


def test_flag_of_another_command_names_those_that_take_it(cli):
    # the command line: "... --zero (--zero: an option of estimate, fit, ..., not of serve)"
    takers = cli_error_line(cli, "serve", "--model", "llama-3-8b", "--zero", "3").split("an option of ")[1]
    with pytest.raises(memplan.InputError) as e:
        memplan.serve(model="llama-3-8b", zero=3)
    assert str(e.value).startswith("memplan.serve: unknown keyword 'zero'")
    assert str(e.value).endswith("; a flag of " + takers)


def test_unknown_keyword_names_it():
    with pytest.raises(memplan.InputError, match=r"unknown keyword 'seqq'.*did you mean 'seq'"):
        memplan.estimate(model="llama-3-8b", seqq=2048)
    with pytest.raises(memplan.InputError, match="'effective_batch'"):
        memplan.estimate(model="llama-3-8b", effective_batch=32)  # a max-batch flag


def test_keywords_the_functions_set_themselves():
    with pytest.raises(memplan.InputError, match="format"):
        memplan.estimate(model="gpt2", format="table")


def test_switch_takes_a_bool():
    with pytest.raises(memplan.InputError, match="--keep-logits is a switch"):
        memplan.estimate(model="gpt2", keep_logits="yes")


def test_unsupported_value_type():
    with pytest.raises(memplan.InputError, match="seq="):
        memplan.estimate(model="gpt2", seq={"a": 1})


def test_local_gpu_without_a_device(cli):
    # --gpu local reads the GPU through NVML: without one, exit 3 and DeviceError; with one, an answer.
    code, out, err = cli.run("estimate", "--model", "gpt2", "--gpu", "local", "--format", "json")
    if code == 3:
        with pytest.raises(memplan.DeviceError) as e:
            memplan.estimate(model="gpt2", gpu="local")
        assert e.value.code == 3 and isinstance(e.value, RuntimeError)
        assert str(e.value) == err.strip().splitlines()[-1].replace("memplan: error: ", "", 1)
    else:
        assert code == 0
        assert memplan.estimate(model="gpt2", gpu="local")["breakdown"]
