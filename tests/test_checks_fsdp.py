"""The checks of lesson 18's exercises (exercises/fsdp.py): right answers pass, in the forms a learner writes
them; the typical wrong ones fail, each with the message that names what the learner's numbers show."""

import math

import torch

from exercises import check


def said(capsys) -> str:
    return capsys.readouterr().out


def by_ceiling(rows, processes):
    size = math.ceil(rows / processes)
    return [max(0, min(size, rows - rank * size)) for rank in range(processes)]


def by_chunk(rows, processes):
    sizes = [len(piece) for piece in torch.arange(rows).chunk(processes)]
    return sizes + [0] * (processes - len(sizes))


def test_rows_accepts_the_ceiling_and_torch_chunk_as_lists_tuples_or_tensors_of_counts(capsys):
    assert check("fsdp.rows", by_ceiling)
    assert "5 rows on 4 processes are [2, 2, 1, 0]" in said(capsys)
    assert check("fsdp.rows", by_chunk)
    assert check("fsdp.rows", lambda rows, processes: tuple(torch.tensor(by_chunk(rows, processes))))


def test_rows_names_an_even_spread_lost_rows_a_missing_empty_shard_and_others(capsys):
    def even(rows, processes):
        return [rows // processes + (1 if r < rows % processes else 0) for r in range(processes)]

    def floor(rows, processes):
        return [rows // processes] * processes

    def no_empty_shards(rows, processes):
        return [len(piece) for piece in torch.arange(rows).chunk(processes)]

    def reversed_order(rows, processes):
        return by_chunk(rows, processes)[::-1]

    assert not check("fsdp.rows", even)
    assert "your rows spread as evenly as possible" in said(capsys)
    assert not check("fsdp.rows", floor)
    assert "which adds up to 3 rows, not 4" in said(capsys)
    assert not check("fsdp.rows", no_empty_shards)
    assert "one number for each process" in said(capsys)
    assert not check("fsdp.rows", reversed_order)
    assert "not how torch.chunk cuts the rows" in said(capsys)
    assert not check("fsdp.rows", lambda rows, processes: [-1] * processes)
    assert "whole numbers, 0 or more" in said(capsys)


def test_optimizer_first_accepts_c_because_of_i_in_any_spelling(capsys):
    assert check("fsdp.optimizer-first", "c", "i")
    assert "skips a tensor whose .grad is None" in said(capsys)
    assert check("fsdp.optimizer-first", " (C) ", "I.")


def test_optimizer_first_answers_each_wrong_letter_without_giving_the_answer(capsys):
    for happens, why, expected in (("a", "i", "What happens: (a) is not it. Nothing in PyTorch compares"),
                                   ("b", "i", "What happens: (b) is not it. fully_shard replaces each weight"),
                                   ("c", "ii", "Reason (ii) is not it: fully_shard never sees the optimizer"),
                                   ("c", "iii", "whoever holds them"),
                                   ("d", "i", 'should be "a", "b" or "c"'),
                                   ("c", "a", 'should be "i", "ii" or "iii"')):
        assert not check("fsdp.optimizer-first", happens, why)
        assert expected in said(capsys)
    assert not check("fsdp.optimizer-first", ..., "i")
