"""The checks of lesson 15's exercises (exercises/builds.py): the worked answer passes, typical wrong
answers fail with the message that says what is wrong. The exercises are about machines described in
their text (a driver, a GPU, a wheel's arch list), so no check depends on the machine it runs on."""

from pathlib import Path

import numpy as np
import pytest
import torch

from exercises import check
from exercises.core import _EXERCISES
from tools.series import exercises_of, read
from utils import _has_kernels_for

ROOT = Path(__file__).resolve().parent.parent
BUILD = {
    "V100, driver serving CUDA 12.2": "cu126",
    "V100, driver 580": "cu126",
    "RTX 5090, driver serving CUDA 12.2": None,
    "RTX 5090, driver 580": "cu130",
}
COMMAND = "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cu126"
FITS = {"GTX 1080": True, "RTX 4090": True, "H100": True, "RTX 5090": False}


def said(capsys, *args):
    """check(*args)'s answer and what it printed."""
    ok = check(*args)
    return ok, capsys.readouterr().out


def test_each_exercise_of_lesson_15_has_a_check_and_the_solutions_call_it():
    lesson = read(ROOT / "notebooks/15_which_pytorch_build.ipynb")
    solved = read(ROOT / "notebooks/solutions/15_which_pytorch_build_solutions.ipynb")
    solutions = "\n".join(c.source for c in solved.cells)
    ids = [e.exercise_id for e in exercises_of(lesson)]
    assert ids == ["builds.which-build", "builds.arch-list", "builds.found-version"]
    for exercise_id in ids:
        assert _EXERCISES[exercise_id].test is not None
        assert f'assert check("{exercise_id}"' in solutions


def test_which_build_worked_answer_passes(capsys):
    ok, out = said(capsys, "builds.which-build", BUILD, COMMAND)
    assert ok and "cu126 is the one build of 2.13 with code for a V100" in out


@pytest.mark.parametrize("command", [
    "!pip install 'torch==2.13.0' --index-url=https://download.pytorch.org/whl/cu126/",
    "python -m pip install torch==2.13.* -i https://download.pytorch.org/whl/cu126",
    "pip3 install torch==2.13.0 torchvision==0.28.0 --index-url https://download.pytorch.org/whl/cu126",
    "%pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cu126",  # a notebook's magic
    "pip install torch==2.13.0+cu126 --index-url https://download.pytorch.org/whl/cu126",  # the build pinned too
    'pip install "torch == 2.13.0" --index-url https://download.pytorch.org/whl/cu126',
])
def test_which_build_other_spellings_of_the_command_pass(capsys, command):
    assert said(capsys, "builds.which-build", BUILD | {"RTX 5090, driver 580": "cu132"}, command)[0]


@pytest.mark.parametrize("written", [
    {"V100, driver 580": "CU126"}, {"V100, driver 580": "12.6"}, {"V100, driver serving CUDA 12.2": "CUDA 12.6"},
    {"V100, driver 580": 12.6}, {"RTX 5090, driver 580": "+cu132"}, {"RTX 5090, driver serving CUDA 12.2": "None"},
])
def test_which_build_accepts_a_build_written_as_its_cuda_version_or_in_upper_case(capsys, written):
    ok, out = said(capsys, "builds.which-build", BUILD | written, COMMAND)
    assert ok and "cu126 is the one build of 2.13 with code for a V100" in out


def test_which_build_a_cuda_version_is_judged_as_its_build(capsys):
    ok, out = said(capsys, "builds.which-build", BUILD | {"V100, driver serving CUDA 12.2": "CUDA 13.0"}, COMMAND)
    assert not ok and "V100, driver serving CUDA 12.2: cu130 is a CUDA 13 build" in out


def test_which_build_command_pinning_another_build_than_its_index_fails(capsys):
    ok, out = said(capsys, "builds.which-build", BUILD, COMMAND.replace("==2.13.0", "==2.13.0+cu130"))
    assert not ok and "command pins torch==2.13.0+cu130, the cu130 build, but the build for this case is cu126" in out


def test_which_build_template_is_not_answered_yet(capsys):
    ok, out = said(capsys, "builds.which-build", dict.fromkeys(BUILD, ...), ...)
    assert not ok and "Not answered yet" in out


def test_which_build_cuda_13_build_on_a_12_2_driver_fails_on_the_driver(capsys):
    ok, out = said(capsys, "builds.which-build", BUILD | {"V100, driver serving CUDA 12.2": "cu130"}, COMMAND)
    assert not ok and "cu130 is a CUDA 13 build, which needs a driver that serves CUDA 13.0 or newer" in out


