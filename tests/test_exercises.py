"""The exercise checker (exercises/core.py, collected into utils.py) and the shape of every lesson's
exercises: an answer cell and a check (or a listed reason), a solution that passes the same check.

The checks of each lesson have their own tests (tests/test_checks_<topic>.py). Machines with GPUs
are simulated here as in the rest of the tests: no GPU is needed.
"""

from __future__ import annotations

import re
import statistics
import time
from pathlib import Path

import numpy as np
import pytest
import torch

import exercises.copies
import exercises.core
import exercises.messages
import utils
from tools.series import NOTEBOOKS, ROOT, exercises_of, lessons, read

EXERCISES_DIR = ROOT / "exercises"
HARDWARE = re.compile(r"^(any machine|a CUDA GPU|a GPU|an NVIDIA GPU|two processes|a machine with)")


# --- check() and hint() ----------------------------------------------------------------------

def test_an_exercise_that_does_not_exist_raises_a_value_error_naming_the_known_ones():
    with pytest.raises(ValueError, match=r"no exercise 'copies\.nope'.*copies\.other-way"):
        exercises.check("copies.nope", 1)
    with pytest.raises(ValueError, match="the exercises are"):
        exercises.hint(42)


@pytest.mark.parametrize("answer", [..., [..., 1], {"a": ...}])
def test_the_template_is_not_answered_yet_and_returns_false(capsys, answer):
    assert not exercises.check("copies.other-way", answer)
    assert capsys.readouterr().out.startswith("Not answered yet")


def test_a_function_whose_body_is_only_the_ellipsis_is_not_answered_yet(capsys):
    namespace: dict = {}
    exec(compile('def to_numpy(t):\n    """A docstring."""\n    ...\n', "<learner>", "exec"), namespace)
    # exec'd code has no source for inspect to read: it is judged by what it does, and it returns None
    assert not exercises.check("copies.to-numpy", namespace["to_numpy"])
    assert "returns a NoneType" in capsys.readouterr().out

    def to_numpy(t):
        """A docstring."""
        ...

    assert not exercises.check("copies.to-numpy", to_numpy)
    assert capsys.readouterr().out.startswith("Not answered yet")


@pytest.mark.parametrize(("answer", "printed"), [
    (None, "result should be a tensor (torch.Tensor), but it is a NoneType"),
    ("cpu", "result should be a tensor (torch.Tensor), but it is a str"),
    ([1.0, 2.0], "result should be a tensor (torch.Tensor), but it is a list"),
    (np.zeros(2), "result should be a tensor (torch.Tensor), but it is an ndarray"),
])
def test_an_answer_of_the_wrong_type_gets_a_clear_message(capsys, answer, printed):
    assert not exercises.check("copies.other-way", answer)
    assert printed in capsys.readouterr().out


def test_too_many_or_too_few_answers_are_named_not_raised(capsys):
    assert not exercises.check("copies.other-way", 1, 2)
    assert "takes 1 answer(s) after the exercise's name (result), but got 2" in capsys.readouterr().out
    assert not exercises.check("copies.copy-true", lambda a, b: True)
    assert "(shares_memory, answer), but got 1" in capsys.readouterr().out


def test_an_answer_that_raises_is_reported_and_the_check_returns_false(capsys):
    def to_numpy(t):
        raise KeyError("mine")

    assert not exercises.check("copies.to-numpy", to_numpy)
    assert "your code raised KeyError: 'mine'" in capsys.readouterr().out


def test_a_wrong_answer_offers_the_hint_and_hint_prints_it(capsys):
    assert not exercises.check("copies.which-copy", {name: True for name in exercises.copies._COPIES_CALLS})
    out = capsys.readouterr().out
    assert out.startswith("✗ Not yet:") and 'hint("copies.which-copy")' in out
    exercises.hint("copies.which-copy")
    assert capsys.readouterr().out.strip() == exercises.messages.MESSAGES["copies.which-copy/hint"]


