"""The checks of lesson 18, sharding with FSDP2.

The row count is judged against ``torch.chunk``, which FSDP2 uses to cut a weight's rows (an empty shard for a
process left without rows), on sizes that do not divide evenly; a wrong list is named by what it is (the rows
spread as evenly as possible, rows lost, a shard missing). The optimizer question is two letters, judged on any
machine: no process group is needed.
"""

import torch

from .core import _expect, _expect_callable, _letter, _python_number, _register, _Wrong

_SIZES = ((64, 2), (4, 3), (5, 4), (10, 4), (2, 4), (7, 1))


def _fsdp_rows_of(rows: int, processes: int) -> list[int]:
    """The rows each process holds: torch.chunk's pieces, then empty shards for the processes left over."""
    sizes = [len(piece) for piece in torch.arange(rows).chunk(processes)]
    return sizes + [0] * (processes - len(sizes))


def _even(rows: int, processes: int) -> list[int]:
    return [rows // processes + (1 if r < rows % processes else 0) for r in range(processes)]


@_register("fsdp.rows", hint="fsdp.rows/hint")
def _fsdp_rows(rows_per_process):
    _expect_callable(rows_per_process, "rows_per_process")
    for rows, processes in _SIZES:
        call = f"rows_per_process({rows}, {processes})"
        answer = _expect(rows_per_process(rows, processes), (list, tuple), call)
        got = [_python_number(n, int) for n in answer]
        if any(n is None or n < 0 for n in got):
            raise _Wrong("fsdp.rows/not-counts", call=call, got=list(answer))
        want = _fsdp_rows_of(rows, processes)
        if got == want:
            continue
        if len(got) != processes:
            raise _Wrong("fsdp.rows/count", call=call, got=got, processes=processes)
        if sum(got) != rows:
            raise _Wrong("fsdp.rows/lost", call=call, got=got, total=sum(got), rows=rows)
        if got == _even(rows, processes):
            raise _Wrong("fsdp.rows/even", call=call, got=got)
        raise _Wrong("fsdp.rows/other", call=call, got=got)
    return {"example": _fsdp_rows_of(5, 4)}


@_register("fsdp.optimizer-first", hint="fsdp.optimizer-first/hint")
def _fsdp_optimizer_first(what_happens, why):
    happens = _letter(what_happens, "what_happens", "fsdp.optimizer-first/choice")
    if happens != "c":
        raise _Wrong({"a": "fsdp.optimizer-first/happens-a", "b": "fsdp.optimizer-first/happens-b"}[happens])
    reason = _letter(why, "why", "fsdp.optimizer-first/choice-why", letters=("i", "ii", "iii"))
    if reason != "i":
        raise _Wrong({"ii": "fsdp.optimizer-first/why-ii", "iii": "fsdp.optimizer-first/why-iii"}[reason])
    return {}
