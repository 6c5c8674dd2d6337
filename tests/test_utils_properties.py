"""Property-based tests: every helper of utils.py answers bad arguments with a clear error."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import utils

not_an_int = st.one_of(
    st.floats(allow_nan=True), st.text(), st.none(), st.booleans(), st.lists(st.integers(), max_size=2),
    st.complex_numbers(), st.binary(max_size=4), st.just(torch.tensor(0)),
)
settings.register_profile("series", max_examples=60, deadline=None)
settings.load_profile("series")


@given(not_an_int)
def test_try_gpu_raises_type_error_for_anything_but_an_int(bad):
    with pytest.raises(TypeError, match="must be an int"):
        utils.try_gpu(bad)


@given(st.integers(max_value=-1))
def test_try_gpu_raises_value_error_for_any_negative_index(bad):
    with pytest.raises(ValueError, match="0 or more"):
        utils.try_gpu(bad)


@given(st.integers(min_value=0, max_value=10**6), st.integers(min_value=0, max_value=16))
def test_try_gpu_returns_that_gpu_or_the_cpu_for_any_index(i, n_gpus):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(torch.cuda, "device_count", lambda: n_gpus)
        mp.setattr(torch.cuda, "is_available", lambda: n_gpus > 0)
        mp.setattr(torch.backends.mps, "is_available", lambda: False)
        expected = torch.device(f"cuda:{i}") if i < n_gpus else torch.device("cpu")
        assert utils.try_gpu(i) == expected
        assert utils.try_all_gpus() == ([torch.device(f"cuda:{k}") for k in range(n_gpus)] or [torch.device("cpu")])


@given(st.one_of(st.integers(), st.text(), st.none(), st.lists(st.integers()), st.just(torch.ones(2))))
def test_model_device_raises_type_error_for_anything_but_a_module(bad):
    with pytest.raises(TypeError, match=r"nn\.Module"):
        utils.model_device(bad)


@given(st.sampled_from([nn.ReLU(), nn.Identity(), nn.Sequential(), nn.Dropout(), nn.Flatten()]))
def test_model_device_raises_value_error_for_a_module_without_tensors(module):
    with pytest.raises(ValueError, match="no parameters or buffers"):
        utils.model_device(module)


@given(st.text().filter(lambda t: not __import__("re").fullmatch(r"\d+\.\d+", t)))
def test_setup_advice_rejects_any_malformed_version(bad):
    with pytest.raises(ValueError, match="not a CUDA version"):
        utils.setup_advice(driver_cuda=bad, torch_cuda=None, cuda_available=False)
    with pytest.raises(ValueError, match="not a CUDA version"):
        utils.setup_advice(driver_cuda=None, torch_cuda=bad, cuda_available=True)


@given(st.one_of(st.integers(), st.floats(), st.lists(st.integers()), st.booleans()))
def test_setup_advice_rejects_a_version_that_is_not_a_string(bad):
    with pytest.raises(TypeError, match="CUDA version is a string"):
        utils.setup_advice(driver_cuda=bad, torch_cuda=None, cuda_available=False)


@given(st.sampled_from(sorted(utils.PYTORCH_CUDA_BUILDS)), st.integers(min_value=10, max_value=14),
       st.integers(min_value=0, max_value=9), st.one_of(st.none(), st.sampled_from(["12.6", "12.8", "13.0", "13.2"])))
def test_setup_advice_never_names_a_build_the_release_lacks_or_the_driver_cannot_run(release, major, minor, built):
    """Whatever the driver and the build, a suggested cuXYZ is one that the release the command
    installs publishes, of a CUDA major version the driver serves, and the command pins a release:
    this one, or an older one when this one has no build the driver runs."""
    re = __import__("re")
    version = f"{release[0]}.{release[1]}.0"
    advice = utils.setup_advice(driver_cuda=f"{major}.{minor}", torch_cuda=built, cuda_available=False,
                                torch_version=version)
    if "pip install" not in (advice or ""):
        assert not re.findall(r"\bcu\d{3}\b", advice or ""), advice
        return
    pinned = re.search(r'pip install "?torch==(\d+)\.(\d+)(\.0|\.\*)"? --index-url \S+/whl/(cu\d{3})$', advice)
    assert pinned, advice
    installs = (int(pinned[1]), int(pinned[2]))
    assert installs == release if pinned[3] == ".0" else installs < release, advice
    publishes = {"cu" + b.replace(".", ""): int(b.split(".")[0]) for b in utils.PYTORCH_CUDA_BUILDS[installs]}
    for tag in re.findall(r"\bcu\d{3}\b", advice):
        assert tag in publishes and publishes[tag] <= major, (advice, tag)