def test_every_exercise_names_messages_that_exist_and_every_message_is_used():
    assert exercises.core._EXERCISES, "no exercise is registered"
    for ex in exercises.core._EXERCISES.values():
        assert callable(ex.test), ex.id
        assert ex.hint is None or ex.hint in exercises.messages.MESSAGES, (ex.id, ex.hint)
    sources = "\n".join(p.read_text(encoding="utf-8") for p in EXERCISES_DIR.glob("*.py"))
    named = set(re.findall(r"""["']([a-z0-9-]+(?:\.[a-z0-9-]+)?/[a-z0-9.-]+)["']""", sources))
    unknown = sorted(k for k in named if k not in exercises.messages.MESSAGES and "{" not in k)
    assert not unknown, f"keys named in exercises/ that MESSAGES lacks: {unknown}"
    implicit = {f"{i}/right" for i in exercises.core._EXERCISES}
    unused = sorted(k for k in exercises.messages.MESSAGES if k not in named and k not in implicit
                    and not re.search(rf"""["']{re.escape(k.rsplit("/", 1)[0])}/\{{""", sources))
    assert not unused, f"messages nothing prints (remove them): {unused}"


def test_checks_print_only_what_the_message_table_holds():
    # Every print in exercises/ prints a message of the table, through _say.
    for path in EXERCISES_DIR.glob("*.py"):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.match(r"\s*print\(", line):
                assert "_say(" in line, f"{path.name}:{n} prints a text of its own: {line.strip()}"


# --- timers, against a simulated GPU ------------------------------------------------------

def honest_timer(fn, device, repeats=25):
    fn()
    utils.synchronize(device)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        utils.synchronize(device)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def no_sync_timer(fn, device, repeats=25):
    fn()
    utils.synchronize(device)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def cold_timer(fn, device, repeats=25):
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / repeats


def verdict(timer):
    result, gpu = exercises.core._time_with_a_simulated_gpu(timer)
    try:
        exercises.core._timer_verdict(gpu)
    except exercises.core._Wrong as wrong:
        return result, wrong.key
    return result, None


@pytest.mark.parametrize("name", ["cpu-only", "one-cuda-gpu", "two-cuda-gpus", "apple-mps"])
def test_an_honest_timer_measures_the_simulated_work_on_every_machine(machine, name):
    machine(name)  # the timer is handed the machine's GPU (else cuda:0), and waits for the simulated one
    result, wrong = verdict(honest_timer)
    assert wrong is None and result == pytest.approx(1e-3, rel=0.05)


def test_a_timer_that_reads_the_clock_before_the_wait_is_caught():
    result, wrong = verdict(no_sync_timer)
    assert wrong == "core/timer-read-before-wait" and result < 1e-4  # it measured only the launch


def test_a_timer_that_times_the_cold_first_call_is_caught_even_through_torch_cuda():
    assert verdict(cold_timer)[1] == "core/timer-no-warm-up"


def test_timers_that_never_call_or_never_read_a_clock_are_caught():
    assert verdict(lambda fn, device: 0.0)[1] == "core/timer-never-called"
    assert verdict(lambda fn, device: fn())[1] == "core/timer-no-clock"


def test_a_clock_and_a_synchronize_imported_by_name_are_instrumented_too():
    namespace = {"__name__": "learner"}
    exec(compile("from time import perf_counter\nfrom utils import synchronize\n"
                 "def timer(fn, device):\n    fn(); synchronize(device)\n    s = perf_counter()\n"
                 "    fn(); synchronize(device)\n    return perf_counter() - s\n", "learner", "exec"), namespace)
    result, wrong = verdict(namespace["timer"])
    assert wrong is None and result == pytest.approx(0.9e-3, rel=0.05)  # the second call's work
    assert namespace["perf_counter"] is time.perf_counter and namespace["synchronize"] is utils.synchronize


def test_the_real_clocks_and_synchronizes_come_back_even_when_the_timer_raises():
    before = (time.perf_counter, torch.cuda.synchronize, utils.synchronize)

    def broken(fn, device):
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        exercises.core._time_with_a_simulated_gpu(broken)
    assert (time.perf_counter, torch.cuda.synchronize, utils.synchronize) == before


@pytest.mark.parametrize(("name", "with_article"), [
    ("ndarray", "an ndarray"), ("int64", "an int64"), ("OrderedDict", "an OrderedDict"), ("uint8", "a uint8"),
    ("UserDict", "a UserDict"), ("str", "a str"), ("NoneType", "a NoneType"), ("float", "a float"),
])
def test_a_type_name_gets_the_article_of_how_it_is_read(name, with_article):
    assert exercises.core._a(name) == with_article