def test_which_build_cuda_13_build_for_a_v100_fails_on_the_gpu(capsys):
    ok, out = said(capsys, "builds.which-build", BUILD | {"V100, driver 580": "cu130"}, COMMAND)
    assert not ok and "V100, driver 580: cu130 carries no code for the V100 (compute capability 7.0)" in out


def test_which_build_cu126_for_a_5090_on_an_old_driver_fails_on_the_driver_for_blackwell(capsys):
    ok, out = said(capsys, "builds.which-build", BUILD | {"RTX 5090, driver serving CUDA 12.2": "cu126"}, COMMAND)
    assert not ok and "whatever the build, this driver cannot run a Blackwell GPU such as the RTX 5090" in out


def test_which_build_none_where_a_build_fits_fails(capsys):
    ok, out = said(capsys, "builds.which-build", BUILD | {"RTX 5090, driver 580": None}, COMMAND)
    assert not ok and "RTX 5090, driver 580: one of 2.13's builds fits both this driver and this GPU." in out


def test_which_build_a_build_2_13_does_not_publish_fails(capsys):
    ok, out = said(capsys, "builds.which-build", BUILD | {"RTX 5090, driver 580": "cu128"}, COMMAND)
    assert not ok and "cu128 is not a build of PyTorch 2.13" in out


def test_which_build_an_arch_name_instead_of_a_tag_gets_a_clear_message(capsys):
    ok, out = said(capsys, "builds.which-build", BUILD | {"V100, driver 580": "sm_70"}, COMMAND)
    assert not ok and 'build["V100, driver 580"] is \'sm_70\': write a build tag such as "cu126"' in out


def test_which_build_unpinned_command_fails(capsys):
    ok, out = said(capsys, "builds.which-build", BUILD, COMMAND.replace("torch==2.13.0", "torch"))
    assert not ok and "command installs torch without pinning the release" in out


def test_which_build_command_from_another_index_fails_naming_it(capsys):
    ok, out = said(capsys, "builds.which-build", BUILD, COMMAND.replace("cu126", "cu130"))
    assert not ok and "command installs from https://download.pytorch.org/whl/cu130: the cu126 build comes" in out


def test_which_build_command_from_pypi_fails(capsys):
    ok, out = said(capsys, "builds.which-build", BUILD, "pip install torch==2.13.0")
    assert not ok and "command names no --index-url" in out


def test_which_build_command_that_is_not_pip_fails(capsys):
    ok, out = said(capsys, "builds.which-build", BUILD, "conda install pytorch")
    assert not ok and "command should be the pip command that installs torch" in out


def test_arch_list_worked_answer_passes(capsys):
    ok, out = said(capsys, "builds.arch-list", FITS, "cu128")
    assert ok and "Only the RTX 5090 is left out" in out


@pytest.mark.parametrize("oldest_build", ["CU128", "12.8", "CUDA 12.8", 12.8])
def test_arch_list_accepts_fits_computed_and_the_build_written_as_its_cuda_version(capsys, oldest_build):
    arch_list = ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]
    capabilities = {"GTX 1080": (6, 1), "RTX 4090": (8, 9), "H100": (9, 0), "RTX 5090": (12, 0)}
    fits = {}
    for gpu, capability in capabilities.items():  # a loop, and _has_kernels_for, as the exercise allows
        fits[gpu] = _has_kernels_for(capability, arch_list)
    ok, out = said(capsys, "builds.arch-list", fits, oldest_build)
    assert ok and "Blackwell code starts with the cu128 builds" in out


def test_arch_list_template_is_not_answered_yet(capsys):
    ok, out = said(capsys, "builds.arch-list", dict.fromkeys(FITS, ...), ...)
    assert not ok and "Not answered yet" in out


def test_arch_list_an_exact_match_only_reading_fails_naming_the_gpus(capsys):
    ok, out = said(capsys, "builds.arch-list", FITS | {"GTX 1080": False, "RTX 4090": False}, "cu128")
    assert not ok and "wrong for: GTX 1080, RTX 4090. Machine code sm_XY runs on compute capability X.Y up" in out


def test_arch_list_newer_generation_from_older_code_fails(capsys):
    ok, out = said(capsys, "builds.arch-list", FITS | {"RTX 5090": True}, "cu128")
    assert not ok and "wrong for: RTX 5090." in out


def test_arch_list_a_build_without_blackwell_code_fails(capsys):
    ok, out = said(capsys, "builds.arch-list", FITS, "cu126")
    assert not ok and "cu126 has no code for the RTX 5090" in out


def test_arch_list_a_newer_build_than_the_oldest_fails(capsys):
    ok, out = said(capsys, "builds.arch-list", FITS, "cu130")
    assert not ok and "cu130 has code for the RTX 5090, but an older build already has" in out


