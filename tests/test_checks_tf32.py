"""The checks of lesson 10's exercises (exercises/tf32.py): the right answer passes, typical wrong ones
get their own message. Everything computes on the CPU; a machine with a GPU is simulated (the
`machine` fixture), and the learner's function, handed that GPU, computes with tensors that behave as
if on it (`exercises.core._on_a_gpu`, on the CPU) and stands for what the GPU would give. No GPU is needed."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest
import torch
from torch import nn
from torch.nn import functional as F

import exercises.core
from exercises import check
from tools.series import NOTEBOOKS, read
from utils import training_step


def said(capsys) -> str:
    return capsys.readouterr().out


# --- tf32.precision-settings --------------------------------------------------------------

def to(t, where):
    """t.to(where), where a simulated GPU gives a CPU tensor that behaves as one there."""
    return t.to(where) if torch.device(where).type == "cpu" else exercises.core._on_a_gpu(t, where)


def product_error(where, precision, n=128):
    torch.manual_seed(0)
    a, b = torch.randn(n, n), torch.randn(n, n)
    exact = a.double() @ b.double()
    before = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision(precision)
    try:
        return ((to(a, where) @ to(b, where)).cpu().double() - exact).abs().max().item()
    finally:
        torch.set_float32_matmul_precision(before)


def test_precision_settings_accepts_a_function_that_sets_and_restores_the_precision(machine, capsys):
    machine("cpu-only")
    assert check("tf32.precision-settings", product_error, "a")
    out = said(capsys)
    assert all(f"cpu   '{p}'" in out for p in ("highest", "high", "medium"))
    assert torch.get_float32_matmul_precision() == "highest"


def test_precision_settings_asks_the_cpu_and_the_gpu_on_a_gpu_machine(machine, capsys):
    """A simulated one-GPU machine: the check asks for cuda:0 too."""
    machine("one-cuda-gpu")
    asked = []

    def recorded(where, precision):
        asked.append(str(where))
        return product_error(where, precision)

    assert check("tf32.precision-settings", recorded, "a")
    assert set(asked) == {"cpu", "cuda:0"} and "cuda:0 'high'" in said(capsys)


def test_precision_settings_catches_a_setting_left_changed_or_never_set(capsys):
    def left_changed(where, precision):
        torch.set_float32_matmul_precision(precision)
        return product_error(where, "highest")

    assert not check("tf32.precision-settings", left_changed, "a")
    assert 'the matmul precision is "high", not "highest" as before' in said(capsys)
    assert torch.get_float32_matmul_precision() == "highest"  # the check put it back
    assert not check("tf32.precision-settings", lambda where, precision: product_error(where, "highest"), "a")
    assert 'never calls torch.set_float32_matmul_precision("high")' in said(capsys)


def test_precision_settings_catches_a_float32_reference_and_other_matrices(capsys):
    def against_float32(where, precision):
        before = torch.get_float32_matmul_precision()
        torch.set_float32_matmul_precision(precision)
        try:
            a = torch.randn(64, 64)
            return ((a @ a) - (a @ a)).abs().max().item()
        finally:
            torch.set_float32_matmul_precision(before)

    assert not check("tf32.precision-settings", against_float32, "a")
    assert 'product_error(cpu, "highest") is 0: a float32 product compared with another' in said(capsys)

    def other_matrices(where, precision):
        product_error(where, precision)
        return (torch.randn(64, 64).double() @ torch.randn(64, 64).double()).abs().max().item()

    assert not check("tf32.precision-settings", other_matrices, "a")
    assert "far above what rounding gives" in said(capsys)


@pytest.mark.parametrize(("letter", "printed"), [
    ("b", "TF32 is NVIDIA's, inside the tensor cores of Ampere"), ("c", 'on an Ampere or later GPU, "high" lets'),
])
def test_precision_settings_explains_a_wrong_choice(capsys, letter, printed):
    assert not check("tf32.precision-settings", product_error, letter)
    assert printed in said(capsys)


# --- tf32.chunked-sum ---------------------------------------------------------------------

def chunked_sum(v, chunk):
    return float(np.cumsum(v.view(-1, chunk).sum(dim=1).numpy(), dtype=np.float32)[-1])


def test_chunked_sum_accepts_chunk_sums_added_one_by_one_in_float32(capsys):
    assert check("tf32.chunked-sum", chunked_sum, 100_000, "a")
    out = said(capsys)
    assert "chunks of 100000 : error" in out and "one running total: error" in out


def test_chunked_sum_accepts_a_python_loop_over_the_chunks():
    def by_slices(v, chunk):
        total = torch.tensor(0.0)
        for start in range(0, len(v), chunk):
            total = total + v[start:start + chunk].sum()
        return total  # a tensor with one value is accepted too

    assert check("tf32.chunked-sum", by_slices, 100_000, "a")


@pytest.mark.parametrize(("answer", "printed"), [
    (lambda v, c: float(np.cumsum(v.numpy(), dtype=np.float32)[-1]), "the 1s were lost, as in one running total"),
    (lambda v, c: float(np.cumsum(v.view(-1, c).sum(dim=1).numpy(), dtype=np.float64)[-1]),
     "Your total kept more digits: a Python float is float64"),
    (lambda v, c: torch.cumsum(v.view(-1, c).sum(dim=1), 0)[-1],
     "torch.cumsum on the CPU keeps its running total in float64 too"),
    (lambda v, c: float(v.view(-1, c).sum(dim=1).sum()), "(torch.sum adds pairwise, and so does np.sum.)"),
])
def test_chunked_sum_catches_one_running_total_float64_and_a_pairwise_sum(capsys, answer, printed):
    assert not check("tf32.chunked-sum", answer, 100_000, "a")
    assert printed in said(capsys)


def test_chunked_sum_accepts_a_float32_tensor_loop_and_a_numpy_float32_loop():
    def tensor_loop(v, chunk):
        total = torch.tensor(0.0)
        for s in v.view(-1, chunk).sum(dim=1):
            total = total + s
        return total

    def numpy_loop(v, chunk):
        total = np.float32(0)
        for s in v.view(-1, chunk).sum(dim=1).numpy():
            total = np.float32(total + s)
        return total

    assert check("tf32.chunked-sum", tensor_loop, 100_000.0, " A ")
    assert check("tf32.chunked-sum", numpy_loop, 100_000, "a)")


def test_chunked_sum_says_why_a_float64_total_of_the_chunk_sums_differs(capsys):
    def float64_past_the_small_cases(v, chunk):  # a float32 total for the small cases only
        sums = v.view(-1, chunk).sum(dim=1)
        return chunked_sum(v, chunk) if len(v) < 10 else torch.cumsum(sums, 0)[-1]

    assert not check("tf32.chunked-sum", float64_past_the_small_cases, 100_000, "a")
    out = said(capsys)
    assert "what adding the chunk sums in float64 gives" in out and "torch.cumsum on the CPU" in out


@pytest.mark.parametrize(("most_accurate", "why", "printed"), [
    (10, "a", "most_accurate is 10, but another chunk size lands closer"),
    (7, "a", "answer with one of the chunk sizes"),
    (100_000, "b", "the range is not the problem, the digits are"),
    (100_000, "c", "the order is fixed"),
])
def test_chunked_sum_explains_the_wrong_answers_to_the_questions(capsys, most_accurate, why, printed):
    assert not check("tf32.chunked-sum", chunked_sum, most_accurate, why)
    assert printed in said(capsys)


# --- tf32.repeatable ----------------------------------------------------------------------

def train(where, *, seed=True, deterministic=True, switch_off=True, lr=0.1, shift=0.0):
    """The right answer, with knobs for the wrong ones; computes on the CPU whatever `where` is (on a
    simulated GPU its losses behave as if there), and `shift` stands for a GPU's other rounding."""
    if seed:
        torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    g = torch.Generator().manual_seed(0) if seed else None
    x, y = torch.randn(64, 8, generator=g), torch.randn(64, 2, generator=g)
    if deterministic:
        torch.use_deterministic_algorithms(True)
    try:
        losses = torch.stack([training_step(model, x, y, optimizer, loss_fn=F.mse_loss) for _ in range(10)])
    finally:
        if switch_off:
            torch.use_deterministic_algorithms(False)
    return to(losses, where) * (1 + shift) if str(where) != "cpu" else losses


