"""The checks of lesson 01's exercises (exercises/devices.py): the worked answer passes, typical wrong
answers fail with the message that says what is wrong.

The checks depend on the machine (try_gpu(), the GPUs CUDA reports), so the right answers are run on
the four simulated machines of conftest's `machine` fixture: no GPU, one and two CUDA GPUs, a Mac.
same_place and gpu_memory_gib are also run by the checks themselves on machines they simulate
(two CUDA GPUs with GPU 0 or GPU 1 current, a driver too old for the build, no CUDA)."""

from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

import exercises.devices
from exercises import check
from exercises.core import _EXERCISES
from tools.series import exercises_of, read
from utils import try_all_gpus

ROOT = Path(__file__).resolve().parent.parent
MACHINES = ["cpu-only", "one-cuda-gpu", "two-cuda-gpus", "apple-mps"]
HERE = {  # what try_gpu(), try_gpu(1) and try_all_gpus() return on each simulated machine
    "cpu-only": ("cpu", "cpu", ["cpu"]),
    "one-cuda-gpu": ("cuda:0", "cpu", ["cuda:0"]),
    "two-cuda-gpus": ("cuda:0", "cuda:1", ["cuda:0", "cuda:1"]),
    "apple-mps": ("mps:0", "cpu", ["mps:0"]),
}
PREDICTED = {
    "Kaggle, two GPUs": ("cuda:0", "cuda:1", ["cuda:0", "cuda:1"]),
    "Colab, one GPU": ("cuda:0", "cpu", ["cuda:0"]),
    "a Mac with Apple silicon": ("mps:0", "cpu", ["mps:0"]),
    "this machine": HERE["cpu-only"],
}


@pytest.fixture
def simulated(machine, monkeypatch):
    """The `machine` fixture, plus a total memory for each simulated CUDA GPU (16 GiB)."""

    def simulate(name):
        machine(name)
        monkeypatch.setattr(torch.cuda, "get_device_properties",
                            lambda device=None: SimpleNamespace(total_memory=16 * 2**30))

    return simulate


def said(capsys, *args):
    """check(*args)'s answer and what it printed."""
    ok = check(*args)
    return ok, capsys.readouterr().out


def same_place(a, b):
    def resolve(d):
        d = torch.device(d)
        if d.type == "cuda" and d.index is None and torch.cuda.is_available():
            return torch.device("cuda", torch.cuda.current_device())
        if d.type == "mps" and d.index is None:
            return torch.device("mps", 0)
        return d

    return resolve(a) == resolve(b)


def sum_on_each(devices):
    return [torch.ones(3, device=d).sum().item() for d in devices]


def gpu_memory_gib():
    n_cuda = torch.cuda.device_count() if torch.cuda.is_available() else 0
    return {f"cuda:{i}": round(torch.cuda.get_device_properties(i).total_memory / 2**30, 1) for i in range(n_cuda)}


def test_each_exercise_of_lesson_01_has_a_check_and_the_solutions_call_it():
    lesson = read(ROOT / "notebooks/01_devices.ipynb")
    solved = read(ROOT / "notebooks/solutions/01_devices_solutions.ipynb")
    solutions = "\n".join(c.source for c in solved.cells)
    ids = [e.exercise_id for e in exercises_of(lesson)]
    assert ids == ["devices.predict-helpers", "devices.same-place", "devices.never-empty", "devices.gpu-memory"]
    for exercise_id in ids:
        assert _EXERCISES[exercise_id].test is not None
        assert f'assert check("{exercise_id}"' in solutions


@pytest.mark.parametrize("name", MACHINES)
def test_predictions_pass_on_every_simulated_machine(capsys, machine, name):
    machine(name)
    ok, out = said(capsys, "devices.predict-helpers", PREDICTED | {"this machine": HERE[name]})
    assert ok and f"try_gpu() is {HERE[name][0]}" in out


def test_predictions_accept_torch_devices_as_well_as_text(capsys, machine):
    machine("two-cuda-gpus")
    here = (torch.device("cuda:0"), torch.device("cuda:1"), [torch.device("cuda:0"), torch.device("cuda:1")])
    assert said(capsys, "devices.predict-helpers", PREDICTED | {"this machine": here})[0]


def test_predictions_accept_device_names_in_upper_case_with_spaces_and_lists_as_tuples(capsys, machine):
    machine("cpu-only")
    shouted = {machine_: (a.upper(), f" {b.upper()} ", tuple(d.upper().replace(":", ": ") for d in c))
               for machine_, (a, b, c) in PREDICTED.items()}
    ok, out = said(capsys, "devices.predict-helpers", shouted)
    assert ok and "try_gpu() is cpu" in out


