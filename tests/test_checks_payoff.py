"""The checks of lesson 06's exercises (exercises/payoff.py): the right answer passes, typical wrong
ones (medians compared without their spread, the first size ahead taken for the crossover, a copy
every step, the last steps left out, a peak that does not apply) get their own message.

The crossover and the log are checked on cases the check builds itself: made-up timings, and a matrix
that counts its copies to the CPU, so no GPU is needed. Machines with GPUs are simulated with the
`machine` fixture; after a right answer a check also measures on the reader's device, which a
simulated machine does not have, so that run is replaced by fixed fields there (`stub_real_runs`),
and done for real on this machine's CPU in one test per check.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import exercises.payoff
import utils
from exercises import check

MACHINES = ["cpu-only", "one-cuda-gpu", "two-cuda-gpus", "apple-mps"]


@pytest.fixture
def stub_real_runs(monkeypatch):
    monkeypatch.setattr(exercises.payoff, "_payoff_crossover_on_this_machine", lambda crossover: "(measured)")
    monkeypatch.setattr(exercises.payoff, "_payoff_peaks_on_this_machine",
                        lambda: {"device": "sim", "n": 4096, "rows": "(rows)"})
    monkeypatch.setattr(exercises.payoff, "_payoff_copy_every_on_this_machine",
                        lambda log_every: {"device": "sim", "steps": 1000, "rows": "(rows)", "against": "(against)"})


def said(capsys) -> str:
    return capsys.readouterr().out


# --- payoff.crossover ------------------------------------------------------------------------

def clearly_ahead(cpu, gpu):
    return gpu.median + gpu.iqr < cpu.median - cpu.iqr


def crossover(on_cpu, on_gpu):
    sizes = sorted(on_cpu)
    ahead = {n: clearly_ahead(on_cpu[n], on_gpu[n]) for n in sizes}
    return next((n for k, n in enumerate(sizes) if all(ahead[m] for m in sizes[k:])), None)


def medians_only(on_cpu, on_gpu):
    sizes = sorted(on_cpu)
    ahead = {n: on_gpu[n].median < on_cpu[n].median for n in sizes}
    return next((n for k, n in enumerate(sizes) if all(ahead[m] for m in sizes[k:])), None)


def gpu_spread_only(on_cpu, on_gpu):
    sizes = sorted(on_cpu)
    ahead = {n: on_gpu[n].median + on_gpu[n].iqr < on_cpu[n].median for n in sizes}
    return next((n for k, n in enumerate(sizes) if all(ahead[m] for m in sizes[k:])), None)


def first_size_ahead(on_cpu, on_gpu):
    return next((n for n in sorted(on_cpu) if clearly_ahead(on_cpu[n], on_gpu[n])), None)


@pytest.mark.parametrize("name", MACHINES)
def test_crossover_accepts_the_smallest_size_from_which_the_gpu_stays_clearly_ahead(machine, stub_real_runs, capsys,
                                                                                    name):
    machine(name)
    assert check("payoff.crossover", crossover)
    assert "crossover decides every made-up case right. (measured)" in said(capsys)


def crossover_from_the_largest_size_down(on_cpu, on_gpu):
    """Another right answer: walk down from the largest size while the GPU stays ahead, Timings unpacked."""
    found = None
    for n in sorted(on_cpu, reverse=True):
        (cpu_median, cpu_iqr), (gpu_median, gpu_iqr) = on_cpu[n], on_gpu[n]
        if not gpu_median + gpu_iqr < cpu_median - cpu_iqr:
            break
        found = n
    return found


def crossover_with_numpy(on_cpu, on_gpu):
    """Another right answer: NumPy arrays, so the size it returns is a NumPy integer."""
    sizes = np.array(sorted(on_cpu))
    ahead = np.array([clearly_ahead(on_cpu[n], on_gpu[n]) for n in sizes])
    return next((sizes[k] for k in range(len(sizes)) if ahead[k:].all()), None)


@pytest.mark.parametrize("answer", [crossover_from_the_largest_size_down, crossover_with_numpy])
def test_crossover_written_other_ways_passes(stub_real_runs, capsys, answer):
    assert check("payoff.crossover", answer)
    assert "crossover decides every made-up case right" in said(capsys)


def test_crossover_rejects_medians_compared_without_their_spreads(stub_real_runs, capsys):
    assert not check("payoff.crossover", medians_only)
    assert "at n = 128 the GPU's median is the smaller, but the two are closer than their spreads" in said(capsys)
    assert not check("payoff.crossover", gpu_spread_only)  # the CPU's spread counts too
    assert "too close to call, so the crossover is 256, not 128" in said(capsys)


def test_crossover_rejects_the_first_size_ahead_and_a_crossover_where_there_is_none(stub_real_runs, capsys):
    assert not check("payoff.crossover", first_size_ahead)
    assert "clearly ahead at n = 64, behind at 128 and ahead from 256 on, crossover returned 64" in said(capsys)
    assert not check("payoff.crossover", lambda on_cpu, on_gpu: crossover(on_cpu, on_gpu) or 1024)
    assert "where the GPU is never clearly ahead, crossover returned 1024: return None" in said(capsys)
    assert not check("payoff.crossover", lambda on_cpu, on_gpu: "256")
    assert "crossover(on_cpu, on_gpu) should be an int, but it is a str" in said(capsys)


def test_crossover_says_what_it_skipped_without_a_gpu_and_one_thread(machine, monkeypatch, capsys):
    machine("cpu-only")  # not stubbed: without a GPU and with one thread the check measures nothing, and says so
    monkeypatch.setattr(torch, "get_num_threads", lambda: 1)
    assert check("payoff.crossover", crossover)
    assert "No GPU here, and PyTorch uses one CPU thread, so nothing to measure" in said(capsys)


def test_crossover_without_a_gpu_measures_one_cpu_thread_against_all(machine, monkeypatch, capsys):
    machine("cpu-only")
    monkeypatch.setattr(torch, "get_num_threads", lambda: 4)
    monkeypatch.setattr(torch, "set_num_threads", lambda k: seen.append(k))
    seen = []

    def timing(fn, device, min_run_time=0.2):  # one thread: 1 s at every size; four: ahead from n = 256
        n = fn().shape[0]
        one = len(seen) % 2 == 1  # set_num_threads(1) before, set_num_threads(4) after
        return utils.Timing(1.0, 0.01) if one or n < 256 else utils.Timing(0.3, 0.01)

    monkeypatch.setattr(exercises.payoff, "median_and_iqr_seconds", timing)
    assert check("payoff.crossover", crossover)
    out = said(capsys)
    assert "one thread against all 4" in out and "clearly ahead from n = 256 on" in out, out
    assert seen == [1, 4] * 6  # one thread for each size's first timing, then all threads again


# --- payoff.peaks ----------------------------------------------------------------------------

PEAKS = {"float32 on an A100, TF32 off": "float32", "float32 on an A100, TF32 on": "TF32",
         "float32 on a T4, TF32 on": "float32", "float16 on a T4": "float16", "float16 on a CPU": None}


@pytest.mark.parametrize("name", MACHINES)
def test_peaks_accepts_the_peak_that_applies_in_each_case(machine, stub_real_runs, capsys, name):
    machine(name)
    assert check("payoff.peaks", dict(PEAKS))
    assert check("payoff.peaks", PEAKS | {"float32 on an A100, TF32 on": "tf32"})  # in any case
    assert "Each case names the peak that applies" in said(capsys)


def test_peaks_accepts_dtypes_short_names_and_none_as_text(stub_real_runs, capsys):
    written = {"float32 on an A100, TF32 off": torch.float32, "float32 on an A100, TF32 on": " tf32 ",
               "float32 on a T4, TF32 on": "FP32", "float16 on a T4": "half", "float16 on a CPU": "None"}
    assert check("payoff.peaks", written)
    assert check("payoff.peaks", PEAKS | {"float16 on a T4": torch.float16})
    assert check("payoff.peaks", PEAKS | {"float16 on a T4": "fp16"})
    assert "Each case names the peak that applies" in said(capsys)


def test_peaks_judges_a_dtype_or_a_short_name_by_the_peak_it_names(stub_real_runs, capsys):
    written = PEAKS | {"float32 on a T4, TF32 on": "tf32", "float16 on a CPU": torch.float16}
    assert not check("payoff.peaks", written)
    assert 'wrong answers: 2 of 5. Look again at: "float32 on a T4, TF32 on", "float16 on a CPU"' in said(capsys)


def test_peaks_names_the_cases_it_gets_wrong(stub_real_runs, capsys):
    assert not check("payoff.peaks", PEAKS | {"float32 on a T4, TF32 on": "TF32", "float16 on a CPU": "float16"})
    assert 'wrong answers: 2 of 5. Look again at: "float32 on a T4, TF32 on", "float16 on a CPU"' in said(capsys)


def test_peaks_rejects_a_missing_case_an_unknown_peak_and_a_list(stub_real_runs, capsys):
    assert not check("payoff.peaks", {"float16 on a T4": "float16"})
    assert 'peak_for lacks an answer for: "float32 on an A100, TF32 off"' in said(capsys)
    assert not check("payoff.peaks", PEAKS | {"float16 on a T4": "bfloat16"})
    assert "peak_for[\"float16 on a T4\"] is 'bfloat16': answer \"float32\", \"TF32\" or \"float16\"" in said(capsys)
    assert not check("payoff.peaks", list(PEAKS.values()))
    assert "peak_for should be a dict, but it is a list" in said(capsys)


def test_peaks_measures_the_rates_for_real_on_this_machines_cpu(machine, capsys):
    machine("cpu-only")
    assert check("payoff.peaks", dict(PEAKS))
    out = said(capsys)
    assert "On this machine (cpu, n = 256):" in out and "float16:" in out and "GFLOP/s" in out
    assert torch.get_float32_matmul_precision() == "highest"  # the check set the precision back


# --- payoff.copy-every -----------------------------------------------------------------------

def log_every(m, k, steps=1000):
    log, pending = [], []
    for step in range(1, steps + 1):
        pending.append(torch.linalg.matrix_norm(m @ m))
        if step % k == 0 or step == steps:
            log += torch.stack(pending).tolist()
            pending = []
    return log


def each_value_copied_alone(m, k, steps=1000):
    log, pending = [], []
    for step in range(1, steps + 1):
        pending.append(torch.linalg.matrix_norm(m @ m))
        if step % k == 0 or step == steps:
            log += [float(v) for v in pending]  # one copy (and on a GPU one wait) per value
            pending = []
    return log


def forgets_the_last_steps(m, k, steps=1000):
    log, pending = [], []
    for step in range(1, steps + 1):
        pending.append(torch.linalg.matrix_norm(m @ m))
        if step % k == 0:
            log += torch.stack(pending).tolist()
            pending = []
    return log


def keeps_tensors(m, k, steps=1000):
    return [torch.linalg.matrix_norm(m @ m) for _ in range(steps)]


@pytest.mark.parametrize("name", MACHINES)
def test_copy_every_accepts_one_copy_per_group_of_k_steps(machine, stub_real_runs, capsys, name):
    machine(name)
    assert check("payoff.copy-every", log_every)
    assert "log_every logs every norm and copies once per group of k steps" in said(capsys)


def log_every_into_a_buffer(m, k, steps=1000):
    """Another right answer: the norms written into a tensor on m's device, a slice copied per group."""
    norms = torch.empty(steps, device=m.device)
    log = []
    for step in range(steps):
        norms[step] = torch.linalg.norm(m @ m)
        if (step + 1) % k == 0 or step + 1 == steps:
            log += norms[len(log):step + 1].tolist()
    return log


