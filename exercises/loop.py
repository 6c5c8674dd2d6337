"""The checks of lesson 12, a full training loop.

The checks train lesson 11's digits model on the CPU themselves, from a checkpoint they make, and
run the learner's functions on it: what counts is what training does (the loss of the resumed
epoch with and without the optimizer's state; the weights of a resumed run against a straight one).
PyTorch's global random state is put back afterwards, so a check leaves the notebook's runs as they
were. The pinning exercise times the learner's calls with the series' timer on a CUDA GPU, and
says what it skipped elsewhere.
"""

import contextlib
import copy
import io
import re

import torch

from utils import digits_mlp, digits_split, median_and_iqr_seconds, train_one_epoch, try_gpu

from .core import _as_float, _expect, _expect_callable, _first_wrong_letter, _letter, _register, _say, _Wrong


@contextlib.contextmanager
def _loop_learning_rates():
    """The learning rates of every optimizer made while the block runs, as it was made."""
    real, rates = torch.optim.Optimizer.__init__, []

    def spy(self, *args, **kwargs):
        real(self, *args, **kwargs)
        rates.extend(float(group["lr"]) for group in self.param_groups if "lr" in group)

    torch.optim.Optimizer.__init__ = spy
    try:
        yield rates
    finally:
        torch.optim.Optimizer.__init__ = real


class _LoopKeepRandomState:
    """Put PyTorch's global random state back as it was when the block began."""

    def __enter__(self):
        self.state = torch.get_rng_state()

    def __exit__(self, *exc):
        torch.set_rng_state(self.state)


_LOOP_CPU = torch.device("cpu")
_LOOP_DATA: list = []  # digits_split()'s training set, made once


def _loop_run(seed):
    """A fresh seeded run on the CPU, as the lesson makes one: (model, optimizer, generator, loader)."""
    from torch.utils.data import DataLoader

    if not _LOOP_DATA:
        _LOOP_DATA.append(digits_split()[0])
    torch.manual_seed(seed)
    model = digits_mlp()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    generator = torch.Generator().manual_seed(seed)
    return model, optimizer, generator, DataLoader(_LOOP_DATA[0], batch_size=64, shuffle=True, generator=generator)


_LOOP_CHECKPOINTS: list = []  # (untrained, after 10 epochs): trained once, whatever the calls


def _loop_checkpoints():
    """Copies of two checkpoints of one seeded run: before training, and after 10 epochs."""
    if not _LOOP_CHECKPOINTS:
        model, optimizer, _, loader = _loop_run(0)
        untrained = {"epoch": 0, "model": copy.deepcopy(model.state_dict()),
                     "optimizer": copy.deepcopy(optimizer.state_dict())}
        for _epoch in range(10):
            train_one_epoch(model, loader, optimizer, _LOOP_CPU)
        _LOOP_CHECKPOINTS.append((untrained, {"epoch": 10, "model": model.state_dict(),
                                              "optimizer": optimizer.state_dict()}))
    return copy.deepcopy(_LOOP_CHECKPOINTS[0])


_LOOP_WHY_OPTIMIZER = "b"  # a fresh Adam's first steps move nearly every weight by about the learning rate


