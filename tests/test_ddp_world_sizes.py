"""Lesson 13's DDP script, as the lesson writes it, at every world size from 1 to 3 on the CPU (Gloo):
each run ends, every rank reports the same losses and weights, the loss falls, and the first step
equals one process's step on the union of the ranks' first batches. 256 examples over 3 ranks do
not divide evenly: DistributedSampler pads every share to 86 by repeating two indices, at the end of
ranks 1 and 2, outside the first batch, so the proof still holds."""

from __future__ import annotations

import sys

import pytest
import torch
from torch import nn
from torch.utils.data import DistributedSampler

import utils
from tools.series import ROOT, read

LESSON = ROOT / "notebooks" / "13_distributed_data_parallel.ipynb"


def lesson_script() -> str:
    """The text of train_ddp.py as lesson 13's %%writefile cell writes it."""
    cell = next(c for c in read(LESSON).cells if c.source.startswith("%%writefile {work}/train_ddp.py"))
    return cell.source.split("\n", 1)[1]


@pytest.mark.slow
@pytest.mark.parametrize("nproc", [1, 2, 3])
def test_the_lessons_ddp_script_takes_one_processs_step_at_every_world_size(tmp_path, nproc, monkeypatch):
    (tmp_path / "train_ddp.py").write_text(lesson_script())
    utils.write_ddp_extras(tmp_path)
    run = tmp_path / "run"
    run.mkdir()
    result = utils.launch(tmp_path / "train_ddp.py", nproc, timeout=180, script_args=["gloo", str(run)])
    assert result.returncode == 0, result.stdout
    reports = utils.read_reports(run)
    assert [int(r["env"]["WORLD_SIZE"]) for r in reports] == [nproc] * nproc
    assert all(r["losses"] == reports[0]["losses"] and r["checksum"] == reports[0]["checksum"] for r in reports)
    assert reports[0]["losses"][-1] < reports[0]["losses"][0]

    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("ddp_extras", None)
    from ddp_extras import make_data, make_model

    data = make_data()
    first_step = []
    for rank in range(nproc):
        sampler = DistributedSampler(data, num_replicas=nproc, rank=rank, shuffle=True, seed=0)
        sampler.set_epoch(0)
        first_step += list(sampler)[:32]
    if nproc == 3:
        assert len(data) % nproc and len(list(sampler)) == -(-len(data) // nproc)  # padded: uneven data
    inputs, labels = data[first_step]
    plain = make_model()
    optimizer = torch.optim.SGD(plain.parameters(), lr=0.1)
    nn.functional.cross_entropy(plain(inputs), labels).backward()
    optimizer.step()
    after = torch.load(run / "after_one_step.pt", weights_only=True)
    for name, weight in plain.state_dict().items():
        assert torch.allclose(after[name], weight, atol=1e-6), name