def test_predictions_template_is_not_answered_yet(capsys):
    ok, out = said(capsys, "devices.predict-helpers", {m: (..., ..., [...]) for m in PREDICTED})
    assert not ok and "Not answered yet" in out


def test_a_device_without_its_index_fails_saying_the_helpers_name_the_index(capsys, machine):
    machine("cpu-only")
    ok, out = said(capsys, "devices.predict-helpers", PREDICTED | {"Kaggle, two GPUs": ("cuda", "cuda:1", ["cuda"])})
    assert not ok and "Kaggle, two GPUs: try_gpu() is not cuda: the helpers name every device with its index" in out


def test_a_second_gpu_on_colab_fails_naming_the_call(capsys, machine):
    machine("cpu-only")
    ok, out = said(capsys, "devices.predict-helpers", PREDICTED | {"Colab, one GPU": ("cuda:0", "cuda:1", ["cuda:0"])})
    assert not ok and "look again at Colab, one GPU: try_gpu(1)." in out


def test_the_cpu_predicted_for_a_two_gpu_machine_fails_for_this_machine(capsys, machine):
    machine("two-cuda-gpus")
    ok, out = said(capsys, "devices.predict-helpers", PREDICTED)
    assert not ok and "this machine: try_gpu(); this machine: try_gpu(1); this machine: try_all_gpus()" in out


def test_predictions_that_are_no_device_names_get_a_clear_message(capsys, machine):
    machine("cpu-only")
    ok, out = said(capsys, "devices.predict-helpers", PREDICTED | {"Colab, one GPU": (0, "cpu", [0])})
    assert not ok and 'predicted["Colab, one GPU"][0] is 0, which is not a device name' in out


def test_predictions_of_two_values_instead_of_three_fail(capsys, machine):
    machine("cpu-only")
    ok, out = said(capsys, "devices.predict-helpers", PREDICTED | {"Colab, one GPU": ("cuda:0", "cpu")})
    assert not ok and 'predicted["Colab, one GPU"] should be three answers' in out


@pytest.mark.parametrize("name", MACHINES)
def test_same_place_worked_answer_passes_on_every_simulated_machine(capsys, machine, name):
    machine(name)
    assert said(capsys, "devices.same-place", same_place)[0]


def same_place_as_text(a, b):
    """Another right answer: each device as its name, the index filled in, compared as text."""
    def name(d):
        if d.index is None and d.type == "cuda" and torch.cuda.is_available():
            return f"cuda:{torch.cuda.current_device()}"
        if d.index is None and d.type == "mps":
            return "mps:0"
        return str(d)

    return name(a) == name(b)


def same_place_asking_forgiveness(a, b):
    """Another right answer: ask for the current GPU, and keep a bare cuda as it is where that raises."""
    def resolve(d):
        if d.type == "cuda" and d.index is None:
            try:
                return torch.device("cuda", torch.cuda.current_device())
            except (RuntimeError, AssertionError):
                return d
        return torch.device("mps:0") if d.type == "mps" and d.index is None else d

    return resolve(a) == resolve(b)


def same_place_with_torch_accelerator(a, b):
    """Another right answer: the device-generic torch.accelerator API, and a tuple of type and index."""
    def key(d):
        if d.index is not None:
            return d.type, d.index
        if d.type == "cuda" and torch.accelerator.is_available():
            return d.type, torch.accelerator.current_device_index()
        return d.type, 0 if d.type == "mps" else None

    return key(a) == key(b)


@pytest.mark.parametrize("answer", [same_place_as_text, same_place_asking_forgiveness,
                                    same_place_with_torch_accelerator])
def test_same_place_written_other_ways_passes(capsys, answer):
    ok, out = said(capsys, "devices.same-place", answer)
    assert ok and "same_place finds the current GPU behind a bare cuda" in out


def test_same_place_with_equality_fails_on_a_bare_cuda(capsys):
    ok, out = said(capsys, "devices.same-place", lambda a, b: a == b)
    assert not ok and "same_place(cuda, cuda:0) returns False" in out and "cuda alone means the current GPU" in out


def test_same_place_comparing_types_fails_telling_two_gpus_apart(capsys):
    ok, out = said(capsys, "devices.same-place", lambda a, b: a.type == b.type)
    assert not ok and "same_place(cuda:0, cuda:1) returns True" in out and "compare the index too" in out


def test_same_place_taking_cuda_for_gpu_0_fails_when_gpu_1_is_current(capsys):
    def always_zero(a, b):
        def resolve(d):
            return torch.device(d.type, 0) if d.index is None else d
        return resolve(a) == resolve(b)

    ok, out = said(capsys, "devices.same-place", always_zero)
    assert not ok and "GPU 1 current" in out and "which is GPU 1 there" in out


