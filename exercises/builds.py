"""The checks of lesson 15, which PyTorch build fits your GPU."""

import re
import shlex

from utils import _has_kernels_for

from .core import _expect, _letter, _register, _Wrong

# What the checks know of PyTorch 2.13's CUDA builds for x86-64 (RELEASE.md): CUDA major version
# and the GPU code of each. cu126 runs Maxwell to Hopper; the CUDA 13 builds Turing to Blackwell.
_BUILDS_213 = {
    "cu126": (12, ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]),
    "cu130": (13, ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]),
    "cu132": (13, ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]),
}
# (GPU, compute capability), (the CUDA major version the driver serves, whether it runs Blackwell: 570+)
_BUILDS_CASES = {
    "V100, driver serving CUDA 12.2": (("V100", (7, 0)), (12, False)),
    "V100, driver 580": (("V100", (7, 0)), (13, True)),
    "RTX 5090, driver serving CUDA 12.2": (("RTX 5090", (12, 0)), (12, False)),
    "RTX 5090, driver 580": (("RTX 5090", (12, 0)), (13, True)),
}


def _builds_tag(value, what, key):
    """A build tag such as "cu126" from the learner's text: "cu126", "CU126", "+cu126", "12.6", "CUDA 12.6"
    or 12.6 (None, and "None", stay None), or _Wrong(key)."""
    if value is None:
        return None
    text = repr(value) if isinstance(value, float) else value
    if isinstance(text, str):
        text = "".join(text.split()).lower().lstrip("+").removeprefix("cuda")
        if text == "none":
            return None
        if re.fullmatch(r"cu\d{3}", text):
            return text
        version = re.fullmatch(r"(\d+)\.(\d)", text)
        if version:
            return f"cu{version[1]}{version[2]}"
    raise _Wrong(key, what=what, got=repr(value))


def _builds_why_not(build, gpu, driver):
    """Why ``build`` fails for this GPU and driver: (message key, fields), or None when it works."""
    (name, capability), (serves, runs_blackwell) = gpu, driver
    if build not in _BUILDS_213:
        return "builds.which-build/not-published", {}
    major, archs = _BUILDS_213[build]
    if major > serves:
        return "builds.which-build/driver", {"major": major}
    if capability[0] >= 10 and not runs_blackwell:
        return "builds.which-build/gpu-driver", {"gpu": name}
    if not _has_kernels_for(capability, archs):
        return "builds.which-build/gpu", {"gpu": name, "cc": f"{capability[0]}.{capability[1]}"}
    return None


@_register("builds.which-build", hint="builds.which-build/hint")
def _builds_which_build(build, command):
    _expect(build, dict, "build")
    missing = [case for case in _BUILDS_CASES if case not in build]
    if missing:
        raise _Wrong("builds.which-build/missing", names=", ".join(f'"{c}"' for c in missing))
    for case, (gpu, driver) in _BUILDS_CASES.items():
        got = _builds_tag(build[case], f'build["{case}"]', "builds.which-build/not-a-tag")
        if got is None:
            if any(_builds_why_not(b, gpu, driver) is None for b in _BUILDS_213):
                raise _Wrong("builds.which-build/none-fits", case=case)
            continue
        why = _builds_why_not(got, gpu, driver)
        if why is not None:
            key, fields = why
            raise _Wrong(key, case=case, got=got, **fields)
    _builds_judge_command(command, "cu126")