def test_repeatable_accepts_a_seeded_deterministic_run_on_the_cpu(machine, capsys):
    machine("cpu-only")
    assert check("tf32.repeatable", train)
    assert "Two runs on cpu gave the same bits" in said(capsys)
    assert not torch.are_deterministic_algorithms_enabled()


def test_repeatable_compares_a_gpu_run_with_the_cpu_on_a_gpu_machine(machine, capsys):
    """A simulated GPU whose losses differ from the CPU's by 3 parts in a million: rtol=1e-05."""
    machine("one-cuda-gpu")
    assert check("tf32.repeatable", lambda where: train(where, shift=3e-6))
    assert "the smallest tolerance that accepts the two runs is rtol=1e-05" in said(capsys)


def test_repeatable_catches_an_unseeded_run_and_deterministic_mode_never_switched_on(capsys):
    assert not check("tf32.repeatable", lambda where: train(where, seed=False))
    assert "two runs of train differ by up to" in said(capsys)
    assert not check("tf32.repeatable", lambda where: train(where, deterministic=False))
    assert "train never calls torch.use_deterministic_algorithms(True)" in said(capsys)


def test_repeatable_catches_deterministic_mode_left_on_and_puts_it_back(capsys):
    assert not check("tf32.repeatable", lambda where: train(where, switch_off=False))
    assert "train leaves deterministic mode on" in said(capsys)
    assert not torch.are_deterministic_algorithms_enabled()


