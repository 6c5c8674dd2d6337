"""The checks of lesson 04, models on devices."""


import torch
from torch import nn

from utils import model_device, try_gpu, two_different_devices

from .core import _expect, _expect_callable, _on_a_gpu, _register, _say, _table_answers, _Wrong


def _models_other() -> torch.device:
    """Section 5's ``other``: of the two devices of this machine, the one that is not the CPU."""
    first, second = two_different_devices()
    return first if first.type != "cpu" else second


_MODELS_ON_CPU = {"net": False, "X": True}  # after `net.to(other)` and `X.to(other)` on lines of their own


@_register("models.to-in-place", hint="models.to-in-place/hint")
def _models_to_in_place(on_cpu, X_on_other):
    wrong = _table_answers(on_cpu, _MODELS_ON_CPU, "on_cpu", "models.to-in-place/missing")
    if wrong:
        raise _Wrong("models.to-in-place/wrong", names=_say("core/and").join(wrong))
    _expect(X_on_other, torch.Tensor, "X_on_other")
    other = _models_other()
    if X_on_other.device != other:
        key = "models.to-in-place/left-behind" if X_on_other.device.type == "cpu" else "models.to-in-place/elsewhere"
        raise _Wrong(key, got=X_on_other.device, other=other)
    if X_on_other.shape != (3,) or (other.type != "meta" and not torch.equal(X_on_other.cpu(), torch.ones(3))):
        raise _Wrong("models.to-in-place/values", other=other)
    return {"other": other}


def _models_linears(net: nn.Module) -> str:
    found = [f"Linear({m.in_features}, {m.out_features})" for m in net.modules() if isinstance(m, nn.Linear)]
    return ", ".join(found) or _say("models.split/no-linear")


def _models_run_split(split: nn.Module, layers: list[nn.Linear], case: str, x: torch.Tensor) -> torch.Tensor:
    """``split(x)``, failing with the layer whose input is not on the device of its parameters."""

    def guard(name: str):
        def pre_hook(module, args):
            got, want = getattr(args[0], "device", None) if args else None, module.weight.device
            if got is not None and got != want:  # a model whose input stayed behind: caught here, on any machine
                raise _Wrong("models.split/inputs-behind", case=case, layer=name, got=got, want=want)
        return pre_hook

    names = (_say("models.split/first-layer"), _say("models.split/second-layer"))
    handles = [layer.register_forward_pre_hook(guard(name)) for layer, name in zip(layers, names, strict=True)]
    try:
        return split(x)
    finally:
        for handle in handles:
            handle.remove()


@_register("models.split", hint="models.split/hint")
def _models_split(split, one_device):
    if isinstance(split, type):
        raise _Wrong("models.split/a-class", name=split.__name__)
    _expect(split, nn.Module, "split")
    linears = [m for m in split.modules() if isinstance(m, nn.Linear)]
    by_shape = {(m.in_features, m.out_features): m for m in linears}
    if len(linears) != 2 or set(by_shape) != {(3, 4), (4, 1)}:
        raise _Wrong("models.split/layers", found=_models_linears(split))
    layers = [by_shape[(3, 4)], by_shape[(4, 1)]]  # in the order data flows, whatever order __init__ made them
    first, second = two_different_devices()
    where = [{p.device for p in m.parameters()} for m in layers]
    if where[0] == where[1]:
        raise _Wrong("models.split/one-device", got=", ".join(sorted(str(d) for d in where[0])),
                     first=first, second=second)
    if where != [{first}, {second}]:
        raise _Wrong("models.split/placement", got0=", ".join(str(d) for d in where[0]),
                     got1=", ".join(str(d) for d in where[1]), first=first, second=second)
    cases = [(_say("models.split/cpu-batch"), torch.ones(2, 3))]
    if first.type == "cpu":  # then a CPU batch is already where the first layer is: try one from a GPU
        cases.append((_say("models.split/gpu-batch"), _on_a_gpu(torch.ones(2, 3), "cuda:0")))
    for case, x in cases:
        y = _models_run_split(split, layers, case, x)
        _expect(y, torch.Tensor, _say("models.split/what-returns"))
        if y.device != second:
            raise _Wrong("models.split/output-device", case=case, got=y.device, second=second)
        if tuple(y.shape) != (2, 1):
            raise _Wrong("models.split/output-shape", case=case, shape=tuple(y.shape))
    one_device = _expect(one_device, bool, "one_device")
    try:
        model_device(split)
        names_one = True
    except ValueError:
        names_one = False
    if one_device != names_one:
        raise _Wrong("models.split/one-device-answer", one_device=one_device)
    return {"first": first, "second": second}