def _builds_judge_command(command, want):
    """Raise _Wrong unless ``command`` is a pip command that installs torch==2.13.0 from the ``want`` index."""
    _expect(command, str, "command")
    try:
        words = shlex.split(command.strip().removeprefix("!"))
    except ValueError:
        raise _Wrong("builds.which-build/command-not-pip") from None
    starts = [i for i in range(len(words) - 1) if re.fullmatch(r"[%!]?pip3?", words[i].rsplit("/", 1)[-1])
              and words[i + 1] == "install"]  # %pip, a notebook's magic, too
    if not starts:
        raise _Wrong("builds.which-build/command-not-pip")
    rest = words[starts[0] + 2:]
    wanted = [w for w in rest if re.match(r"torch(\W|$)", w)]
    if not wanted:
        raise _Wrong("builds.which-build/command-not-pip")
    # ==2.13.0, ==2.13, ==2.13.*, and ~=2.13.0, which PEP 440 reads as ==2.13.*
    pins = [re.fullmatch(r"torch(?:==2\.13(?:\.0|\.\*)?|~=2\.13\.0)(?:\+(?P<build>cu\d+|cpu))?", "".join(w.split()))
            for w in wanted]
    pin = next((p for p in pins if p), None)  # "torch == 2.13.0" in quotes pins it too
    release = r"torch(==|~=)\d+\.\d+(\.\d+|\.\*)?(\+\w+)?"  # a pin, of another release
    other = next((w for w in wanted if re.fullmatch(release, "".join(w.split()))), None)
    if pin is None and other is not None:
        raise _Wrong("builds.which-build/command-other-release", got=other)
    if pin is None:
        raise _Wrong("builds.which-build/command-unpinned", got=" ".join(wanted))
    if pin["build"] is not None and pin["build"] != want:  # torch==2.13.0+cu130: another build than the index's
        raise _Wrong("builds.which-build/command-other-build", got=pin[0], build=pin["build"], want=want)
    index = None
    for i, word in enumerate(rest):
        if word in ("--index-url", "-i") and i + 1 < len(rest):
            index = rest[i + 1]
        elif word.startswith("--index-url="):
            index = word.split("=", 1)[1]
    if index is None:
        raise _Wrong("builds.which-build/command-no-index")
    if index.rstrip("/") != f"https://download.pytorch.org/whl/{want}":
        raise _Wrong("builds.which-build/command-index", got=index, want=want)


_BUILDS_ARCH_FITS = {"GTX 1080": True, "RTX 4090": True, "H100": True, "RTX 5090": False}
# The CUDA builds of PyTorch, oldest first: the first with Blackwell code is cu128 (2.7).
_BUILDS_TAGS = ("cu118", "cu121", "cu124", "cu126", "cu128", "cu129", "cu130", "cu132")


@_register("builds.arch-list", hint="builds.arch-list/hint")
def _builds_arch_list(fits, oldest_build):
    _expect(fits, dict, "fits")
    missing = [gpu for gpu in _BUILDS_ARCH_FITS if gpu not in fits]
    if missing:
        raise _Wrong("builds.arch-list/missing", names=", ".join(f'"{g}"' for g in missing))
    fits = {gpu: _expect(fits[gpu], bool, f'fits["{gpu}"]') for gpu in _BUILDS_ARCH_FITS}
    wrong = [gpu for gpu, right in _BUILDS_ARCH_FITS.items() if fits[gpu] != right]
    if wrong:
        raise _Wrong("builds.arch-list/wrong", names=", ".join(wrong))
    tag = _builds_tag(oldest_build, "oldest_build", "builds.arch-list/not-a-tag")
    if tag not in _BUILDS_TAGS:
        raise _Wrong("builds.arch-list/not-a-build", got=repr(oldest_build))
    if _BUILDS_TAGS.index(tag) < _BUILDS_TAGS.index("cu128"):
        raise _Wrong("builds.arch-list/build-older", got=tag)
    if tag != "cu128":
        raise _Wrong("builds.arch-list/build-newer", got=tag)


@_register("builds.found-version", hint="builds.found-version/hint")
def _builds_found_version(driver_serves, pip_installed, fix):
    if isinstance(driver_serves, float) or (isinstance(driver_serves, int) and not isinstance(driver_serves, bool)):
        driver_serves = repr(driver_serves)  # 12.4 is "12.4"; 12040 is "12040", which the check explains
    _expect(driver_serves, str, "driver_serves")
    if "".join(driver_serves.split()).lower().removeprefix("cuda") != "12.4":
        raise _Wrong("builds.found-version/driver", got=driver_serves)
    if isinstance(pip_installed, float) and pip_installed.is_integer():
        pip_installed = int(pip_installed)  # 13.0
    elif isinstance(pip_installed, str) and pip_installed.strip().isdigit():
        pip_installed = int(pip_installed)  # "13"
    pip_installed = _expect(pip_installed, int, "pip_installed")
    if pip_installed != 13:
        key = "builds.found-version/runs" if pip_installed <= 12 else "builds.found-version/installed"
        raise _Wrong(key, got=pip_installed)
    if not isinstance(fix, str):
        raise _Wrong("builds.found-version/choice", got=repr(fix))
    letter = _letter(fix, "fix", "builds.found-version/choice")  # "A" and "a)" are a too
    if letter != "a":
        raise _Wrong(f"builds.found-version/fix-{letter}")
