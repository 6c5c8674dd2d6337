"""The checks of lesson 00, check your setup."""

import re

import torch

from utils import setup_advice

from .core import _expect, _expect_callable, _letter, _register, _say, _Wrong

_SETUP_KAGGLE = dict(driver_cuda=None, torch_cuda="12.6", cuda_available=False, service="Kaggle")


@_register("setup.kaggle-no-gpu", hint="setup.kaggle-no-gpu/hint")
def _setup_kaggle_no_gpu(kaggle, prediction):
    _expect(kaggle, dict, "kaggle")
    if kaggle.get("service") != "Kaggle":
        raise _Wrong("setup.kaggle-no-gpu/service", got=repr(kaggle.get("service")))
    if kaggle.get("cuda_available") is not False:
        raise _Wrong("setup.kaggle-no-gpu/cuda-available", got=repr(kaggle.get("cuda_available")))
    if kaggle.get("driver_cuda") is not None:
        raise _Wrong("setup.kaggle-no-gpu/driver", got=repr(kaggle.get("driver_cuda")))
    torch_cuda = kaggle.get("torch_cuda")
    if torch_cuda is None:
        raise _Wrong("setup.kaggle-no-gpu/build")
    try:
        said = setup_advice(**kaggle)
    except (TypeError, ValueError) as err:
        raise _Wrong("setup.kaggle-no-gpu/refused", error=f"{type(err).__name__}: {err}") from None
    if said != setup_advice(**_SETUP_KAGGLE):  # the facts above decide it; this guards the rest
        raise _Wrong("setup.kaggle-no-gpu/other-advice")
    letter = _letter(prediction, "prediction", "setup.kaggle-no-gpu/choice", "abcd")
    if letter != "b":
        raise _Wrong("setup.kaggle-no-gpu/prediction", got=letter)


def _setup_tag(value, what):
    """A build tag ("cu118") from "cu118", "+cu118", "11.8", "CUDA 11.8" or 11.8; None (or "None") stays
    None; anything else is wrong."""
    if value is None:
        return None
    if isinstance(value, float):
        value = repr(value)
    if isinstance(value, str):
        text = "".join(value.split()).lower().lstrip("+").removeprefix("cuda")
        if text == "none":
            return None
        if re.fullmatch(r"cu\d{3}", text):
            return text
        found = re.fullmatch(r"(\d+)\.(\d)", text)
        if found:
            return f"cu{found[1]}{found[2]}"
    raise _Wrong("setup.old-driver/not-a-tag", what=what, got=repr(value))


def _setup_release(value):
    """A release as written in the advice ("2.7", "2.7.*", "torch==2.7.*", "PyTorch 2.7", 2.7), as text."""
    if isinstance(value, float):
        value = repr(value)
    _expect(value, str, 'lab_server["newest release"]')
    text = "".join(value.split()).lower()
    for prefix in ("pytorch", "torch", "==", "v"):
        text = text.removeprefix(prefix)
    return text


_SETUP_LAB_KEYS = ("build of 2.13", "newest release", "build of 2.7.1", "why")


@_register("setup.old-driver", hint="setup.old-driver/hint")
def _setup_old_driver(lab_server):
    _expect(lab_server, dict, "lab_server")
    missing = [k for k in _SETUP_LAB_KEYS if k not in lab_server]
    if missing:
        raise _Wrong("setup.old-driver/missing", names=", ".join(f'"{k}"' for k in missing))
    build_213 = _setup_tag(lab_server["build of 2.13"], 'lab_server["build of 2.13"]')
    if build_213 is not None:
        raise _Wrong("setup.old-driver/build-of-2.13", got=build_213)
    release = lab_server["newest release"]
    if not re.fullmatch(r"2\.7(\.[0-9*x]+)?", _setup_release(release)):
        raise _Wrong("setup.old-driver/release", got=release)
    build_27 = _setup_tag(lab_server["build of 2.7.1"], 'lab_server["build of 2.7.1"]')
    if build_27 != "cu118":
        key = "setup.old-driver/cuda-12" if build_27 in ("cu126", "cu128") else "setup.old-driver/build-of-2.7"
        raise _Wrong(key, got=build_27)
    why = _letter(lab_server["why"], 'lab_server["why"]', "setup.old-driver/choice", "abc")
    if why != "a":
        raise _Wrong(f"setup.old-driver/why-{why}")


# (version, older than 2.4?, the message key for a wrong answer)
_SETUP_VERSIONS = [
    ("2.3.1+cu121", True, "setup.too-old/release"),
    ("2.4.0", False, "setup.too-old/release"),
    ("1.13.1", True, "setup.too-old/release"),
    ("2.13.0+cpu", False, "setup.too-old/as-text"),
    ("2.10.0", False, "setup.too-old/as-text"),
    ("2.14.0a0+git1234", False, "setup.too-old/release"),
    ("3.0.0", False, "setup.too-old/major"),
]


@_register("setup.too-old", hint="setup.too-old/hint")
def _setup_too_old(torch_too_old, version_advice):
    _expect_callable(torch_too_old, "torch_too_old")
    _expect_callable(version_advice, "version_advice")
    for version, old, key in _SETUP_VERSIONS:
        try:
            said = torch_too_old(version)
        except Exception as err:  # int("0a0"), a split that finds too few parts, ...
            raise _Wrong("setup.too-old/raised", case=version, error=f"{type(err).__name__}: {err}") from None
        said = _expect(said, bool, f'torch_too_old("{version}")')
        if said != old:
            older = "setup.too-old/older-than" if old else "setup.too-old/not-older-than"
            raise _Wrong(key, case=version, said=said, what=_say(older))
    for version in ("2.3.1+cu121", "2.1.0"):
        advice = version_advice(version)
        if not isinstance(advice, str) or not advice.strip():
            raise _Wrong("setup.too-old/advice-old", case=version, got=repr(advice))
    for version in ("2.13.0", torch.__version__):
        advice = version_advice(version)
        if advice is not None:
            raise _Wrong("setup.too-old/advice-new", case=version, got=repr(advice))
    return {"version": torch.__version__}