@pytest.mark.parametrize(("value", "kind", "python"), [
    (np.True_, bool, True), (torch.tensor(False), bool, False), (np.int64(3), int, 3), (np.float32(3.0), int, 3),
    (3.0, int, 3), (torch.tensor(7), int, 7), (np.float32(0.5), float, 0.5), (torch.tensor(2), float, 2.0),
    (np.int64(4), (int, float), 4),
])
def test_expect_takes_a_number_written_another_way_as_pythons(value, kind, python):
    got = exercises.core._expect(value, kind, "x")
    assert got == python and type(got) is type(python)


@pytest.mark.parametrize(("value", "kind", "printed"), [
    (np.int64(1), bool, "x should be a bool, but it is an int64"),
    (torch.tensor(1), bool, "x should be a bool, but it is a Tensor"),
    (np.True_, int, "x should be an int, but it is a bool"),
    (2.5, int, "x should be an int, but it is a float"),
    (torch.ones(2), float, "x should be a float, but it is a Tensor"),
    (64, float, "x should be a float, but it is an int"),
])
def test_expect_still_refuses_what_is_not_that_number(value, kind, printed):
    with pytest.raises(exercises.core._Wrong) as wrong:
        exercises.core._expect(value, kind, "x")
    assert exercises.core._say(wrong.value.key, **wrong.value.fields) == printed + "."


# --- tensors that behave as if on a GPU ---------------------------------------------------

@pytest.mark.parametrize("device", ["cuda:0", "cuda:1", "mps"])
def test_a_pretend_gpu_tensor_refuses_numpy_until_copied_to_the_cpu(device):
    t = exercises.core._on_a_gpu(torch.arange(3.0), device)
    assert str((t * 2).device) == (device if ":" in device else device + ":0")
    with pytest.raises(TypeError, match=r"device type tensor to numpy\. Use Tensor\.cpu\(\)"):
        (t + 1).numpy()
    assert type(t.cpu()) is torch.Tensor and t.to("cpu").numpy().tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(ValueError, match="must be a GPU"):
        exercises.core._on_a_gpu(t, "cpu")


def gpu(values=(0.0, 1.0, 2.0), device="cuda:0"):
    return exercises.core._on_a_gpu(torch.tensor(values), device)


SAME_DEVICE = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and "
CHECKED = ("Expected all tensors to be on the same device, but got {} is on {}, different from other tensors on {} "
           "(when checking argument in method wrapper_CUDA_{})")
TO_NUMPY = "can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first."
# What a tensor on cuda:0 does with each operation a learner's answer may use: a value (the operation
# works, as it does on CUDA) or an exception and PyTorch's words. Sources, in PyTorch's repository:
# tensor_numpy.cpp (numpy() refuses a tensor off the CPU; numpy(force=True) copies it first, as
# Tensor.numpy's documentation says), Tensor.tolist/item and Python's float()/int()/bool() copy the
# values to the host (tensor_list.cpp, _local_scalar_dense), TensorIterator.cpp's compute_types (two
# devices refused, a CPU tensor of no dimension taken as a number), TensorConversions.cpp (to() its own
# device returns the tensor itself; a device without an index is the current one), _tensor_str.py (the
# device is printed after the values), adaption.cpp (a product's kernel checks its arguments in order), Linear.cpp
# and LinearAlgebra.cpp (which kernel linear and matmul call), c10/core/TensorImpl.h (is_cpu is false off the
# CPU; get_device() is the device's index, -1 only on the CPU), Tensor.to's documentation in _tensor_docs.py
# (to(other) "Returns a Tensor with same torch.dtype and torch.device as the Tensor other"), as_tensor's in
# _torch_docs.py ("If data is a tensor with the requested dtype and device then data itself is returned,
# otherwise a new tensor is returned"; device=None is data's own device) and internal_new_from_data in
# torch/csrc/utils/tensor_new.cpp (as_tensor and torch.tensor move a tensor with var.to(device, dtype), on
# its own device where no device is given; torch.tensor copies it). as_tensor and torch.tensor take the
# tensor as data, which reaches no __torch_function__: those rows run as in a check, whose first pretend
# tensor turns on the mode that sees them (exercises.core._OnAGPUCalls).


def in_a_check(run):
    """``run()`` as a check runs it (exercises.core._on_a_gpu_calls)."""
    def ran():
        with exercises.core._on_a_gpu_calls():
            return run()
    return ran


