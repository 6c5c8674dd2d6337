"""The checks of lesson 09, mixed precision.

The two measuring exercises hand the check what to measure (a step, a model and its data); the
check verifies what it can by behaviour (a scaler for float16 and none for bfloat16, a step that
trains, the model and its inputs on one device, the sizes asked for), then times the steps itself
with the series' timer, which warms up and synchronises, and says what the reader's device showed.
No check asserts a speed.
"""

import inspect
import numbers

import torch
from torch import nn

from utils import autocast_dtype, median_and_iqr_seconds, model_device, training_step, try_gpu

from .core import _expect, _expect_callable, _first_wrong_letter, _letter, _register, _say, _Wrong

_PRECISION_LABELS = {None: "float32", torch.float16: "float16 autocast", torch.bfloat16: "bfloat16 autocast"}


class _PrecisionScaleSpy:
    """Counts the calls of ``GradScaler.scale`` (every scaler scales the loss before ``backward()``), of
    scalers not made with ``enabled=False``: such a scaler returns the loss as it is, and scales nothing.
    (A CUDA scaler on a machine without CUDA, which PyTorch disables, counts: on a GPU it would scale.)
    A scaler made before the spy began shows only whether it is enabled; a disabled one is kept in
    ``disabled``, so that the check can say why it scales nothing."""

    def __enter__(self):
        self.calls, self.disabled, self.real = 0, None, torch.amp.GradScaler.scale
        self.real_init = torch.amp.GradScaler.__init__
        spy = self

        def scale(scaler, outputs):
            asked = getattr(scaler, "_precision_asked_enabled", None)
            if asked is None and not scaler.is_enabled():  # made earlier, and disabled: by PyTorch, or asked
                spy.disabled = scaler
            spy.calls += scaler.is_enabled() if asked is None else asked
            return spy.real(scaler, outputs)

        def init(scaler, *args, **kwargs):
            spy.real_init(scaler, *args, **kwargs)
            asked = inspect.signature(spy.real_init).bind(scaler, *args, **kwargs)
            asked.apply_defaults()
            scaler._precision_asked_enabled = bool(asked.arguments["enabled"])

        torch.amp.GradScaler.scale, torch.amp.GradScaler.__init__ = scale, init
        return self

    def __exit__(self, *exc):
        torch.amp.GradScaler.scale, torch.amp.GradScaler.__init__ = self.real, self.real_init


class _PrecisionProducts(torch.overrides.TorchFunctionMode):
    """The dtypes of the matrix products a step computes (linear layers, @, mm, bmm): autocast casts below
    the Python API, so each product's result shows the dtype it ran in. Active only around one step."""

    PRODUCTS = (torch.nn.functional.linear, torch.matmul, torch.mm, torch.bmm, torch.addmm, torch.Tensor.__matmul__,
                torch.Tensor.matmul, torch.Tensor.mm)

    def __init__(self):
        super().__init__()
        self.dtypes: set[torch.dtype] = set()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func in self.PRODUCTS and isinstance(out, torch.Tensor):
            self.dtypes.add(out.dtype)
        return out


def _precision_versus(timing, reference):
    """``timing`` next to ``reference`` as the lesson compares them: a ratio, noise, or too noisy to say."""
    if timing.noisy or reference.noisy:
        return _say("precision.bf16-vs-fp16/noisy")
    return timing.against(reference)