@_register("loop.save-optimizer", hint="loop.save-optimizer/hint")
def _loop_save_optimizer(resume_one_epoch, why):
    _expect_callable(resume_one_epoch, "resume_one_epoch")
    letter = _letter(why, "why", "loop.save-optimizer/choice")
    with _LoopKeepRandomState():
        untrained, checkpoint = _loop_checkpoints()
        torch.manual_seed(0)  # the same random state for the answer's epochs, first call or not
        kept = _as_float(resume_one_epoch(copy.deepcopy(checkpoint), True), "resume_one_epoch(saved, True)")
        torch.manual_seed(12345)  # another global random state: a seeded answer does not depend on it
        again = _as_float(resume_one_epoch(copy.deepcopy(checkpoint), True), "resume_one_epoch(saved, True)")
        with _loop_learning_rates() as fresh_rates:
            fresh = _as_float(resume_one_epoch(copy.deepcopy(checkpoint), False), "resume_one_epoch(saved, False)")
        if min(kept, fresh) <= 0.5:  # trained weights: then a checkpoint of untrained ones must show
            first = _as_float(resume_one_epoch(copy.deepcopy(untrained), True), "resume_one_epoch(untrained, True)")
            if first <= 0.5:
                raise _Wrong("loop.save-optimizer/ignores-checkpoint", loss=first)
    if min(kept, fresh) > 0.5:  # a trained model's epoch loss is below 0.1; an untrained one's above 1
        raise _Wrong("loop.save-optimizer/not-resumed", kept=kept, fresh=fresh)
    if abs(again - kept) > 1e-4 * max(1.0, abs(kept)):  # the runs depend on the random state left before them
        raise _Wrong("loop.save-optimizer/unseeded", first=kept, again=again)
    if kept == fresh:
        raise _Wrong("loop.save-optimizer/same", loss=kept)
    if kept > fresh:
        saved = checkpoint["optimizer"]["param_groups"][0]["lr"]
        other = next((lr for lr in fresh_rates if lr != saved), None)  # Adam's default, 0.001, most likely
        if other is not None:
            raise _Wrong("loop.save-optimizer/fresh-lr", kept=kept, fresh=fresh, lr=other, saved=saved)
        raise _Wrong("loop.save-optimizer/wrong-way-round", kept=kept, fresh=fresh)
    if letter != _LOOP_WHY_OPTIMIZER:
        raise _Wrong(f"loop.save-optimizer/why-{letter}")
    return {"kept": kept, "fresh": fresh, "ratio": fresh / kept}


_LOOP_NEEDED_FOR = {"generator.get_state()": "a", "torch.get_rng_state()": "b"}


def _loop_why_refused(err):
    """The telling line of torch.save's or torch.load's error: for weights_only, the global it refused."""
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", line).strip() for line in str(err).splitlines()]
    lines = [line for line in lines if line]
    telling = [line for line in lines if "Unsupported global" in line or "WeightsUnpickler error" in line]
    line = (telling or lines or [type(err).__name__])[0]
    return line.split(". ")[0] if len(line) > 100 else line


def _loop_same(a, b):
    return all(torch.equal(x, y) for x, y in zip(a.parameters(), b.parameters(), strict=True))


@_register("loop.resume-exactly", hint="loop.resume-exactly/hint")
def _loop_resume_exactly(make_checkpoint, restore, needed_for):
    _expect_callable(make_checkpoint, "make_checkpoint")
    _expect_callable(restore, "restore")
    wrong = _first_wrong_letter(needed_for, _LOOP_NEEDED_FOR, "needed_for", "loop.resume-exactly/missing",
                                "loop.resume-exactly/choice")
    if wrong:
        name, letter = wrong
        raise _Wrong(f"loop.resume-exactly/{'generator' if name.startswith('generator') else 'rng'}-{letter}")
    with _LoopKeepRandomState():
        straight, optimizer, _, loader = _loop_run(0)
        for _epoch in range(4):
            train_one_epoch(straight, loader, optimizer, _LOOP_CPU)
        half, optimizer, generator, loader = _loop_run(0)
        for _epoch in range(2):
            train_one_epoch(half, loader, optimizer, _LOOP_CPU)
        at_save = torch.get_rng_state(), generator.get_state(), int(optimizer.state_dict()["state"][0]["step"])
        checkpoint = make_checkpoint(half, optimizer, generator)
        _expect(checkpoint, dict, "make_checkpoint(model, optimizer, generator)")
        buffer = io.BytesIO()
        try:
            torch.save(checkpoint, buffer)
            buffer.seek(0)
            saved = torch.load(buffer, map_location="cpu", weights_only=True)
        except Exception as err:  # whatever torch.save or torch.load refused: say it
            raise _Wrong("loop.resume-exactly/not-loadable", error=_loop_why_refused(err)) from None
        torch.manual_seed(12345)  # as a new program would: other weights, another random state
        resumed, optimizer, generator, loader = _loop_run(1)
        restore(saved, resumed, optimizer, generator)
        if not _loop_same(resumed, half):
            raise _Wrong("loop.resume-exactly/model")
        if not optimizer.state or int(optimizer.state_dict()["state"][0]["step"]) != at_save[2]:
            raise _Wrong("loop.resume-exactly/optimizer")
        if not torch.equal(generator.get_state(), at_save[1]):
            raise _Wrong("loop.resume-exactly/generator")
        if not torch.equal(torch.get_rng_state(), at_save[0]):
            raise _Wrong("loop.resume-exactly/rng")
        for _epoch in range(2):
            train_one_epoch(resumed, loader, optimizer, _LOOP_CPU)
    if not _loop_same(resumed, straight):
        raise _Wrong("loop.resume-exactly/differs")