CUDA_SEMANTICS = [
    ("t.tolist()", lambda: gpu().tolist(), [0.0, 1.0, 2.0]),
    ("t.sum().item()", lambda: gpu().sum().item(), 3.0),
    ("float(t.sum())", lambda: float(gpu().sum()), 3.0),
    ("int(t[1])", lambda: int(gpu()[1]), 1),
    ("bool(t.sum() > 0)", lambda: bool(gpu().sum() > 0), True),
    ("f'{t.sum():.1f}'", lambda: f"{gpu().sum():.1f}", "3.0"),
    ("str(t)", lambda: str(gpu()), "tensor([0., 1., 2.], device='cuda:0')"),
    ("repr(t.half())", lambda: repr(gpu().half()), "tensor([0., 1., 2.], device='cuda:0', dtype=torch.float16)"),
    ("type(t.cpu())", lambda: type(gpu().cpu()), torch.Tensor),
    ("t.to('cpu').device", lambda: gpu().to("cpu").device, torch.device("cpu")),
    ("t.to(torch.device('cpu'), torch.float64).dtype", lambda: gpu().to(torch.device("cpu"), torch.float64).dtype,
     torch.float64),
    ("t.to(cpu_tensor).device", lambda: gpu().to(torch.zeros(1)).device, torch.device("cpu")),
    ("t.to(float64 cpu tensor).dtype", lambda: gpu().to(torch.zeros(1, dtype=torch.float64)).dtype, torch.float64),
    ("t.to(float16 tensor on cuda:1).dtype", lambda: gpu().to(gpu([0.0], "cuda:1").half()).dtype, torch.float16),
    ("t.to(tensor=cuda:1 tensor).device", lambda: gpu().to(tensor=gpu([0.0], "cuda:1")).device,
     torch.device("cuda:1")),
    ("int64 cpu tensor.to(t).device", lambda: torch.zeros(2, dtype=torch.int64).to(gpu()).device,
     torch.device("cuda:0")),
    ("int64 cpu tensor.to(t).dtype", lambda: torch.zeros(2, dtype=torch.int64).to(gpu()).dtype, torch.float32),
    ("torch.as_tensor(t, device='cpu').device", in_a_check(lambda: torch.as_tensor(gpu(), device="cpu").device),
     torch.device("cpu")),
    ("type(torch.as_tensor(t, device='cpu'))", in_a_check(lambda: type(torch.as_tensor(gpu(), device="cpu"))),
     torch.Tensor),
    ("torch.as_tensor(t) is t", in_a_check(lambda: (lambda t: torch.as_tensor(t) is t)(gpu())), True),
    ("torch.as_tensor(t, device='cuda:0') is t",
     in_a_check(lambda: (lambda t: torch.as_tensor(t, device="cuda:0") is t)(gpu())), True),
    ("torch.as_tensor(t, dtype=torch.float64).device",
     in_a_check(lambda: torch.as_tensor(gpu(), dtype=torch.float64).device), torch.device("cuda:0")),
    ("torch.as_tensor(t, device='cuda:1').device", in_a_check(lambda: torch.as_tensor(gpu(), device="cuda:1").device),
     torch.device("cuda:1")),
    ("torch.tensor(t).device", in_a_check(lambda: torch.tensor(gpu()).device),
     torch.device("cuda:0")),
    ("t.numpy(force=True).tolist()", lambda: gpu().numpy(force=True).tolist(), [0.0, 1.0, 2.0]),
    ("np.array(t.tolist()).tolist()", lambda: np.array(gpu().tolist()).tolist(), [0.0, 1.0, 2.0]),
    ("t.to('cuda:0') is t", lambda: (lambda t: t.to("cuda:0") is t)(gpu()), True),
    ("t.is_cpu", lambda: gpu().is_cpu, False),
    ("cuda:1's t.get_device()", lambda: gpu(device="cuda:1").get_device(), 1),
    ("mps's t.get_device()", lambda: gpu(device="mps").get_device(), 0),
    ("t.to('cuda:1').device", lambda: gpu().to("cuda:1").device, torch.device("cuda:1")),
    ("cuda:1's t.to('cuda').device", lambda: gpu(device="cuda:1").to("cuda").device, torch.device("cuda:0")),
    ("t.cuda(1).device", lambda: gpu().cuda(1).device, torch.device("cuda:1")),
    ("(t * 2).device", lambda: (gpu() * 2).device, torch.device("cuda:0")),
    ("(t + torch.tensor(1.0)).device", lambda: (gpu() + torch.tensor(1.0)).device, torch.device("cuda:0")),
    ("t[torch.tensor([0, 2])].tolist()", lambda: gpu()[torch.tensor([0, 2])].tolist(), [0.0, 2.0]),
    ("t.copy_(cpu).tolist()", lambda: gpu().copy_(torch.ones(3)).tolist(), [1.0, 1.0, 1.0]),
    ("t.numpy()", lambda: gpu().numpy(), TypeError(TO_NUMPY)),
    ("t.detach().numpy()", lambda: gpu().detach().numpy(), TypeError(TO_NUMPY)),
    ("np.asarray(t)", lambda: np.asarray(gpu()), TypeError(TO_NUMPY)),
    ("t + cpu", lambda: gpu() + torch.ones(3), RuntimeError(SAME_DEVICE + "cpu!")),
    ("torch.cat([t, cpu])", lambda: torch.cat([gpu(), torch.ones(3)]), RuntimeError(SAME_DEVICE + "cpu!")),
    ("t @ cpu matrix", lambda: gpu() @ torch.ones(3, 2), RuntimeError(CHECKED.format("mat2", "cpu", "cuda:0", "mm"))),
    ("cpu matrix @ t", lambda: torch.ones(2, 3).mm(gpu([[1.0], [2.0], [3.0]])),
     RuntimeError(CHECKED.format("mat2", "cuda:0", "cpu", "mm"))),
    ("cpu Linear(t) of a batch", lambda: torch.nn.Linear(3, 2)(gpu([[0.0, 1.0, 2.0]])),
     RuntimeError(CHECKED.format("mat1", "cuda:0", "cpu", "addmm"))),
    ("cpu Linear(t) of one vector", lambda: torch.nn.Linear(3, 2)(gpu()),
     RuntimeError(CHECKED.format("mat2", "cpu", "cuda:0", "mm"))),
    ("t + t on cuda:1", lambda: gpu() + gpu(device="cuda:1"), RuntimeError(SAME_DEVICE + "cuda:1!")),
]


