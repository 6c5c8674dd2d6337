"""The checks of lesson 07's exercises (exercises/memory.py): the right answer passes, typical wrong
ones (elements counted for bytes, Adam's state assumed before the first step, a missing gradient
that crashes, four bytes taken for every element, a prediction of the weights alone) get their own
message.

The counts come from tensors the check builds on the CPU, the same bytes on every device, so no GPU
is needed; machines with GPUs are simulated with the `machine` fixture. After a right answer a check
also runs the exercise on the reader's device, which a simulated machine does not have, so that run
is replaced by fixed fields there (`stub_real_runs`), and done for real on this machine's CPU in one
test per check.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import exercises.memory
from exercises import check

MACHINES = ["cpu-only", "one-cuda-gpu", "two-cuda-gpus", "apple-mps"]
MiB = 2**20


@pytest.fixture
def stub_real_runs(monkeypatch):
    monkeypatch.setattr(exercises.memory, "_memory_adam_step_on_this_machine",
                        lambda state_bytes: {"counted": "256.1", "measured": "(measured)"})
    monkeypatch.setattr(exercises.memory, "_memory_alias_on_this_machine", lambda: {"device": "sim", "rows": "(rows)"})


def said(capsys) -> str:
    return capsys.readouterr().out


# --- memory.adam-step ------------------------------------------------------------------------

def nbytes(tensors):
    return sum(t.numel() * t.element_size() for t in tensors)


def state_bytes(model, optimizer):
    return {"weights": nbytes(model.parameters()),
            "gradients": nbytes(p.grad for p in model.parameters() if p.grad is not None),
            "state": nbytes(v for s in optimizer.state.values() for v in s.values() if torch.is_tensor(v))}


def counts_elements(model, optimizer):
    return {"weights": sum(p.numel() for p in model.parameters()), "gradients": 0, "state": 0}


def assumes_adams_state(model, optimizer):
    weights = nbytes(model.parameters())
    grads = nbytes(p.grad for p in model.parameters() if p.grad is not None)
    return {"weights": weights, "gradients": grads, "state": 2 * weights}  # what Adam will hold, not what it holds


def crashes_without_gradients(model, optimizer):
    return state_bytes(model, optimizer) | {"gradients": nbytes(p.grad for p in model.parameters())}


def four_bytes_each(model, optimizer):
    counts = state_bytes(model, optimizer)
    return counts | {"weights": 4 * sum(p.numel() for p in model.parameters())}


PREDICTED = 4 * (4096 * 4096 + 4096) * 4 / MiB


@pytest.mark.parametrize("name", MACHINES)
def test_adam_step_accepts_a_count_from_the_tensors_and_a_prediction_of_256_mib(machine, stub_real_runs, capsys,
                                                                                name):
    machine(name)
    assert check("memory.adam-step", state_bytes, PREDICTED)
    assert check("memory.adam-step", state_bytes, 256)
    assert check("memory.adam-step", state_bytes, 268.5)  # in MB (10**6 bytes), as many write it
    assert "state_bytes counts the weights, the gradients and Adam's state" in said(capsys)


def state_bytes_by_hand(model, optimizer):
    """Another right count: loops over the optimizer's groups, nbytes, Adam's two averages by name (no step)."""
    weights = gradients = state = 0
    for group in optimizer.param_groups:
        for p in group["params"]:
            weights += p.nbytes
            if p.grad is not None:
                gradients += p.grad.nbytes
            for name in ("exp_avg", "exp_avg_sq"):
                if name in optimizer.state.get(p, {}):
                    state += optimizer.state[p][name].nbytes
    return dict(weights=weights, gradients=gradients, state=state)


def state_bytes_numpy(model, optimizer):
    """Right, summed by NumPy: int64s, and 0.0 (a float64) for an empty list."""
    return {"weights": np.sum([p.nbytes for p in model.parameters()]),
            "gradients": np.sum([p.grad.nbytes for p in model.parameters() if p.grad is not None]),
            "state": np.sum([v.nbytes for s in optimizer.state.values() for v in s.values() if torch.is_tensor(v)])}


def state_bytes_tensors(model, optimizer):
    return {k: torch.tensor(v) for k, v in state_bytes(model, optimizer).items()}


@pytest.mark.parametrize("count", [state_bytes_by_hand, state_bytes_numpy, state_bytes_tensors])
def test_adam_step_accepts_counts_by_hand_by_numpy_or_as_tensors_and_a_prediction_as_numpy_or_a_tensor(
        stub_real_runs, capsys, count):
    for predicted in (256, np.int64(256), np.float32(PREDICTED), torch.tensor(PREDICTED)):
        assert check("memory.adam-step", count, predicted)
        assert "state_bytes counts the weights, the gradients and Adam's state" in said(capsys)
    assert not check("memory.adam-step", count, np.int64(64))
    assert "your prediction, 64 MiB, is off" in said(capsys)


def test_adam_step_counts_only_the_three_entries_when_state_bytes_adds_a_total(machine, capsys):
    """A "total" of its own is not counted twice in what the check says of the large layer (a real run here)."""
    machine("cpu-only")

    def with_a_total(model, optimizer):
        counts = state_bytes(model, optimizer)
        return counts | {"total": sum(counts.values())}

    assert check("memory.adam-step", with_a_total, 256)
    assert "after one step it counts 256.1 MiB" in said(capsys)


def test_adam_step_rejects_elements_for_bytes_and_four_bytes_for_a_float64(stub_real_runs, capsys):
    assert not check("memory.adam-step", counts_elements, PREDICTED)
    assert "the number of its elements: multiply each tensor's elements by the bytes of each" in said(capsys)
    assert not check("memory.adam-step", four_bytes_each, PREDICTED)
    assert "state_bytes says 144 bytes of weights for a float64 layer, which holds 288" in said(capsys)


def test_adam_step_rejects_state_before_the_first_step_and_a_crash_on_missing_gradients(stub_real_runs, capsys):
    assert not check("memory.adam-step", assumes_adams_state, PREDICTED)
    assert "before the first optimizer.step(), Adam holds no state, but state_bytes says" in said(capsys)
    assert not check("memory.adam-step", crashes_without_gradients, PREDICTED)
    assert "state_bytes fails for a float32 network before its first backward pass, when p.grad is None" in said(capsys)


def test_adam_step_rejects_a_prediction_of_the_weights_alone_and_a_missing_key(stub_real_runs, capsys):
    assert not check("memory.adam-step", state_bytes, 64)
    assert "your prediction, 64 MiB, is off: the layer's weights alone are 64 MiB" in said(capsys)
    assert not check("memory.adam-step", state_bytes, "256 MiB")
    assert "predicted_mib should be an int or a float, but it is a str" in said(capsys)
    assert not check("memory.adam-step", lambda model, optimizer: {"weights": 0}, 256)
    assert 'it lacks "gradients", "state"' in said(capsys)


def test_adam_step_counts_a_step_of_the_large_layer_for_real_on_this_machines_cpu(machine, capsys):
    machine("cpu-only")
    assert check("memory.adam-step", state_bytes, 256)
    assert "after one step it counts 256.1 MiB. cpu keeps no memory counters" in said(capsys)


# --- memory.alias ----------------------------------------------------------------------------

STILL_HELD = {"a": True, "b": True, "c": True, "d": False, "e": False, "f": True, "g": False}


@pytest.mark.parametrize("name", MACHINES)
def test_alias_accepts_what_a_second_name_and_the_cache_keep(machine, stub_real_runs, capsys, name):
    machine(name)
    assert check("memory.alias", dict(STILL_HELD))
    assert "A second name keeps a tensor alive" in said(capsys)


def test_alias_names_the_statements_it_gets_wrong(stub_real_runs, capsys):
    # the usual slip: del big frees the tensor, and del alias gives the memory straight back to the driver
    wrong = STILL_HELD | {"a": False, "f": False}
    assert not check("memory.alias", wrong)
    assert "wrong answers: 2 of 7. Look again at: a, f" in said(capsys)


def test_alias_accepts_the_answers_in_another_order_as_numpy_bools_or_tensors(stub_real_runs, capsys):
    backwards = dict(reversed(STILL_HELD.items()))
    for answers in (backwards, {k: np.bool_(v) for k, v in backwards.items()},
                    {k: torch.tensor(v) for k, v in STILL_HELD.items()}):
        assert check("memory.alias", answers)
        assert "A second name keeps a tensor alive" in said(capsys)
    flipped = {k: np.bool_(not v if k in "def" else v) for k, v in STILL_HELD.items()}
    assert not check("memory.alias", flipped)
    assert "wrong answers: 3 of 7. Look again at: d, e, f" in said(capsys)


def test_alias_rejects_a_missing_statement_and_an_answer_that_is_no_bool(stub_real_runs, capsys):
    assert not check("memory.alias", {"a": True})
    assert "still_held lacks an answer for: b, c, d, e, f, g" in said(capsys)
    assert not check("memory.alias", STILL_HELD | {"e": "no"})
    assert 'still_held["e"] should be a bool' in said(capsys)
    assert not check("memory.alias", STILL_HELD | {"e": ...})
    assert said(capsys).startswith("Not answered yet")


def test_alias_runs_the_sequence_for_real_on_this_machines_cpu(machine, capsys):
    machine("cpu-only")
    assert check("memory.alias", dict(STILL_HELD))
    out = said(capsys)
    assert "del big, release  the tensor is alive  no counters here" in out
    assert "del alias         the tensor is gone   no counters here" in out
