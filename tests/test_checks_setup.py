"""The checks of lesson 00's exercises (exercises/setup.py): the worked answer passes, typical wrong
answers fail with the message that says what is wrong. None of them depends on the machine: the
facts are written into the answers, and the check calls setup_advice with them."""

import re
from pathlib import Path

import pytest
import torch

from exercises import check
from exercises.core import _EXERCISES
from tools.series import exercises_of, read

ROOT = Path(__file__).resolve().parent.parent
KAGGLE = dict(driver_cuda=None, torch_cuda="12.6", cuda_available=False, service="Kaggle")
LAB_SERVER = {"build of 2.13": None, "newest release": "2.7", "build of 2.7.1": "cu118", "why": "a"}


def said(capsys, *args):
    """check(*args)'s answer and what it printed."""
    ok = check(*args)
    return ok, capsys.readouterr().out


def torch_too_old(version):
    found = re.match(r"(\d+)\.(\d+)", version)
    return (int(found[1]), int(found[2])) < (2, 4)


def version_advice(version):
    return f"PyTorch {version} is older than 2.4: install a newer release." if torch_too_old(version) else None


def test_each_exercise_of_lesson_00_has_a_check_and_the_solutions_call_it():
    lesson = read(ROOT / "notebooks/00_check_your_setup.ipynb")
    solved = read(ROOT / "notebooks/solutions/00_check_your_setup_solutions.ipynb")
    solutions = "\n".join(c.source for c in solved.cells)
    ids = [e.exercise_id for e in exercises_of(lesson)]
    assert ids == ["setup.kaggle-no-gpu", "setup.old-driver", "setup.too-old"]
    for exercise_id in ids:
        assert _EXERCISES[exercise_id].test is not None
        assert f'assert check("{exercise_id}"' in solutions


def test_kaggle_right_facts_and_prediction_pass(capsys):
    ok, out = said(capsys, "setup.kaggle-no-gpu", KAGGLE, "b")
    assert ok and "switch a GPU on" in out


def test_kaggle_facts_written_another_way_and_the_letter_in_upper_case_pass(capsys):
    # another CUDA version of the build, the default mps_available written out, "B)" for b
    facts = {"service": "Kaggle", "cuda_available": False, "mps_available": False, "driver_cuda": None,
             "torch_cuda": "12.4"}
    ok, out = said(capsys, "setup.kaggle-no-gpu", facts, "B)")
    assert ok and "switch a GPU on" in out


def test_kaggle_template_is_not_answered_yet(capsys):
    template = dict(driver_cuda=..., torch_cuda=..., cuda_available=..., service=...)
    ok, out = said(capsys, "setup.kaggle-no-gpu", template, ...)
    assert not ok and "Not answered yet" in out


def test_kaggle_facts_of_a_cpu_only_build_fail_as_such(capsys):
    ok, out = said(capsys, "setup.kaggle-no-gpu", KAGGLE | {"torch_cuda": None}, "b")
    assert not ok and "the value of a CPU-only build" in out


def test_kaggle_with_a_driver_version_fails_saying_there_is_no_driver(capsys):
    ok, out = said(capsys, "setup.kaggle-no-gpu", KAGGLE | {"driver_cuda": "12.6"}, "b")
    assert not ok and "there is no driver for driver_cuda_version() to ask" in out


def test_kaggle_with_cuda_available_fails(capsys):
    ok, out = said(capsys, "setup.kaggle-no-gpu", KAGGLE | {"cuda_available": True}, "b")
    assert not ok and "cannot use CUDA" in out


def test_kaggle_with_a_malformed_version_says_setup_advice_refuses_it(capsys):
    ok, out = said(capsys, "setup.kaggle-no-gpu", KAGGLE | {"torch_cuda": "cu126"}, "b")
    assert not ok and "setup_advice refuses these facts: ValueError: not a CUDA version: 'cu126'" in out


def test_kaggle_wrong_prediction_fails_after_right_facts(capsys):
    ok, out = said(capsys, "setup.kaggle-no-gpu", KAGGLE, "a")
    assert not ok and "the facts are right, but the advice is not (a)" in out


def test_kaggle_facts_of_the_wrong_type_get_a_clear_message(capsys):
    ok, out = said(capsys, "setup.kaggle-no-gpu", [None, "12.6", False, "Kaggle"], "b")
    assert not ok and "kaggle should be a dict, but it is a list." in out


def test_old_driver_right_answers_pass_in_either_form_of_build(capsys):
    assert said(capsys, "setup.old-driver", LAB_SERVER)[0]
    assert said(capsys, "setup.old-driver", LAB_SERVER | {"build of 2.7.1": "11.8", "newest release": "2.7.*"})[0]


@pytest.mark.parametrize("answer", [
    {"build of 2.7.1": "CUDA 11.8"}, {"build of 2.7.1": "+cu118"}, {"build of 2.7.1": 11.8},
    {"build of 2.7.1": " CU118 "}, {"newest release": "torch==2.7.*"}, {"newest release": "PyTorch 2.7"},
    {"newest release": 2.7}, {"newest release": "2.7.x"}, {"build of 2.13": "None"}, {"why": "A)"},
])
def test_old_driver_right_answers_pass_as_a_learner_writes_them(capsys, answer):
    ok, out = said(capsys, "setup.old-driver", LAB_SERVER | answer)
    assert ok and "PyTorch 2.7 is the newest release with one (cu118)" in out