@pytest.mark.parametrize(("operation", "run", "cuda_does"), CUDA_SEMANTICS, ids=[c[0] for c in CUDA_SEMANTICS])
def test_a_pretend_gpu_tensor_does_what_a_cuda_tensor_does(operation, run, cuda_does):
    if isinstance(cuda_does, Exception):
        with pytest.raises(type(cuda_does)) as raised:
            run()
        assert str(raised.value) == str(cuda_does)
    else:
        got = run()
        assert got == cuda_does and type(got) is type(cuda_does)


# --- every lesson's exercises ----------------------------------------------------------------

SERIES = lessons()


def stored_text(cell) -> str:
    return "".join(o.get("text", "") or o.get("data", {}).get("text/plain", "") for o in cell.get("outputs", []))


@pytest.mark.parametrize("lesson", SERIES, ids=[lesson.path.stem for lesson in SERIES])
def test_every_exercise_has_its_needs_an_answer_cell_and_a_check_or_a_listed_reason(lesson):
    nb = read(lesson.path)
    cells = {c.get("id"): c for c in nb.cells}
    found = exercises_of(nb)
    assert found, f"{lesson.path.name} has no exercises in the series' format (CONTRIBUTING.md, Exercises)"
    assert [e.number for e in found] == list(range(1, len(found) + 1)), "exercises are numbered 1, 2, ..."
    required = [e for e in found if not e.optional]
    assert len(required) <= 3, f"{lesson.path.name}: at most three exercises; more under `## More practice (optional)`"
    assert found[:len(required)] == required, f"{lesson.path.name}: the optional exercises come last"
    for e in found:
        where = f"{lesson.path.name}, exercise {e.number}"
        assert e.needs and HARDWARE.match(e.needs), f"{where}: needs line `*Needs: <hardware> · about N minutes.*`"
        assert e.minutes and 0 < e.minutes <= 45, where
        assert e.exercise_id in exercises.core._EXERCISES, f"{where}: check/hint names no registered exercise"
        assert not re.match(r"(?:lesson)?\d+\b|\d\d", e.exercise_id), f"{where}: ids are topic names, not numbers"
        registered = exercises.core._EXERCISES[e.exercise_id]
        assert (e.kind == "check") == (registered.test is not None), f"{where}: check() for a check, hint() else"
        answer, call = (cells[i] for i in e.cells[1:3])
        assert "..." in answer.source, f"{where}: the answer cell is a template with ... to fill in"
        assert call.cell_type == "code" and len(call.source.strip().splitlines()) == 1, f"{where}: one line"
        printed = stored_text(call)
        if e.kind == "check":
            assert printed.startswith("Not answered yet"), f"{where}: stored template output"
            assert "execute_result" not in {o["output_type"] for o in call.get("outputs", [])}, f"{where}: a bare False"
        else:
            assert printed.strip() == exercises.messages.MESSAGES[registered.hint], where


