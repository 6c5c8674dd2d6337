"""The checks of lesson 14's exercises (exercises/ddp_practice.py): the right answer passes, typical
wrong ones get their own message. Nothing is launched and no speed is measured: the hang check gets
errors and process ids the test makes (of processes that have ended, or of this one, which runs).
The same on every machine."""

from __future__ import annotations

import copy
import datetime
import os
import subprocess
import sys

import numpy as np
import pytest
from torch import nn
from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present

from exercises import check


def said(capsys) -> str:
    return capsys.readouterr().out


# --- ddp-practice.hang ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def ended():
    """The process ids of two processes that have ended, as two ranks of a finished launch."""
    pids = []
    for _ in range(2):
        process = subprocess.Popen([sys.executable, "-c", "pass"])
        process.wait()
        pids.append(process.pid)
    return pids


def failed_launch(pids):
    return RuntimeError(
        "hang.py failed (exit code 1). The start and the end of its output:\n"
        f"rank 0 pid {pids[0]}\nrank 1 pid {pids[1]}\n"
        "[rank0]: RuntimeError: [gloo/transport/tcp/unbound_buffer.cc:78] Timed out waiting 5000ms for recv "
        "operation to complete\n")


def test_hang_accepts_the_failed_launch_and_prints_what_rank_0_said(capsys, ended):
    assert check("ddp-practice.hang", failed_launch(ended), 9.4, ended)
    out = said(capsys)
    assert "launch raised RuntimeError after 9.4 s" in out and "Timed out waiting 5000ms" in out
    assert check("ddp-practice.hang", failed_launch(ended), 9.4, [str(p) for p in ended])  # as read


def test_hang_accepts_the_pids_as_a_set_or_in_any_order_and_seconds_as_numpy_or_a_timedelta(capsys, ended):
    error = failed_launch(ended)
    assert check("ddp-practice.hang", error, 9.4, set(ended))  # set(re.findall(...))
    assert check("ddp-practice.hang", error, 9, tuple(reversed(ended)))
    assert check("ddp-practice.hang", error, np.float32(9.4), [np.int64(p) for p in ended])
    assert check("ddp-practice.hang", error, datetime.timedelta(seconds=9.4), [f" {p}" for p in ended])
    assert "launch raised RuntimeError after 9.4 s" in said(capsys)


def test_hang_wants_the_exception_itself_not_its_text_or_nothing(capsys, ended):
    assert not check("ddp-practice.hang", str(failed_launch(ended)), 9.4, ended)
    assert "error should be the exception launch raised (except RuntimeError as err: error = err), but it is a str" \
        in said(capsys)
    assert not check("ddp-practice.hang", None, 9.4, ended)
    assert "error is None: launch raised nothing" in said(capsys)
    assert not check("ddp-practice.hang", ..., ..., ...)
    assert said(capsys).startswith("Not answered yet")


def test_hang_catches_a_launch_that_its_own_timeout_ended(capsys, ended):
    # no process-group timeout: the wait lasted until launch's 60 s, which raises TimeoutError
    assert not check("ddp-practice.hang", TimeoutError("hang.py did not finish within 60 s"), 95.0, ended)
    assert "launch raised TimeoutError: its own timeout of 60 s" in said(capsys)
    assert not check("ddp-practice.hang", failed_launch(ended), 61.0, ended)
    assert "seconds is 61.0, longer than rank 1's minute of sleep" in said(capsys)


def test_hang_catches_a_time_shorter_than_the_groups_timeout(capsys, ended):
    assert not check("ddp-practice.hang", failed_launch(ended), 0.002, ended)
    assert "seconds is 0.0, but the launch takes longer than the group's timeout of 5 s" in said(capsys)
    assert not check("ddp-practice.hang", failed_launch(ended), 5.0, ended)  # the timeout itself, from the text
    assert "time the whole launch call with the clock" in said(capsys)
    assert not check("ddp-practice.hang", failed_launch(ended), 13057.3, ended)  # milliseconds
    assert "were these milliseconds or nanoseconds?" in said(capsys)


def test_hang_catches_process_ids_not_of_the_launch_and_one_still_running(capsys, ended):
    assert not check("ddp-practice.hang", failed_launch(ended), 9.4, [ended[0], 1])
    assert "1 is not a process id of this launch" in said(capsys)
    assert not check("ddp-practice.hang", failed_launch(ended), 9.4, ended[0])
    assert "pids should be a list of the two process ids" in said(capsys)
    running = [os.getpid(), ended[1]]  # this process: it runs, as a leftover would
    assert not check("ddp-practice.hang", failed_launch(running), 9.4, running)
    assert f"process {os.getpid()} still exists after the launch" in said(capsys)