def _models_checkpoints(folder) -> tuple:
    """Two files of one nn.Linear(3, 1)'s state: saved on the CPU, and saved as if on a CUDA GPU.

    The second is written with torch.serialization's location tag made to say ``cuda:0``, which is
    all a file records of a tensor's device. It is None where that did not work (another PyTorch).
    """
    import torch.serialization as serialization

    state = nn.Linear(3, 1).state_dict()
    on_cpu, on_gpu = folder / "cpu.pt", folder / "cuda.pt"
    torch.save(state, on_cpu)
    real = serialization.location_tag
    serialization.location_tag = lambda storage: "cuda:0"
    try:
        torch.save(state, on_gpu)
    finally:
        serialization.location_tag = real
    seen: list[str] = []
    torch.load(on_gpu, map_location=lambda storage, location: seen.append(location) or storage, weights_only=True)
    return state, on_cpu, (on_gpu if seen and set(seen) == {"cuda:0"} else None)


def _models_why(err: Exception) -> str:
    """The line of a failed torch.load that says why: the CUDA one (PyTorch 2.4 wraps it in another)."""
    lines = [line for line in str(err).splitlines() if "CUDA" in line] or [str(err)]
    return lines[0][lines[0].find("Attempting"):] if "Attempting" in lines[0] else lines[0]


@_register("models.load-onto", hint="models.load-onto/hint")
def _models_load_onto(load_onto, state):
    import tempfile
    from pathlib import Path

    _expect_callable(load_onto, "load_onto")
    with tempfile.TemporaryDirectory() as folder:
        saved, on_cpu, on_gpu = _models_checkpoints(Path(folder))
        cases = [(_say("models.load-onto/gpu-to-cpu"), on_gpu, torch.device("cpu"))] if on_gpu else []
        cases.append((_say("models.load-onto/cpu-to-meta"), on_cpu, torch.device("meta")))
        for case, path, device in cases:
            try:
                loaded = load_onto(path, device)
            except Exception as err:
                if path == on_gpu and "CUDA" in str(err):
                    raise _Wrong("models.load-onto/no-map-location", case=case, error=_models_why(err)) from None
                raise
            _expect(loaded, dict, _say("models.load-onto/what-returns", case=case))
            if set(loaded) != set(saved):
                raise _Wrong("models.load-onto/keys", case=case)
            got = sorted({str(v.device) for v in loaded.values()})
            if got != [str(device)]:
                raise _Wrong("models.load-onto/ignores-device", case=case, got=", ".join(got), device=device)
            if device.type != "meta" and not all(torch.equal(loaded[k], saved[k]) for k in saved):
                raise _Wrong("models.load-onto/values", case=case)
    _expect(state, dict, "state")
    if set(state) != {"0.weight", "0.bias"}:
        keys = ", ".join(sorted(map(str, state))) or _say("models.load-onto/no-keys")
        raise _Wrong("models.load-onto/state-keys", keys=keys)
    best = try_gpu()
    got = sorted({str(v.device) for v in state.values()})
    if got != [str(best)]:
        raise _Wrong("models.load-onto/state-device", got=", ".join(got), best=best)
    return {"device": best}


_MODELS_LAYER_BYTES = 1024 * 1024 * 4 + 1024 * 4  # nn.Linear(1024, 1024): weights and biases, float32


def _models_bytes_cases():
    return [("nn.Linear(1024, 1024)", nn.Linear(1024, 1024)),
            ("nn.Linear(10, 10).half()", nn.Linear(10, 10).half()),
            ("nn.Linear(4, 3, bias=False)", nn.Linear(4, 3, bias=False)),
            ("nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 1))", nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 1)))]