def _precision_loss(value, what):
    """The float of a loss the learner's step returned (a tensor with one value, or its .item()), or _Wrong."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, torch.Tensor) or value.numel() != 1:
        raise _Wrong("precision.bf16-vs-fp16/no-loss", what=what, got=type(value).__name__)
    return float(value.detach().float().cpu())


# How fast each step is next to float32: "a" the hardware computes the format, "b" no hardware
# does (emulated, or a slow path), "c" twice as fast for half the bytes (never so).
_PRECISION_WHICH = {"Ampere GPU, bfloat16": "a", "T4, bfloat16": "b", "CPU, float16": "b"}
_PRECISION_WHY_NOT = {("Ampere GPU, bfloat16", "b"): "ampere-b", ("T4, bfloat16", "a"): "t4-a",
                      ("CPU, float16", "a"): "cpu-a"}


@_register("precision.bf16-vs-fp16", hint="precision.bf16-vs-fp16/hint")
def _precision_bf16_vs_fp16(make_step, which):
    _expect_callable(make_step, "make_step")
    wrong = _first_wrong_letter(which, _PRECISION_WHICH, "which", "precision.bf16-vs-fp16/missing",
                                "precision.bf16-vs-fp16/choice")
    if wrong:
        name, letter = wrong
        raise _Wrong(f"precision.bf16-vs-fp16/{_PRECISION_WHY_NOT.get((name, letter), 'half-the-bytes')}",
                     name=f'which["{name}"]')
    on_a_mac = try_gpu().type == "mps"
    rows, timings, device = [], {}, try_gpu()
    for dtype, label in _PRECISION_LABELS.items():
        called = f"make_step({'None' if dtype is None else 'torch.' + str(dtype)[6:]})"
        with _PrecisionScaleSpy() as spy:
            try:
                step = make_step(dtype)
                _expect_callable(step, called)
                with _PrecisionProducts() as products:
                    first = step()
            except (RuntimeError, TypeError, ValueError) as err:
                if dtype is None or not on_a_mac:  # a Mac may lack bfloat16, or float16 before PyTorch 2.8
                    raise
                rows.append(_say("precision.bf16-vs-fp16/row-skipped", label=label, error=str(err).splitlines()[0]))
                continue
        if dtype == torch.float16 and spy.calls == 0:
            if getattr(spy.disabled, "_device", None) == "cuda" and not torch.cuda.is_available():
                # GradScaler.__init__ (torch/amp/grad_scaler.py) disables a CUDA scaler where CUDA is not available
                raise _Wrong("precision.bf16-vs-fp16/float16-scaler-disabled")
            raise _Wrong("precision.bf16-vs-fp16/float16-no-scaler")
        if dtype != torch.float16 and spy.calls:
            raise _Wrong("precision.bf16-vs-fp16/needless-scaler", label=label)
        low = sorted(str(d)[6:] for d in products.dtypes if d in (torch.float16, torch.bfloat16))
        if (products.dtypes and (dtype is None) == bool(low)) or (dtype is not None and dtype not in products.dtypes):
            seen = ", ".join(sorted(str(d)[6:] for d in products.dtypes)) or "none"
            raise _Wrong("precision.bf16-vs-fp16/products-dtype", called=called, seen=seen,
                         want="float32" if dtype is None else str(dtype)[6:])
        loss = _precision_loss(first, _say("precision.bf16-vs-fp16/the-step", called=called))
        device = first.device if isinstance(first, torch.Tensor) else try_gpu()  # .item() has waited already
        timing = median_and_iqr_seconds(step, device, min_run_time=0.1)  # warms up, synchronises
        after = _precision_loss(step(), _say("precision.bf16-vs-fp16/the-step", called=called))
        if not after < loss:
            raise _Wrong("precision.bf16-vs-fp16/not-training", label=label, first=loss, last=after)
        timings[dtype] = timing
        versus = ""
        if dtype is not None:  # "; 1.52× as long as float32's", or "; no difference beyond the noise"
            reference = timings[None]
            ratio = not (timing.noisy or reference.noisy) and \
                abs(timing.median - reference.median) > timing.iqr + reference.iqr  # as Timing.against says
            versus = _say("precision.bf16-vs-fp16/versus" if ratio else "precision.bf16-vs-fp16/versus-same",
                          versus=_precision_versus(timing, reference))
        rows.append(_say("precision.bf16-vs-fp16/row", label=label, timing=timing, versus=versus))
    return {"device": device, "rows": "\n".join(rows)}


_PRECISION_GRADS = dict(start=-10, end=0, steps=1001)


def _precision_whole(value):
    """``value`` as an int where it is a whole number in another form (NumPy's, 248.0, a tensor of one
    value); else as it is, for _expect to name."""
    if isinstance(value, torch.Tensor) and value.numel() == 1 and not value.dtype.is_complex:
        value = value.item()
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, numbers.Real) and not isinstance(value, bool) and float(value).is_integer():
        return int(value)
    return value


@_register("precision.underflow", hint="precision.underflow/hint")
def _precision_underflow(zeros, largest_scale):
    grads = torch.logspace(**_PRECISION_GRADS)
    want = {"float16": int((grads.half() == 0).sum()),
            "float16, scaled by 2**16": int(((grads * 2**16).half() == 0).sum()),
            "bfloat16": int((grads.bfloat16() == 0).sum())}
    _expect(zeros, dict, "zeros")
    missing = [name for name in want if name not in zeros]
    if missing:
        raise _Wrong("precision.underflow/missing", names=", ".join(f'"{n}"' for n in missing))
    for name, count in want.items():
        got = _precision_whole(zeros[name])
        got = _expect(got, int, f'zeros["{name}"]')
        if got == count:
            continue
        if name == "float16" and got == int((grads < torch.finfo(torch.float16).smallest_normal).sum()):
            raise _Wrong("precision.underflow/subnormal", got=got)
        if name == "float16" and got == int((grads < 2.0**-24).sum()):
            raise _Wrong("precision.underflow/below-smallest", got=got)
        raise _Wrong("precision.underflow/count", name=name, got=got)
    largest_scale = _precision_whole(largest_scale)
    largest_scale = _expect(largest_scale, int, "largest_scale")
    largest = max(2**k for k in range(64) if torch.isfinite((grads * 2.0**k).half()).all())
    if largest_scale == largest.bit_length() - 1:
        raise _Wrong("precision.underflow/exponent", got=largest_scale)
    if largest_scale < 1 or largest_scale & (largest_scale - 1):
        raise _Wrong("precision.underflow/not-a-power", got=largest_scale)
    if largest_scale > largest:
        raise _Wrong("precision.underflow/overflows", got=largest_scale, k=largest_scale.bit_length() - 1,
                     value=float((grads.max() * largest_scale).half()))
    if largest_scale < largest:
        raise _Wrong("precision.underflow/too-small", got=largest_scale, k=largest_scale.bit_length() - 1)
    return {"scale": largest, "k": largest.bit_length() - 1, "f16": want["float16"],
            "f16_scaled": want["float16, scaled by 2**16"], "bf16": want["bfloat16"]}


def _precision_first_linear(model):
    return next((m for m in model.modules() if isinstance(m, nn.Linear)), None)


def _precision_small_parts(small_setup):
    """(model, inputs, targets) from ``small_setup()``, checked: sizes, and all on one device."""
    parts = small_setup()
    if not isinstance(parts, (tuple, list)) or len(parts) != 3:
        raise _Wrong("precision.small-model/not-three", got=type(parts).__name__)
    model, inputs, targets = parts
    _expect(model, nn.Module, _say("precision.small-model/the-model"))
    _expect(inputs, torch.Tensor, _say("precision.small-model/the-inputs"))
    _expect(targets, torch.Tensor, _say("precision.small-model/the-targets"))
    first = _precision_first_linear(model)
    if first is None:
        raise _Wrong("precision.small-model/no-linear")
    if first.in_features != 64 or first.out_features != 64:
        raise _Wrong("precision.small-model/width", got=f"{first.in_features} x {first.out_features}")
    if inputs.dim() != 2 or tuple(inputs.shape) != (64, 64) or len(targets) != 64:
        raise _Wrong("precision.small-model/batch", got=tuple(inputs.shape), targets=tuple(targets.shape))
    where = model_device(model)
    if inputs.device != where or targets.device != where:
        raise _Wrong("precision.small-model/devices", model=where, inputs=inputs.device, targets=targets.device)
    return model, inputs, targets


_PRECISION_SMALL = "a"  # a dozen small kernels: launches and casts, not arithmetic, decide the step


@_register("precision.small-model", hint="precision.small-model/hint")
def _precision_small_model(small_setup, why):
    _expect_callable(small_setup, "small_setup")
    model, inputs, targets = _precision_small_parts(small_setup)
    device = model_device(model)
    low = autocast_dtype(device) if device.type in ("cpu", "cuda", "mps") else None
    letter = _letter(why, "why", "precision.small-model/choice")
    if letter != _PRECISION_SMALL:
        raise _Wrong(f"precision.small-model/why-{letter}")
    timings = {}
    for dtype in (None, low) if low is not None else (None,):
        model, inputs, targets = _precision_small_parts(small_setup)  # a fresh model for each
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        scaler = torch.amp.GradScaler(device.type) if dtype == torch.float16 else None
        args = (model, inputs, targets, optimizer, dtype, scaler)
        timings[dtype] = median_and_iqr_seconds(lambda args=args: training_step(*args), device, min_run_time=0.1)
    if low is None:
        return {"device": device, "result": _say("precision.small-model/float32-only", full=timings[None])}
    full, mixed = timings[None], timings[low]
    return {"device": device, "result": _say("precision.small-model/both", full=full, mixed=mixed,
                                             label=_PRECISION_LABELS[low], versus=_precision_versus(mixed, full))}