def test_repeatable_catches_a_list_and_a_run_that_does_not_learn(capsys):
    assert not check("tf32.repeatable", lambda where: train(where).tolist())
    assert "should return the 10 losses as one tensor (torch.stack(losses)), but it returns a list" in said(capsys)
    assert not check("tf32.repeatable", lambda where: train(where, lr=0.0))
    assert "the model does not learn" in said(capsys)


CUBLAS_ERROR = (
    "Deterministic behavior was enabled with either `torch.use_deterministic_algorithms(True)` or "
    "`at::Context::setDeterministicAlgorithms(true)`, but this operation is not deterministic because it uses "
    "CuBLAS and you have CUDA >= 10.2. To enable deterministic behavior in this case, you must set an environment "
    "variable before running your PyTorch application: CUBLAS_WORKSPACE_CONFIG=:4096:8 or "
    "CUBLAS_WORKSPACE_CONFIG=:16:8. For more information, go to "
    "https://docs.nvidia.com/cuda/cublas/index.html#results-reproducibility")


class CuBLAS:
    """What PyTorch 2.9 or older does on CUDA: it reads CUBLAS_WORKSPACE_CONFIG once, at the first cuBLAS
    call, into a static (checkCuBLASConfigDeterministic, aten/src/ATen/Context.cpp), and a matrix
    product in deterministic mode raises unless that first read found it."""

    def __init__(self):
        self.config = None  # nothing read yet

    def product(self):
        if self.config is None:
            self.config = os.environ.get("CUBLAS_WORKSPACE_CONFIG", "")
        if torch.are_deterministic_algorithms_enabled() and self.config not in (":4096:8", ":16:8"):
            raise RuntimeError(CUBLAS_ERROR)


@pytest.mark.parametrize("set_first", [True, False])
def test_repeatable_on_cuda_with_an_older_torch_depends_on_the_first_cells_order(machine, capsys, monkeypatch,
                                                                                 set_first):
    machine("one-cuda-gpu")
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
    cublas = CuBLAS()
    if set_first:  # the lesson's first code cell, before precision-13's product
        monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    cublas.product()  # section 2's product on the GPU
    monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # an answer cell that sets it: too late

    def train_on_cuda(where):
        torch.manual_seed(0)
        torch.use_deterministic_algorithms(True)
        try:
            if where.type == "cuda":
                cublas.product()
            return train(where, deterministic=False)
        finally:
            torch.use_deterministic_algorithms(False)

    assert bool(check("tf32.repeatable", train_on_cuda)) is set_first
    out = said(capsys)
    if set_first:
        assert "Two runs on cuda:0 gave the same bits" in out
    else:
        assert "PyTorch reads that variable once, at the kernel's first matrix product on the GPU" in out
        assert "(now :4096:8 in this notebook)" in out and "your code raised" not in out
    assert not torch.are_deterministic_algorithms_enabled()


@pytest.mark.parametrize("notebook", [f"{edition}{kind}10_tf32_and_determinism{suffix}.ipynb"
                                      for edition in ("", "zh/")
                                      for kind, suffix in (("", ""), ("solutions/", "_solutions"))])
