"""The checks of lesson 01, computing devices."""

import contextlib
import numbers
from types import SimpleNamespace

import torch

from utils import try_all_gpus, try_gpu

from .core import _expect, _expect_callable, _letter, _register, _say, _Wrong

# PyTorch's words when a CUDA build finds no usable GPU (c10/cuda/CUDAFunctions.cpp).
# ... and when the driver is older than the build's CUDA (cudaErrorInsufficientDriver with a driver
# version above 0, in device_count_impl).
_DEVICES_OLD_DRIVER = ("The NVIDIA driver on your system is too old (found version 11040). Please update your GPU "
                       "driver by downloading and installing a new version from the URL: "
                       "http://www.nvidia.com/Download/index.aspx Alternatively, go to: https://pytorch.org to "
                       "install a PyTorch version that has been compiled with your version of the CUDA driver.")
_DEVICES_NO_DRIVER = ("Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and "
                      "installed a driver from http://www.nvidia.com/Download/index.aspx")


@contextlib.contextmanager
def _devices_simulated(n_cuda=0, usable=None, current=0, memory=()):
    """Make torch.cuda answer as a machine with ``n_cuda`` CUDA GPUs would, for checking code on any machine.

    ``usable`` is what ``torch.cuda.is_available()`` says (by default: there are GPUs; False with GPUs is
    a driver too old for the build); ``current`` is ``torch.cuda.current_device()``; ``memory`` the
    ``total_memory`` of each GPU in bytes. No Apple GPU. Nothing runs on a GPU: only the questions a
    program asks about GPUs are answered, and the calls that need a usable GPU raise PyTorch's error.
    """
    usable = n_cuda > 0 if usable is None else usable

    def index(device=None):
        if not usable:  # GPUs and a driver too old for the build, or no GPU and no driver at all
            raise RuntimeError(_DEVICES_OLD_DRIVER if n_cuda else _DEVICES_NO_DRIVER)
        if device is None or isinstance(device, int):
            i = current if device is None else device
        else:
            device = torch.device(device)
            i = current if device.index is None else device.index
        if not 0 <= i < n_cuda:
            raise RuntimeError("CUDA error: invalid device ordinal")
        return i

    def properties(device=None):
        i = index(device)
        total = memory[i] if i < len(memory) else 16 * 2**30
        return SimpleNamespace(name=f"simulated GPU {i}", total_memory=total, major=8, minor=0)

    fakes = {
        (torch.cuda, "is_available"): lambda: usable,
        (torch.cuda, "device_count"): lambda: n_cuda,
        (torch.cuda, "current_device"): lambda: index(),
        (torch.cuda, "get_device_properties"): properties,
        (torch.cuda, "get_device_name"): lambda device=None: properties(device).name,
        (torch.cuda, "mem_get_info"): lambda device=None: (properties(device).total_memory // 2,
                                                          properties(device).total_memory),
        (torch.backends.mps, "is_available"): lambda: False,
    }
    accelerator = getattr(torch, "accelerator", None)

    def current_accelerator(check_available=False):
        """A CUDA build's accelerator where the machine has NVIDIA GPUs (None if it cannot use them and
        ``check_available``); None on a machine without CUDA, as for a build without it."""
        return torch.device("cuda") if n_cuda and (usable or not check_available) else None

    for name, fake in (("is_available", lambda: usable), ("device_count", lambda: n_cuda if usable else 0),
                       ("current_device_index", lambda: index()), ("current_device_idx", lambda: index()),
                       ("current_accelerator", current_accelerator)):
        if accelerator is not None and hasattr(accelerator, name):
            fakes[(accelerator, name)] = fake
    real = {(module, name): getattr(module, name) for module, name in fakes}
    try:
        for (module, name), fake in fakes.items():
            setattr(module, name, fake)
        yield
    finally:
        for (module, name), value in real.items():
            setattr(module, name, value)


def _devices_text(value):
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return str(value)


_DEVICES_CALLS = ("try_gpu()", "try_gpu(1)", "try_all_gpus()")
_DEVICES_MACHINES = {
    "Kaggle, two GPUs": ("cuda:0", "cuda:1", ["cuda:0", "cuda:1"]),
    "Colab, one GPU": ("cuda:0", "cpu", ["cuda:0"]),
    "a Mac with Apple silicon": ("mps:0", "cpu", ["mps:0"]),
}


def _devices_device(value, what):
    """``value`` as a torch.device ("cuda:0" or torch.device("cuda:0")), or _Wrong."""
    if isinstance(value, torch.device):
        return value
    if isinstance(value, str):
        try:  # "CUDA:0" and "cuda: 0" name cuda:0 too
            return torch.device("".join(value.split()).lower())
        except RuntimeError:
            pass
    raise _Wrong("devices.predict-helpers/not-a-device", what=what, got=repr(value))