class _LoopPinSpy(torch.overrides.TorchFunctionMode):
    """While copy_pageable runs: whether it pins (``pin_memory()``, also a pin_host it calls, or a tensor made
    with ``pin_memory=True``) or copies from a tensor that is pinned already; either way it times a copy
    from pinned memory, not from pageable memory."""

    _COPIES = (torch.Tensor.to, torch.Tensor.cuda, torch.Tensor.copy_)

    def __init__(self):
        super().__init__()
        self.pins = self.from_pinned = False

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if kwargs.get("pin_memory"):
            self.pins = True
        elif func in self._COPIES and args:
            source = args[1] if func is torch.Tensor.copy_ and len(args) > 1 else args[0]
            if isinstance(source, torch.Tensor) and source.device.type == "cpu":
                try:
                    self.from_pinned |= bool(source.is_pinned())
                except RuntimeError:  # no pinned memory on this machine
                    pass
        return func(*args, **kwargs)

    def __enter__(self):
        # wrapped too: a pin_memory that Python code put in PyTorch's place (a simulated machine's) reaches no mode
        self.real_pin = torch.Tensor.pin_memory

        def pin_memory(tensor, *args, **kwargs):
            self.pins = True
            return self.real_pin(tensor, *args, **kwargs)

        torch.Tensor.pin_memory = pin_memory
        return super().__enter__()

    def __exit__(self, *exc):
        torch.Tensor.pin_memory = self.real_pin
        return super().__exit__(*exc)


_LOOP_WHY_THREAD = "a"  # pinning the next batch runs beside the training step, off its path


@_register("loop.pin-price", hint="loop.pin-price/hint")
def _loop_pin_price(pin_host, copy_pageable, pays, why_a_thread):
    _expect_callable(pin_host, "pin_host")
    _expect_callable(copy_pageable, "copy_pageable")
    import numpy as np

    if isinstance(pays, np.bool_):  # a comparison of NumPy numbers
        pays = bool(pays)
    pays = _expect(pays, bool, "pays")
    letter = _letter(why_a_thread, "why_a_thread", "loop.pin-price/choice")
    device = try_gpu()
    with _LoopPinSpy() as spy:
        copied = copy_pageable()
    _expect(copied, torch.Tensor, "copy_pageable()")
    if device.type == "cuda":
        if copied.device.type != "cuda":
            raise _Wrong("loop.pin-price/not-copied", got=copied.device, want=device)
        if spy.pins:
            raise _Wrong("loop.pin-price/pins-first")
        if spy.from_pinned:
            raise _Wrong("loop.pin-price/copies-pinned")
        pinned = pin_host()
        _expect(pinned, torch.Tensor, "pin_host()")
        if pinned.device.type != "cpu" or not pinned.is_pinned():
            raise _Wrong("loop.pin-price/not-pinned", device=pinned.device)
        pinning = median_and_iqr_seconds(pin_host, device, min_run_time=0.2)
        copying = median_and_iqr_seconds(copy_pageable, device, min_run_time=0.2)
        size = pinned.numel() * pinned.element_size()
        measured = _say("loop.pin-price/measured", device=device, pin=pinning, copy=copying,
                        versus=pinning.against(copying),
                        size=f"{size / 2**20:.0f} MiB" if size >= 2**20 else f"{size / 2**10:.0f} KiB")
    else:
        if copied.device != device:
            raise _Wrong("loop.pin-price/not-copied", got=copied.device, want=device)
        measured = _say("loop.pin-price/skipped", device=device)
    if pays:
        raise _Wrong("loop.pin-price/pays")
    if letter != _LOOP_WHY_THREAD:
        raise _Wrong(f"loop.pin-price/thread-{letter}")
    return {"measured": measured}