def log_every_by_groups(m, k, steps=1000):
    """Another right answer: a loop over the groups, each copied with .cpu() and read as floats."""
    log = []
    for start in range(0, steps, k):
        group = torch.stack([(m @ m).norm() for _ in range(min(k, steps - start))])
        log.extend(float(v) for v in group.cpu())
    return log


def log_every_into_a_cpu_buffer_by_groups(m, k, steps=1000):
    """Another right answer: each group written at once into a tensor on the CPU, read once at the end."""
    norms, pending = torch.zeros(steps), []
    for step in range(1, steps + 1):
        pending.append(torch.linalg.matrix_norm(m @ m))
        if step % k == 0 or step == steps:
            norms[step - len(pending):step] = torch.stack(pending)  # one copy per group
            pending = []
    return norms.tolist()


@pytest.mark.parametrize("answer", [log_every_into_a_buffer, log_every_by_groups,
                                    log_every_into_a_cpu_buffer_by_groups])
def test_copy_every_written_other_ways_passes(stub_real_runs, capsys, answer):
    assert check("payoff.copy-every", answer)
    assert "log_every logs every norm and copies once per group of k steps" in said(capsys)


def test_copy_every_counts_a_copy_per_value_as_a_copy_every_step(stub_real_runs, capsys):
    assert not check("payoff.copy-every", each_value_copied_alone)
    assert "with k=100, the 250 steps copied values to the CPU 250 times, not 3" in said(capsys)