def test_same_place_asking_cuda_without_cuda_fails_saying_to_ask_is_available_first(capsys):
    def unguarded(a, b):
        current = torch.cuda.current_device()
        fill = {"cuda": current, "mps": 0}
        return (a.type, fill.get(a.type, None) if a.index is None else a.index) == (
            b.type, fill.get(b.type, None) if b.index is None else b.index)

    ok, out = said(capsys, "devices.same-place", unguarded)
    assert not ok and "raised RuntimeError: Found no NVIDIA driver" in out and "torch.cuda.is_available()" in out


def test_same_place_leaving_mps_without_its_index_fails(capsys):
    def cuda_only(a, b):
        def resolve(d):
            if d.type == "cuda" and d.index is None and torch.cuda.is_available():
                return torch.device("cuda", torch.cuda.current_device())
            return d
        return resolve(a) == resolve(b)

    ok, out = said(capsys, "devices.same-place", cuda_only)
    assert not ok and "same_place(mps, mps:0) returns False: a Mac has one GPU" in out


def test_same_place_returning_text_gets_a_clear_message(capsys):
    ok, out = said(capsys, "devices.same-place", lambda a, b: "yes")
    assert not ok and "same_place(cuda:0, cuda:1) should be a bool, but it is a str." in out


def test_never_empty_worked_answer_passes(capsys):
    assert said(capsys, "devices.never-empty", sum_on_each, "b")[0]


def test_never_empty_sums_as_tensors_pass(capsys):
    assert said(capsys, "devices.never-empty", lambda ds: [torch.ones(3, device=d).sum() for d in ds], "b")[0]


@pytest.mark.parametrize("why", ["B", " b ", "b)", "b."])
def test_never_empty_accepts_the_letter_b_as_a_learner_writes_it(capsys, why):
    assert said(capsys, "devices.never-empty", sum_on_each, why)[0]


def test_never_empty_loop_that_raises_is_the_wrong_reason(capsys):
    ok, out = said(capsys, "devices.never-empty", sum_on_each, "a")
    assert not ok and "a for loop over an empty list raises nothing" in out


def test_never_empty_pytorch_falling_back_is_the_wrong_reason(capsys):
    ok, out = said(capsys, "devices.never-empty", sum_on_each, "c")
    assert not ok and "PyTorch never sees the list" in out


def test_never_empty_one_total_instead_of_a_list_fails(capsys):
    ok, out = said(capsys, "devices.never-empty", lambda ds: sum(torch.ones(3, device=d).sum().item() for d in ds), "b")
    assert not ok and "sum_on_each([]) returns 0, not a list with one sum per device." in out


def test_never_empty_forgotten_return_fails(capsys):
    def no_return(devices):
        for d in devices:
            torch.ones(3, device=d).sum()

    ok, out = said(capsys, "devices.never-empty", no_return, "b")
    assert not ok and "sum_on_each([]) returns None, not a list" in out


def test_never_empty_choice_that_is_no_letter_gets_a_clear_message(capsys):
    ok, out = said(capsys, "devices.never-empty", sum_on_each, 2)
    assert not ok and 'why should be one of "a", "b" or "c", but it is 2.' in out


@pytest.mark.parametrize("name", MACHINES)
def test_gpu_memory_worked_answer_passes_on_every_simulated_machine(capsys, simulated, name):
    simulated(name)
    ok, out = said(capsys, "devices.gpu-memory", gpu_memory_gib)
    expected = {"cpu-only": "{}", "apple-mps": "{}", "one-cuda-gpu": '{"cuda:0": 16.0}',
                "two-cuda-gpus": '{"cuda:0": 16.0, "cuda:1": 16.0}'}[name]
    assert ok and f"On this machine gpu_memory_gib() returns {expected}." in out


def gpu_memory_by_device():
    """Another right answer: the CUDA devices of try_all_gpus(), as torch.device keys."""
    return {d: torch.cuda.get_device_properties(d).total_memory / 2**30 for d in try_all_gpus() if d.type == "cuda"}


def gpu_memory_from_mem_get_info():
    """Another right answer: a loop, torch.cuda.mem_get_info's total, and 1024**3 for a GiB."""
    found = {}
    if torch.cuda.is_available():
        for i in range(torch.cuda.device_count()):
            _free, total = torch.cuda.mem_get_info(i)
            found[f"cuda:{i}"] = total / 1024**3
    return found


def gpu_memory_with_torch_accelerator():
    """Another right answer: torch.accelerator says whether this is a usable CUDA machine."""
    accelerator = torch.accelerator.current_accelerator(check_available=True)
    n_cuda = torch.accelerator.device_count() if accelerator is not None and accelerator.type == "cuda" else 0
    return {f"cuda:{i}": torch.cuda.get_device_properties(i).total_memory / 2**30 for i in range(n_cuda)}