@_register("models.layer-bytes", hint="models.layer-bytes/hint")
def _models_layer_bytes(parameter_bytes, measured):
    _expect_callable(parameter_bytes, "parameter_bytes")
    for case, net in _models_bytes_cases():
        params = list(net.parameters())
        want = sum(p.numel() * p.element_size() for p in params)
        got = _expect(parameter_bytes(net), int, f"parameter_bytes({case})")
        if got == want:
            continue
        if got == sum(p.numel() for p in params):
            raise _Wrong("models.layer-bytes/numel", case=case, got=got)
        if got == 4 * sum(p.numel() for p in params):
            raise _Wrong("models.layer-bytes/assumes-4", case=case, got=got, size=params[0].element_size())
        if got == sum(m.weight.numel() * m.weight.element_size() for m in net.modules() if isinstance(m, nn.Linear)):
            raise _Wrong("models.layer-bytes/weights-only", case=case, got=got)
        raise _Wrong("models.layer-bytes/count", case=case, got=got)
    size, best = _MODELS_LAYER_BYTES, try_gpu()
    if best.type == "cpu":
        if measured is not None:
            raise _Wrong("models.layer-bytes/cpu-number", size=size)
        return {"summary": _say("models.layer-bytes/on-cpu", size=size)}
    if measured is None:
        raise _Wrong("models.layer-bytes/not-measured", device=best)
    measured = _expect(measured, int, "measured")
    if measured < size:
        raise _Wrong("models.layer-bytes/too-small", measured=measured, size=size)
    if measured > 2 * size:
        raise _Wrong("models.layer-bytes/too-large", measured=measured, size=size)
    if best.type == "cuda" and measured != size:  # blocks of 512 bytes, which both tensors fill: exactly their bytes
        raise _Wrong("models.layer-bytes/not-exact", measured=measured, size=size)
    return {"summary": _say("models.layer-bytes/measured", size=size, device=best, measured=measured)}


@_register("models.left-behind", hint="models.left-behind/hint")
def _models_left_behind(model_class):
    if isinstance(model_class, nn.Module):
        raise _Wrong("models.left-behind/an-instance", name=type(model_class).__name__)
    if not (isinstance(model_class, type) and issubclass(model_class, nn.Module)):
        raise _Wrong("models.left-behind/not-a-module", got=type(model_class).__name__)
    model = model_class()
    linear = getattr(model, "linear", None)
    if not isinstance(linear, nn.Linear) or (linear.in_features, linear.out_features) != (3, 2):
        raise _Wrong("models.left-behind/no-linear", name=model_class.__name__)
    x = torch.randn(4, 3, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        got = _expect(model(x), torch.Tensor, f"{model_class.__name__}()(x)")
        want = linear(x) * torch.tensor([2.0, 0.5]) + 1
    if got.shape != want.shape or not torch.allclose(got, want, atol=1e-6):
        raise _Wrong("models.left-behind/values", name=model_class.__name__)
    if "scale" in vars(model) and isinstance(vars(model)["scale"], torch.Tensor):
        raise _Wrong("models.left-behind/plain-attribute", name=model_class.__name__)
    # A GPU where there is one; else `meta`, which refuses a CPU tensor beside its own as CUDA does
    other = _models_other()
    moved = model_class().to(other)
    try:
        with torch.no_grad():
            out = moved(torch.randn(4, 3).to(other))
    except RuntimeError as err:
        raise _Wrong("models.left-behind/fails", name=model_class.__name__, other=other,
                     error=str(err).splitlines()[0]) from None
    out = _expect(out, torch.Tensor, f"{model_class.__name__}()(x)")
    if out.device != other:
        raise _Wrong("models.left-behind/output-elsewhere", name=model_class.__name__, got=out.device, other=other)
    scale = dict(model.named_parameters()).get("scale")
    if scale is not None and scale.requires_grad:
        raise _Wrong("models.left-behind/trained-scale", name=model_class.__name__)
    how = ("models.left-behind/buffer" if "scale" in dict(model.named_buffers()) else
           "models.left-behind/frozen-parameter" if scale is not None else "models.left-behind/other-way")
    return {"other": other, "how": _say(how)}