def _devices_bare(got, want):
    """Whether ``got`` is ``want`` without its index (cuda for cuda:0), for a device or a list of them."""
    if isinstance(want, list):
        return (len(got) == len(want) and got != want
                and all(g == w or _devices_bare(g, w) for g, w in zip(got, want, strict=True)))
    return got.index is None and want.index is not None and got.type == want.type


@_register("devices.predict-helpers", hint="devices.predict-helpers/hint")
def _devices_predict_helpers(predicted):
    _expect(predicted, dict, "predicted")
    expected = {m: (torch.device(a), torch.device(b), [torch.device(d) for d in c])
                for m, (a, b, c) in _DEVICES_MACHINES.items()}
    expected["this machine"] = (try_gpu(), try_gpu(1), try_all_gpus())
    missing = [m for m in expected if m not in predicted]
    if missing:
        raise _Wrong("devices.predict-helpers/missing", names=", ".join(f'"{m}"' for m in missing))
    wrong = []
    for machine, want in expected.items():
        answer = predicted[machine]
        if not isinstance(answer, (tuple, list)) or len(answer) != 3 or not isinstance(answer[2], (list, tuple)):
            raise _Wrong("devices.predict-helpers/shape", machine=machine)
        got = [_devices_device(answer[0], f'predicted["{machine}"][0]'),
               _devices_device(answer[1], f'predicted["{machine}"][1]'),
               [_devices_device(d, f'predicted["{machine}"][2]') for d in answer[2]]]
        for call, g, w in zip(_DEVICES_CALLS, got, want, strict=True):
            if _devices_bare(g, w):
                raise _Wrong("devices.predict-helpers/no-index", machine=machine, call=call, got=_devices_text(g))
            if g != w:
                wrong.append(f"{machine}: {call}")
    if wrong:
        raise _Wrong("devices.predict-helpers/wrong", names="; ".join(wrong))
    here = expected["this machine"]
    return {"first": here[0], "second": here[1], "all": _devices_text(here[2])}


# (the machine, as a key of MESSAGES; CUDA GPUs; the current one; [(a, b, the same place?)])
_DEVICES_PLACES = [
    ("devices.same-place/two-gpus-current-0", 2, 0,
     [("cuda:0", "cuda:1", False), ("cuda:0", "cuda:0", True), ("cuda", "cuda:0", True),
      ("cuda", "cuda:1", False), ("cpu", "cuda", False), ("cuda", "cuda", True)]),
    ("devices.same-place/two-gpus-current-1", 2, 1,
     [("cuda", "cuda:1", True), ("cuda:0", "cuda", False), ("cuda:1", "cuda", True)]),
    ("devices.same-place/no-cuda", 0, 0,
     [("cpu", "cpu", True), ("cpu", "cuda:0", False), ("cuda", "cpu", False), ("mps", "mps:0", True),
      ("mps:0", "cpu", False)]),
]


@_register("devices.same-place", hint="devices.same-place/hint")
def _devices_same_place(same_place):
    _expect_callable(same_place, "same_place")
    for label, n_cuda, current, cases in _DEVICES_PLACES:
        machine = _say(label)
        with _devices_simulated(n_cuda=n_cuda, current=current):
            for a, b, same in cases:
                try:
                    said = same_place(torch.device(a), torch.device(b))
                except Exception as err:
                    key = "devices.same-place/raised-no-cuda" if n_cuda == 0 else "devices.same-place/raised"
                    raise _Wrong(key, a=a, b=b, machine=machine, error=f"{type(err).__name__}: {err}") from None
                said = _expect(said, bool, f"same_place({a}, {b})")
                if said == same:
                    continue
                if n_cuda and "cuda" in (a, b):
                    key = "devices.same-place/bare-cuda"
                elif {a, b} == {"cuda:0", "cuda:1"}:
                    key = "devices.same-place/type-only"
                elif "mps" in (a, b):
                    key = "devices.same-place/mps"
                else:
                    key = "devices.same-place/wrong"
                raise _Wrong(key, a=a, b=b, said=said, want=same, machine=machine, current=current)


class _DevicesAsked(torch.overrides.TorchFunctionMode):
    """Every device a call names while it is active (a factory's device=, .to(d), .cuda(i) aside): whether
    an answer computes on the devices it is given."""

    def __init__(self):
        super().__init__()
        self.asked: list[torch.device] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        for value in [*args, *kwargs.values()]:
            if isinstance(value, (torch.device, str)):
                try:
                    self.asked.append(torch.device(value))
                except (RuntimeError, TypeError):
                    pass  # a string that names no device
        return func(*args, **kwargs)