def test_copy_every_counts_a_copy_per_step_out_of_a_buffer_made_on_the_device(stub_real_runs, capsys):
    def item_of_the_buffer(m, k, steps=1000):
        norms, log = torch.empty(steps, device=m.device), []
        for step in range(steps):
            norms[step] = torch.linalg.matrix_norm(m @ m)
            log.append(norms[step].item())  # one copy per step, out of the buffer
        return log

    assert not check("payoff.copy-every", item_of_the_buffer)
    assert "with k=100, the 250 steps copied values to the CPU 250 times, not 3" in said(capsys)


def test_copy_every_counts_a_norm_written_into_a_cpu_tensor_at_every_step_as_a_copy(stub_real_runs, capsys):
    def cpu_buffer_every_step(m, k, steps=1000):
        norms = torch.zeros(steps)  # on the CPU: each write below copies a norm across
        for step in range(steps):
            norms[step] = torch.linalg.matrix_norm(m @ m)
        return norms.tolist()

    assert not check("payoff.copy-every", cpu_buffer_every_step)
    out = said(capsys)
    assert "with k=100, the 250 steps copied values to the CPU 250 times, not 3" in out
    assert "every write of a value into a CPU tensor" in out


def test_copy_every_rejects_lost_last_steps_tensors_and_wrong_values(stub_real_runs, capsys):
    assert not check("payoff.copy-every", forgets_the_last_steps)
    assert "with k=100 and 250 steps the log holds 200 norms: the last steps" in said(capsys)
    assert not check("payoff.copy-every", keeps_tensors)
    assert "the log holds values of type Tensor, not Python floats" in said(capsys)
    assert not check("payoff.copy-every", lambda m, k, steps=1000: [1.0] * steps)
    assert "the log's values are not the norms of m @ m" in said(capsys)