# --- ddp-practice.load-anywhere ---------------------------------------------------------------

def load_anywhere(model, state):
    state = copy.copy(state)
    if hasattr(state, "_metadata"):
        state._metadata = copy.copy(state._metadata)
    consume_prefix_in_state_dict_if_present(state, "module.")
    return model.load_state_dict(state)


def test_load_anywhere_accepts_a_copy_that_is_renamed_and_a_new_dictionary(capsys):
    assert check("ddp-practice.load-anywhere", load_anywhere)
    assert "All three load the same weights" in said(capsys)
    def new_dictionary(model, state):  # no _metadata in the new dictionary: fine for these models
        return model.load_state_dict({k.removeprefix("module."): v for k, v in state.items()})

    assert check("ddp-practice.load-anywhere", new_dictionary)


def load_a_deep_copy(model, state):
    """Another right answer: a deep copy (which keeps _metadata, and copies the tensors too)."""
    state = copy.deepcopy(state)
    consume_prefix_in_state_dict_if_present(state, "module.")
    model.load_state_dict(state)


def load_through_a_wrapper(model, state):
    """Another right answer: where every name has the prefix, load through a module that holds the model
    as `module`, as DDP does."""
    if all(name.startswith("module.") for name in state):
        wrapper = nn.Module()
        wrapper.module = model
        return wrapper.load_state_dict(state)
    return model.load_state_dict(state)


def load_or_strip(model, state):
    """Another right answer: try the names as they are, and strip the prefix where loading refuses them."""
    try:
        return model.load_state_dict(state)
    except RuntimeError:
        return model.load_state_dict({k.replace("module.", "", 1): v for k, v in state.items()})


@pytest.mark.parametrize("answer", [load_a_deep_copy, load_through_a_wrapper, load_or_strip])
def test_load_anywhere_written_other_ways_passes(capsys, answer):
    assert check("ddp-practice.load-anywhere", answer)
    assert "All three load the same weights" in said(capsys)


def test_load_anywhere_catches_a_load_that_changes_the_callers_dictionary(capsys):
    def in_place(model, state):
        consume_prefix_in_state_dict_if_present(state, "module.")
        return model.load_state_dict(state)

    def shallow(model, state):  # a new dict, but the same _metadata, which the function renames
        state = copy.copy(state)
        consume_prefix_in_state_dict_if_present(state, "module.")
        return model.load_state_dict(state)

    assert not check("ddp-practice.load-anywhere", in_place)
    assert "changed the names of the caller's dictionary, for the same names with module. in front" in said(capsys)
    assert not check("ddp-practice.load-anywhere", shallow)
    assert "changed the _metadata of the caller's dictionary" in said(capsys)


def test_load_anywhere_catches_a_load_of_the_prefix_as_it_is_or_skipped(capsys):
    assert not check("ddp-practice.load-anywhere", lambda model, state: model.load_state_dict(state))
    assert "loading the same names with module. in front fails (missing or unexpected names)" in said(capsys)
    assert not check("ddp-practice.load-anywhere", lambda model, state: model.load_state_dict(state, strict=False))
    assert "the model does not hold the checkpoint's embed.weight" in said(capsys)
    assert not check("ddp-practice.load-anywhere", {"module.0.weight": 1})
    assert "load_anywhere should be a function you wrote (def ...), but it is a dict" in said(capsys)


def test_load_anywhere_catches_a_prefix_stripped_as_characters_or_removed_everywhere(capsys):
    """`lstrip("module.")` strips a set of characters, `replace("module.", "")` every occurrence: both pass on
    names like 0.weight, and break embed.weight and head.submodule.weight."""
    def strip_chars(model, state):
        return model.load_state_dict({k.lstrip("module."): v for k, v in state.items()})

    def replace_all(model, state):
        return model.load_state_dict({k.replace("module.", ""): v for k, v in state.items()})

    for wrong in (strip_chars, replace_all):
        assert not check("ddp-practice.load-anywhere", wrong)
    for right in (lambda model, state: model.load_state_dict({k.removeprefix("module."): v for k, v in state.items()}),
                  lambda model, state: model.load_state_dict(
                      {(k[len("module."):] if k.startswith("module.") else k): v for k, v in state.items()})):
        assert check("ddp-practice.load-anywhere", right), said(capsys)