@_register("devices.never-empty", hint="devices.never-empty/hint")
def _devices_never_empty(sum_on_each, why):
    _expect_callable(sum_on_each, "sum_on_each")
    cpu = torch.device("cpu")
    for name, devices in (("[]", []), ("[cpu]", [cpu]), ("[cpu, cpu]", [cpu, cpu])):
        sums = sum_on_each(list(devices))
        if not isinstance(sums, (list, tuple)):
            raise _Wrong("devices.never-empty/not-a-list", case=name, got=repr(sums)[:80])
        if len(sums) != len(devices):
            raise _Wrong("devices.never-empty/count", case=name, n=len(sums), m=len(devices))
        for s in sums:
            value = s.item() if isinstance(s, torch.Tensor) and s.numel() == 1 else s
            if not isinstance(value, numbers.Real) or value != 3:
                raise _Wrong("devices.never-empty/values", case=name, got=repr(sums))
    named = torch.device("cpu", 0)  # the CPU by another name: an answer that computes on the CPU anyway ignores it
    with _DevicesAsked() as spy:
        sum_on_each([named])
    if named not in spy.asked:
        raise _Wrong("devices.never-empty/ignores-device")
    if not isinstance(why, str):
        raise _Wrong("devices.never-empty/choice", got=repr(why))
    letter = _letter(why, "why", "devices.never-empty/choice")  # "B" and "b)" are b too
    if letter != "b":
        raise _Wrong(f"devices.never-empty/why-{letter}")


_DEVICES_T4, _DEVICES_80G = 15095 * 2**20, 80 * 2**30  # total_memory in bytes: a T4, an 80 GB GPU


@_register("devices.gpu-memory", hint="devices.gpu-memory/hint")
def _devices_gpu_memory(gpu_memory_gib):
    _expect_callable(gpu_memory_gib, "gpu_memory_gib")
    machines = [("devices.gpu-memory/two-gpus", dict(n_cuda=2, memory=(_DEVICES_T4, _DEVICES_80G))),
                ("devices.gpu-memory/old-driver", dict(n_cuda=1, usable=False)),
                ("devices.gpu-memory/no-cuda", dict(n_cuda=0))]
    for label, facts in machines:
        with _devices_simulated(**facts):
            _devices_judge_memory(gpu_memory_gib, _say(label), facts)
    found = _devices_judge_memory(gpu_memory_gib, _say("devices.gpu-memory/this-machine"), None)
    return {"found": found}


def _devices_judge_memory(gpu_memory_gib, machine, facts):
    """Run gpu_memory_gib() on ``machine`` (simulated by ``facts``, or this one for None); return its answer."""
    unusable = facts is not None and facts.get("usable") is False
    try:
        found = gpu_memory_gib()
    except Exception as err:
        error = f"{type(err).__name__}: {err}"
        if unusable:
            did = _say("devices.gpu-memory/did-raise", error=error)
            raise _Wrong("devices.gpu-memory/not-usable", did=did) from None
        raise _Wrong("devices.gpu-memory/raised", machine=machine, error=error) from None
    if not isinstance(found, dict):
        raise _Wrong("devices.gpu-memory/not-a-dict", machine=machine, got=type(found).__name__)
    if facts is None:
        n_cuda, memory = sum(d.type == "cuda" for d in try_all_gpus()), None
    else:
        n_cuda = facts["n_cuda"] if facts.get("usable", True) else 0
        memory = facts.get("memory", ())
    want = [f"cuda:{i}" for i in range(n_cuda)]
    # keys as torch.device("cuda:0") name the GPUs as "cuda:0" does
    found = {str(k) if isinstance(k, torch.device) else k: v for k, v in found.items()}
    if sorted(found, key=str) != want:
        if unusable:
            raise _Wrong("devices.gpu-memory/not-usable", did=_say("devices.gpu-memory/did-return", found=repr(found)))
        raise _Wrong("devices.gpu-memory/keys", machine=machine, got=sorted(found, key=str), want=want)
    for i, key in enumerate(want):
        value = found[key]
        if not isinstance(value, numbers.Real) or isinstance(value, bool):
            raise _Wrong("devices.gpu-memory/not-a-number", machine=machine, name=key, got=type(value).__name__)
        if memory is None:
            if value <= 0:
                raise _Wrong("devices.gpu-memory/not-positive", name=key, got=value)
            continue
        if abs(value - memory[i] / 1e9) < 0.051:
            raise _Wrong("devices.gpu-memory/gb", machine=machine, name=key, got=value, gib=round(memory[i] / 2**30, 1))
        if abs(value - memory[i] / 2**30) > 0.051:
            raise _Wrong("devices.gpu-memory/values", machine=machine, name=key, got=value,
                         gib=round(memory[i] / 2**30, 1), nbytes=f"{memory[i]:,}")
    return "{" + ", ".join(f'"{k}": {v:.1f}' for k, v in found.items()) + "}"