def test_lesson_10_sets_cublas_workspace_config_before_its_first_matrix_product(notebook):
    cells = [c for c in read(NOTEBOOKS / notebook)["cells"] if c["cell_type"] == "code" and c["id"] != "setup"]
    sources = ["".join(c["source"]) for c in cells]
    sets = next(i for i, s in enumerate(sources) if 'os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG"' in s)
    first_product = next(i for i, s in enumerate(sources) if re.search(r"@|matmul|training_step\(|train\(", s))
    assert sets == 0 and sets < first_product


def test_chunked_sum_accepts_chunk_sums_made_by_numpy(capsys):
    def by_numpy(v, chunk):  # NumPy sums each row in another order than torch.sum: a few last bits differ
        return float(np.cumsum(v.numpy().reshape(-1, chunk).sum(axis=1), dtype=np.float32)[-1])

    assert check("tf32.chunked-sum", by_numpy, 100_000, "a")


def test_precision_settings_blames_the_new_api_setting_not_the_learners_function(capsys):
    torch.backends.cuda.matmul.fp32_precision = "tf32"  # lesson 10's new name, set in an earlier cell
    try:
        assert not check("tf32.precision-settings", product_error, "a")
    finally:
        torch.backends.cuda.matmul.fp32_precision = "ieee"
    out = said(capsys)
    assert "raises in this notebook, before your function ran" in out and "your code raised" not in out
    assert torch.get_float32_matmul_precision() == "highest"


# --- misjudgements found by answering as a learner, and right answers written otherwise ------------

def test_precision_settings_sees_a_setter_imported_by_name(capsys):
    """`from torch import set_float32_matmul_precision` in an earlier cell: torch's own function runs."""
    from torch import get_float32_matmul_precision, set_float32_matmul_precision

    def by_name(where, precision):
        a, b = torch.randn(64, 64), torch.randn(64, 64)
        before = get_float32_matmul_precision()
        set_float32_matmul_precision(precision)
        try:
            return ((a.to(where) @ b.to(where)).cpu().double() - a.double() @ b.double()).abs().max()  # a tensor
        finally:
            set_float32_matmul_precision(before)

    assert check("tf32.precision-settings", by_name, "A)")
    assert "never calls" not in said(capsys)


@pytest.mark.parametrize(("kind", "device"), [("one-cuda-gpu", "cuda:0"), ("apple-mps", "mps:0")])
def test_precision_settings_catches_a_function_that_ignores_where_on_a_gpu_machine(machine, capsys, kind, device):
    machine(kind)
    assert check("tf32.precision-settings", lambda where, precision: np.float32(product_error(where, precision)), "a")
    assert f"{device} 'high'" in said(capsys)
    assert not check("tf32.precision-settings", lambda where, precision: product_error("cpu", precision), "a")
    assert f'product_error({device}, "highest") puts no tensor on {device}: move the two matrices there' in said(capsys)


def test_precision_settings_says_a_negative_error_lacks_abs_and_a_relative_one_is_not_asked_for(capsys):
    def signed(where, precision, relative=False):
        torch.manual_seed(0)
        a, b = torch.randn(512, 512), torch.randn(512, 512)  # relative: an entry near 0 makes it large
        exact = a.double() @ b.double()
        before = torch.get_float32_matmul_precision()
        torch.set_float32_matmul_precision(precision)
        try:
            difference = (a.to(where) @ b.to(where)).cpu().double() - exact
            return (difference.abs() / exact.abs()).max().item() if relative else difference.min().item()
        finally:
            torch.set_float32_matmul_precision(before)

    assert not check("tf32.precision-settings", signed, "a")
    out = said(capsys)
    assert 'product_error(cpu, "highest") is -' in out and "below zero: an error is the size of a difference" in out
    assert not check("tf32.precision-settings", lambda w, p: signed(w, p, relative=True), "a")
    assert "as the largest absolute difference" in said(capsys)


@pytest.mark.parametrize("most_accurate", [np.int64(100_000), torch.tensor(100_000), np.float32(1e5), 1e5])
def test_chunked_sum_accepts_the_chunk_size_as_any_number(most_accurate):
    """As `sizes[np.argmin(errors)]` gives it, sizes being a NumPy array, or a tensor."""
    assert check("tf32.chunked-sum", chunked_sum, most_accurate, "a")


def test_chunked_sum_accepts_chunks_summed_one_by_one(capsys):
    """Each chunk's own sum in a float32 running total too, then the chunk sums: chunk sums that round their
    last bits otherwise than torch.sum's move the million numbers' total by about 10**-3."""
    def one_by_one(v, chunk):
        sums = np.cumsum(v.numpy().reshape(-1, chunk), axis=1, dtype=np.float32)[:, -1]
        return float(np.cumsum(sums, dtype=np.float32)[-1])

    assert check("tf32.chunked-sum", one_by_one, 100_000, "a")