def test_copy_every_times_the_learners_log_for_real_on_this_machines_cpu(machine, capsys):
    machine("cpu-only")
    assert check("payoff.copy-every", log_every)
    out = said(capsys)
    assert "On this machine (cpu), 250 steps:" in out and "copy every  100 steps:" in out


def test_copy_every_rejects_numpy_which_fails_on_a_gpu_and_takes_numpy_force(stub_real_runs, capsys):
    def by_numpy(m, k, steps=1000, force=False):
        log, pending = [], []
        for step in range(1, steps + 1):
            pending.append(torch.linalg.matrix_norm(m @ m))
            if step % k == 0 or step == steps:
                log += torch.stack(pending).numpy(force=force).tolist()
                pending = []
        return log

    assert not check("payoff.copy-every", by_numpy)
    assert "can't convert cuda:0 device type tensor to numpy" in said(capsys)
    assert check("payoff.copy-every", lambda m, k, steps=1000: by_numpy(m, k, steps, force=True))


def test_copy_every_takes_a_buffer_moved_to_m_s_device_as_one_on_the_device(stub_real_runs, capsys):
    # torch.zeros(k).to(m.device) lives on the GPU where m does: writing a norm into it copies nothing
    # to the CPU. It was counted as a CPU tensor once, and a right answer refused.
    def moved_buffer(m, k, steps=1000):
        buffer, log, filled = torch.zeros(k).to(m.device), [], 0
        for step in range(1, steps + 1):
            buffer[filled] = torch.linalg.matrix_norm(m @ m)
            filled += 1
            if filled == k or step == steps:
                log += buffer[:filled].tolist()  # one copy per group
                filled = 0
        return log

    def stacked_then_kept_on_the_device(m, k, steps=1000):
        log, pending = [], []
        for step in range(1, steps + 1):
            pending.append(torch.linalg.matrix_norm(m @ m))
            if step % k == 0 or step == steps:
                log += torch.stack(pending).to(m.device).tolist()  # .to(its own device) copies nothing
                pending = []
        return log

    assert check("payoff.copy-every", moved_buffer)
    assert check("payoff.copy-every", stacked_then_kept_on_the_device)
    assert "log_every logs every norm and copies once per group of k steps" in said(capsys)


def test_copy_every_counts_writes_into_a_tensor_made_on_the_cpu_by_name(stub_real_runs, capsys):
    # device="cpu" is main memory on a GPU machine too: a norm written there at every step is a copy each.
    def named_cpu_buffer(m, k, steps=1000):
        norms = torch.zeros(steps, device="cpu")
        for step in range(steps):
            norms[step] = torch.linalg.matrix_norm(m @ m)
        return norms.tolist()

    assert not check("payoff.copy-every", named_cpu_buffer)
    assert "with k=100, the 250 steps copied values to the CPU 250 times, not 3" in said(capsys)


def test_copy_every_rejects_a_log_that_ignores_k_and_copies_once_at_the_end(stub_real_runs, capsys):
    """Fewer copies than one per group of k steps is not the exercise either: k is ignored."""
    def log_every(m, k, steps=1000):
        log = [torch.linalg.matrix_norm(m @ m) for _ in range(steps)]
        return torch.stack(log).tolist()

    assert not check("payoff.copy-every", log_every)
    assert "copies once per group of k steps, so that the log reaches the CPU a group at a time" in said(capsys)