def test_each_exercise_belongs_to_one_lesson_and_is_solved_in_its_solutions():
    owner: dict[str, str] = {}
    for lesson in SERIES:
        solutions = read(lesson.solutions)
        for e in exercises_of(read(lesson.path)):
            assert e.exercise_id not in owner, f"{e.exercise_id}: in {owner.get(e.exercise_id)} and {lesson.path.name}"
            owner[e.exercise_id] = lesson.path.name
            if e.kind != "check":
                continue
            solved = [c for c in solutions.cells if c.cell_type == "code"
                      and re.search(rf"""^assert check\(\s*["']{re.escape(e.exercise_id)}["']""", c.source, re.M)]
            assert solved, f"{lesson.solutions.name} does not `assert check({e.exercise_id!r}, ...)`"
            assert all("✓ Right" in stored_text(c) for c in solved), f"{e.exercise_id}: its stored solution passes"
    assert set(owner) == set(exercises.core._EXERCISES), "registered exercises no lesson asks"


def test_every_check_has_tests_of_its_own():
    tests = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "tests").glob("test_checks_*.py"))
    untested = sorted(i for i, ex in exercises.core._EXERCISES.items() if ex.test is not None and f'"{i}"' not in tests)
    assert not untested, f"checks without tests in tests/test_checks_*.py: {untested}"


def test_the_chinese_edition_has_the_same_exercise_cells():
    for lesson in SERIES:
        zh = read(NOTEBOOKS / "zh" / lesson.path.name)
        zh_code = {c.get("id"): c.source for c in zh.cells if c.cell_type == "code"}
        for e in exercises_of(read(lesson.path)):
            call = e.cells[2]
            assert call in zh_code, f"zh/{lesson.path.name} lacks {call}"


def test_exercise_files_follow_the_conventions():
    # core and messages first; one file per topic; every private top-level name unique across files
    names: dict[str, str] = {}
    for path in sorted(EXERCISES_DIR.glob("*.py")):
        for m in re.finditer(r"^(?:def|class) (\w+)|^(\w+)\s*[:=]", path.read_text(encoding="utf-8"), re.M):
            name = m.group(1) or m.group(2)
            assert name not in names, f"{name} is defined in {names.get(name)} and {path.name}"
            names[name] = path.name
    assert Path(EXERCISES_DIR / "core.py").exists() and Path(EXERCISES_DIR / "messages.py").exists()


@pytest.mark.parametrize("written", ["b", "B", " b ", "b)", "b.", "(b)", "(B)"])
def test_a_choice_is_read_as_its_letter_however_it_is_written(written):
    assert exercises.core._letter(written, "why", "tf32.chunked-sum/choice") == "b"


def test_check_returns_what_asserts_as_a_bool_and_shows_nothing_in_a_notebook(capsys):
    # A check cell's last expression is check(...): Jupyter would print a bare True or False under the message.
    kaggle = dict(driver_cuda=None, torch_cuda="12.6", cuda_available=False, service="Kaggle")
    right = exercises.check("setup.kaggle-no-gpu", kaggle, "b")
    wrong = exercises.check("setup.kaggle-no-gpu", kaggle, "a")
    assert type(right) is exercises.core.Checked and (bool(right), bool(wrong)) == (right.right, False)
    assert right == bool(right) and wrong == False and not wrong  # noqa: E712 -- compares as the bool it stands for
    assert repr(wrong) == "False" and right._ipython_display_() is None
    ip = pytest.importorskip("IPython.core.formatters")
    assert ip.DisplayFormatter().format(wrong) == ({}, {})  # Jupyter's formatter makes no output of it