def test_old_driver_a_cuda_version_of_another_build_fails_as_that_build(capsys):
    ok, out = said(capsys, "setup.old-driver", LAB_SERVER | {"build of 2.7.1": "CUDA 12.6"})
    assert not ok and 'lab_server["build of 2.7.1"] is cu126, a CUDA 12 build' in out
    ok, out = said(capsys, "setup.old-driver", LAB_SERVER | {"newest release": "torch==2.6.*"})
    assert not ok and 'lab_server["newest release"] is "torch==2.6.*", but the advice offers another release' in out


def test_old_driver_naming_a_cuda_12_build_of_2_13_fails(capsys):
    ok, out = said(capsys, "setup.old-driver", LAB_SERVER | {"build of 2.13": "cu126"})
    assert not ok and 'lab_server["build of 2.13"] is cu126, a build this driver cannot run' in out


def test_old_driver_cuda_12_build_for_2_7_1_fails_naming_the_major_version(capsys):
    ok, out = said(capsys, "setup.old-driver", LAB_SERVER | {"build of 2.7.1": "cu126"})
    assert not ok and "a CUDA 12 build, which needs a driver that serves CUDA 12" in out


def test_old_driver_minor_version_reason_fails_with_minor_version_compatibility(capsys):
    ok, out = said(capsys, "setup.old-driver", LAB_SERVER | {"why": "b"})
    assert not ok and "minor-version compatibility" in out


def test_old_driver_missing_answer_is_named(capsys):
    answer = {k: v for k, v in LAB_SERVER.items() if k != "newest release"}
    ok, out = said(capsys, "setup.old-driver", answer)
    assert not ok and 'lab_server lacks an answer for: "newest release".' in out


def test_too_old_worked_answer_passes(capsys):
    ok, out = said(capsys, "setup.too-old", torch_too_old, version_advice)
    assert ok and "version_advice returns None" in out


def too_old_by_splitting(version):
    """Another right answer: split on the dots, and compare a tuple of the first two numbers."""
    major, minor = version.split(".")[:2]
    return (int(major), int(minor)) < (2, 4)


def too_old_by_torch_version(version):
    """Another right answer: PyTorch's own version type, which compares with text."""
    return torch.torch_version.TorchVersion(version) < "2.4"


def too_old_in_two_steps(version):
    """Another right answer: the major number first, then the minor one."""
    major, minor = (int(x) for x in re.match(r"(\d+)\.(\d+)", version).groups())
    return major < 2 or (major == 2 and minor < 4)


@pytest.mark.parametrize("answer", [too_old_by_splitting, too_old_by_torch_version, too_old_in_two_steps])
def test_too_old_written_other_ways_passes(capsys, answer):
    advice = lambda v: "Update PyTorch to 2.4 or newer." if answer(v) else None  # noqa: E731
    ok, out = said(capsys, "setup.too-old", answer, advice)
    assert ok and "version_advice returns None" in out


def test_too_old_template_is_not_answered_yet(capsys):
    def torch_too_old(version):
        """True when this PyTorch version is older than 2.4."""
        ...

    ok, out = said(capsys, "setup.too-old", torch_too_old, version_advice)
    assert not ok and "Not answered yet" in out


def test_too_old_comparing_text_fails_saying_2_13_sorts_before_2_4(capsys):
    ok, out = said(capsys, "setup.too-old", lambda v: v < "2.4", version_advice)
    assert not ok and 'torch_too_old("2.13.0+cpu") returns True' in out and '"2.13" sorts before "2.4"' in out


def test_too_old_comparing_a_float_fails_saying_what_a_float_makes_of_it(capsys):
    ok, out = said(capsys, "setup.too-old", lambda v: float(".".join(v.split(".")[:2])) < 2.4, version_advice)
    assert not ok and "returns True, but 2.13.0+cpu is not older than 2.4" in out and "2.10 is 2.1" in out


def test_too_old_int_of_every_part_fails_on_a_development_build(capsys):
    def every_part(version):
        return tuple(int(x) for x in version.split("+")[0].split(".")) < (2, 4)

    ok, out = said(capsys, "setup.too-old", every_part, version_advice)
    assert not ok and 'torch_too_old("2.14.0a0+git1234") raised ValueError' in out


def test_too_old_comparing_major_and_minor_apart_fails_on_3_0(capsys):
    def major_or_minor(version):
        major, minor = (int(x) for x in re.match(r"(\d+)\.(\d+)", version).groups())
        return major < 2 or minor < 4

    ok, out = said(capsys, "setup.too-old", major_or_minor, version_advice)
    assert not ok and 'torch_too_old("3.0.0") returns True' in out and "compare the major number first" in out


def test_too_old_returning_text_instead_of_a_bool_gets_a_clear_message(capsys):
    ok, out = said(capsys, "setup.too-old", lambda v: "yes" if torch_too_old(v) else "no", version_advice)
    assert not ok and 'torch_too_old("2.3.1+cu121") should be a bool, but it is a str.' in out


@pytest.mark.parametrize("advice, case", [(lambda v: torch_too_old(v), "2.3.1+cu121"),
                                          (lambda v: "" if torch_too_old(v) else None, "2.3.1+cu121")])
def test_too_old_advice_that_is_no_sentence_for_an_old_release_fails(capsys, advice, case):
    ok, out = said(capsys, "setup.too-old", torch_too_old, advice)
    assert not ok and f'version_advice("{case}") returns' in out and "return one sentence" in out


def test_too_old_advice_for_a_new_release_must_be_none(capsys):
    ok, out = said(capsys, "setup.too-old", torch_too_old, lambda v: version_advice(v) or "all fine")
    assert not ok and "version_advice(\"2.13.0\") returns 'all fine'" in out