@pytest.mark.parametrize("answer", [gpu_memory_by_device, gpu_memory_from_mem_get_info,
                                    gpu_memory_with_torch_accelerator])
def test_gpu_memory_written_other_ways_passes(capsys, answer):
    ok, out = said(capsys, "devices.gpu-memory", answer)
    assert ok and "On this machine gpu_memory_gib() returns {" in out


def test_gpu_memory_keyed_by_torch_device_names_the_gpus_as_text_when_right(capsys, simulated):
    simulated("two-cuda-gpus")
    ok, out = said(capsys, "devices.gpu-memory", gpu_memory_by_device)
    assert ok and 'returns {"cuda:0": 16.0, "cuda:1": 16.0}.' in out


def test_gpu_memory_template_is_not_answered_yet(capsys):
    def gpu_memory_gib():
        """The total memory of each usable CUDA GPU in GiB."""
        ...

    ok, out = said(capsys, "devices.gpu-memory", gpu_memory_gib)
    assert not ok and "Not answered yet" in out


def test_gpu_memory_in_gb_fails_saying_a_gib_is_2_to_the_30(capsys):
    def in_gb():
        n_cuda = torch.cuda.device_count() if torch.cuda.is_available() else 0
        return {f"cuda:{i}": torch.cuda.get_device_properties(i).total_memory / 1e9 for i in range(n_cuda)}

    ok, out = said(capsys, "devices.gpu-memory", in_gb)
    assert not ok and "that is GB (10**9 bytes), but a GiB is 2**30 bytes." in out


def test_gpu_memory_counting_gpus_without_is_available_fails_on_a_too_old_driver(capsys):
    def unguarded():
        return {f"cuda:{i}": torch.cuda.get_device_properties(i).total_memory / 2**30
                for i in range(torch.cuda.device_count())}

    ok, out = said(capsys, "devices.gpu-memory", unguarded)
    assert not ok and "driver is too old for the build" in out and "raises RuntimeError" in out
    assert "count the GPUs only when CUDA is usable" in out


def test_gpu_memory_keyed_by_number_fails_naming_the_keys(capsys):
    def by_number():
        n_cuda = torch.cuda.device_count() if torch.cuda.is_available() else 0
        return {i: torch.cuda.get_device_properties(i).total_memory / 2**30 for i in range(n_cuda)}

    ok, out = said(capsys, "devices.gpu-memory", by_number)
    assert not ok and "has the keys [0, 1]; it should have ['cuda:0', 'cuda:1']" in out


def test_gpu_memory_returning_a_list_gets_a_clear_message(capsys):
    ok, out = said(capsys, "devices.gpu-memory", lambda: [])
    assert not ok and "gpu_memory_gib() returns a list on a machine with two CUDA GPUs: return a dict" in out


def test_gpu_memory_checks_leave_torch_cuda_as_they_found_it(capsys):
    before = (torch.cuda.is_available, torch.cuda.device_count, torch.cuda.get_device_properties)
    said(capsys, "devices.gpu-memory", gpu_memory_gib)
    said(capsys, "devices.same-place", lambda a, b: a == b)
    assert (torch.cuda.is_available, torch.cuda.device_count, torch.cuda.get_device_properties) == before


def test_a_driver_too_old_for_the_build_raises_pytorchs_too_old_words_not_no_driver():
    with exercises.devices._devices_simulated(n_cuda=1, usable=False), pytest.raises(RuntimeError) as raised:
        torch.cuda.current_device()
    assert str(raised.value).startswith("The NVIDIA driver on your system is too old (found version 11040)")
    with exercises.devices._devices_simulated(n_cuda=0), pytest.raises(RuntimeError, match="Found no NVIDIA driver"):
        torch.cuda.current_device()


def test_never_empty_accepts_each_way_to_put_the_sum_on_its_device_and_rejects_a_device_ignored(capsys):
    """The right idea on the wrong device: a sum made on the CPU whatever device it is given looks right on
    a machine without a GPU, so the check hands it the CPU by another name, cpu:0, and sees whether it is used."""
    for right in (lambda ds: [torch.ones(3).to(d).sum().item() for d in ds],
                  lambda ds: [float(torch.ones(3, device=str(d)).sum()) for d in ds],
                  lambda ds: [torch.full((3,), 1.0, device=d).sum() for d in ds]):
        assert said(capsys, "devices.never-empty", right, "b")[0]
    ok, out = said(capsys, "devices.never-empty", lambda ds: [torch.ones(3).sum().item() for d in ds], "b")
    assert not ok and "made no tensor on cpu:0, the device it was given" in out