def test_chunked_sum_names_np_sum_pairwise_not_float64(capsys):
    def with_np_sum(v, chunk):  # pairwise, in float32
        return float(np.sum(v.view(-1, chunk).sum(dim=1).numpy(), dtype=np.float32))

    assert not check("tf32.chunked-sum", with_np_sum, 100_000, "a")
    out = said(capsys)
    assert "for 2**24 followed by 1000 chunks that each sum to 1, chunked_sum(v, 10) gives" in out
    assert "(torch.sum adds pairwise, and so does np.sum.)" in out and "in float64" not in out


def test_chunked_sum_judges_most_accurate_by_the_learners_own_errors(capsys):
    """Chunks each summed backwards, one by one: a chunk of 100 000 is then a long running total itself,
    and with these numbers chunks of 1000 land closest; the rows the check prints say so."""
    def backwards(v, chunk):
        sums = np.cumsum(v.numpy().reshape(-1, chunk)[:, ::-1], axis=1, dtype=np.float32)[:, -1]
        return float(np.cumsum(sums, dtype=np.float32)[-1])

    assert not check("tf32.chunked-sum", backwards, 100_000, "a")
    assert "most_accurate is 100000, but another chunk size lands closer" in said(capsys)
    assert check("tf32.chunked-sum", backwards, 1000, "a")


def test_repeatable_sees_a_setter_imported_by_name_and_accepts_warn_only():
    from torch import use_deterministic_algorithms

    def by_name(where):
        use_deterministic_algorithms(True)
        try:
            return train(where, deterministic=False)
        finally:
            use_deterministic_algorithms(False)

    def warn_only(where):
        torch.use_deterministic_algorithms(mode=True, warn_only=True)
        try:
            return train(where, deterministic=False)
        finally:
            torch.use_deterministic_algorithms(False)

    assert check("tf32.repeatable", by_name)
    assert check("tf32.repeatable", warn_only)


def test_repeatable_accepts_a_train_that_switches_off_a_mode_already_on(capsys):
    """Deterministic mode was on before the check (an earlier cell left it so): train switches it off at
    its end, as asked, and the check puts it back on, as it found it."""
    torch.use_deterministic_algorithms(True)
    try:
        assert check("tf32.repeatable", train)
        assert "leaves deterministic mode on" not in said(capsys)
        assert torch.are_deterministic_algorithms_enabled()
    finally:
        torch.use_deterministic_algorithms(False)


def test_repeatable_accepts_ten_losses_in_a_column():
    assert check("tf32.repeatable", lambda where: train(where).unsqueeze(1))


@pytest.mark.parametrize(("kind", "device"), [("one-cuda-gpu", "cuda:0"), ("apple-mps", "mps:0")])
def test_repeatable_catches_a_train_that_ignores_where_on_a_gpu_machine(machine, capsys, kind, device):
    machine(kind)
    assert check("tf32.repeatable", lambda where: train(where, shift=2e-5))
    assert f"On {device} and on the CPU" in said(capsys)
    assert not check("tf32.repeatable", lambda where: train("cpu"))
    assert f"train({device}) puts no tensor on {device}: move the model and the data there" in said(capsys)


def test_chunked_sum_says_chunks_that_are_not_consecutive_runs(capsys):
    """v.view(chunk, -1) makes chunk rows of strided values, and summing v.view(-1, chunk) down dim 0 sums
    columns: the total of the chunk sums is right in exact arithmetic, but a 1 is summed beside 2**24."""
    def strided_rows(v, chunk):
        return float(np.cumsum(v.view(chunk, -1).sum(1).numpy(), dtype=np.float32)[-1])

    def columns(v, chunk):
        return float(np.cumsum(v.view(-1, chunk).sum(0).numpy(), dtype=np.float32)[-1])

    for answer in (strided_rows, columns):
        assert not check("tf32.chunked-sum", answer, 100_000, "a")
        out = said(capsys)
        assert "chunked_sum([0, 0, 0, 1, 1, 0, 2**24, 0], 2) is 16777216, not 16777218" in out
        assert "each of your chunks should be a run of chunk consecutive values" in out
        assert "pairwise" not in out and "as in one running total" not in out