def test_arch_list_an_arch_name_instead_of_a_build_tag_gets_a_clear_message(capsys):
    ok, out = said(capsys, "builds.arch-list", FITS, "sm_120")
    assert not ok and "oldest_build is 'sm_120': write a build tag such as \"cu126\"." in out


def test_arch_list_text_instead_of_a_bool_gets_a_clear_message(capsys):
    ok, out = said(capsys, "builds.arch-list", FITS | {"H100": "yes"}, "cu128")
    assert not ok and 'fits["H100"] should be a bool, but it is a str.' in out


def test_found_version_worked_answer_passes(capsys):
    ok, out = said(capsys, "builds.found-version", "12.4", 13, "a")
    assert ok and "The driver serves CUDA 12.4" in out


def test_found_version_template_is_not_answered_yet(capsys):
    ok, out = said(capsys, "builds.found-version", ..., ..., ...)
    assert not ok and "Not answered yet" in out


@pytest.mark.parametrize("version", ["12.04", "1204", "12.0"])
def test_found_version_misread_number_fails_with_how_it_is_written(capsys, version):
    ok, out = said(capsys, "builds.found-version", version, 13, "a")
    assert not ok and "written 1000 × major + 10 × minor" in out


def test_found_version_a_cuda_12_build_fails_as_one_this_driver_runs(capsys):
    ok, out = said(capsys, "builds.found-version", "12.4", 12, "a")
    assert not ok and "a driver that serves CUDA 12.4 runs every CUDA 12 build" in out


def test_found_version_cu128_with_the_old_driver_is_the_wrong_fix(capsys):
    ok, out = said(capsys, "builds.found-version", "12.4", 13, "c")
    assert not ok and "no build helps while this driver stays" in out


def test_found_version_cu118_is_the_wrong_fix(capsys):
    ok, out = said(capsys, "builds.found-version", "12.4", 13, "b")
    assert not ok and "cu118 has no code for Blackwell either" in out


@pytest.mark.parametrize(("driver_serves", "pip_installed", "fix"), [
    (12.4, 13, "a"), ("CUDA 12.4", 13, "A"), (" 12.4 ", 13.0, "a)"), ("12.4", "13", "a."),
])
def test_found_version_accepts_the_answers_as_numbers_or_text_as_a_learner_writes_them(
        capsys, driver_serves, pip_installed, fix):
    ok, out = said(capsys, "builds.found-version", driver_serves, pip_installed, fix)
    assert ok and "The driver serves CUDA 12.4" in out


def test_found_version_the_number_from_the_message_as_it_is_fails_with_how_it_is_written(capsys):
    ok, out = said(capsys, "builds.found-version", 12040, 13, "a")
    assert not ok and 'driver_serves is "12040": in the message the driver\'s CUDA version is written' in out


def test_found_version_answers_of_the_wrong_type_get_a_clear_message(capsys):
    ok, out = said(capsys, "builds.found-version", ["12.4"], 13, "a")
    assert not ok and "driver_serves should be a str, but it is a list." in out
    ok, out = said(capsys, "builds.found-version", "12.4", 13.5, "a")
    assert not ok and "pip_installed should be an int, but it is a float." in out


def test_found_version_and_arch_list_accept_numpy_and_tensor_forms_of_the_right_answers(capsys):
    """np.int64(13), a tensor of 13, NumPy's bools: _expect takes them as the int or bool they hold, where
    it said "should be an int, but it is an int64" and "should be a bool, but it is a bool"."""
    for thirteen in (np.int64(13), torch.tensor(13), np.float32(13.0)):
        ok, out = said(capsys, "builds.found-version", "12.4", thirteen, "a")
        assert ok and "The driver serves CUDA 12.4" in out
    ok, out = said(capsys, "builds.arch-list", {gpu: np.bool_(fits) for gpu, fits in FITS.items()}, "cu128")
    assert ok and "Only the RTX 5090 is left out" in out
    ok, out = said(capsys, "builds.found-version", "12.4", np.float64(13.5), "a")
    assert not ok and "pip_installed should be an int, but it is a float64." in out


def test_which_build_accepts_a_compatible_release_pin_as_pep_440_reads_it(capsys):
    """`torch~=2.13.0` means `torch==2.13.*`: pinned to the release, as the lesson asks."""
    command = COMMAND.replace("torch==2.13.0", "torch~=2.13.0")
    assert said(capsys, "builds.which-build", dict(BUILD), command)[0]
    assert not check("builds.which-build", dict(BUILD), COMMAND.replace("torch==2.13.0", "torch~=2.13"))


def test_which_build_says_when_the_command_pins_another_release(capsys):
    ok, out = said(capsys, "builds.which-build", dict(BUILD), COMMAND.replace("torch==2.13.0", "torch==2.12.0"))
    assert not ok and "command pins torch==2.12.0, another release than the 2.13.0" in out
