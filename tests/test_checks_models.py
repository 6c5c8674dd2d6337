"""The checks of lesson 04's exercises (exercises/models.py): the right answer passes, typical wrong
ones get their own message, a model whose inputs stayed behind (on another device than its
parameters) first among them. Machines with GPUs are simulated (the `machine` fixture), and a tensor
"on a GPU" is a CPU tensor that behaves as one (`exercises.core._on_a_gpu`): no GPU is needed. A model's layers
cannot live on a simulated GPU, so the split model's tests use this machine's own two devices
(`two_different_devices()`: the CPU and `meta` without a GPU) and a batch that behaves as if on a GPU."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
import torch
from torch import nn

import utils
from exercises import check
from exercises.core import _on_a_gpu
from utils import try_gpu, two_different_devices

OTHER = [("cpu-only", "meta"), ("one-cuda-gpu", "cuda:0"), ("two-cuda-gpus", "cuda:0"), ("apple-mps", "mps:0")]


def said(capsys) -> str:
    return capsys.readouterr().out


def ones_on(device: str) -> torch.Tensor:
    """torch.ones(3) on ``device``: really for the CPU and meta, as a tensor that behaves so for a GPU."""
    return torch.ones(3, device=device) if device in ("cpu", "meta") else _on_a_gpu(torch.ones(3), device)


# --- models.to-in-place ------------------------------------------------------------------------

RIGHT = {"net": False, "X": True}


@pytest.mark.parametrize(("name", "other"), OTHER)
def test_to_in_place_accepts_the_predictions_and_the_kept_copy_on_every_machine(machine, capsys, name, other):
    machine(name)
    assert check("models.to-in-place", dict(RIGHT), ones_on(other))
    assert f"X stayed on the CPU, and its copy lives on {other}" in said(capsys)


@pytest.mark.parametrize(("name", "other"), OTHER)
def test_to_in_place_catches_the_input_left_behind_on_the_cpu(machine, capsys, name, other):
    machine(name)
    assert not check("models.to-in-place", dict(RIGHT), torch.ones(3))  # X.to(other) alone, as in the cell
    assert f"X_on_other lives on cpu, not on {other}: Tensor.to leaves X where it is" in said(capsys)


def test_to_in_place_accepts_predictions_read_from_the_objects_and_a_copy_made_otherwise(machine, capsys):
    """Without a GPU other is meta: the predictions read off net and X after the cell's lines, as bools,
    NumPy's bools or tensors of one bool; the copy made with .to(device=...) or straight on other."""
    machine("cpu-only")
    net, X = nn.Linear(3, 1), torch.ones(3)
    net.to("meta")
    X.to("meta")
    read = {"net": next(net.parameters()).is_cpu, "X": X.is_cpu}
    assert read == RIGHT
    for on_cpu in (read, {k: np.bool_(v) for k, v in read.items()}, {k: torch.tensor(v) for k, v in read.items()}):
        for X_on_other in (X.to(device=torch.device("meta")), torch.ones(3, device="meta")):
            assert check("models.to-in-place", on_cpu, X_on_other)
            assert "X stayed on the CPU, and its copy lives on meta" in said(capsys)
    assert not check("models.to-in-place", {"net": np.True_, "X": np.True_}, X.to("meta"))
    assert "on_cpu is wrong for net: run the cell" in said(capsys)


def test_to_in_place_names_the_wrong_predictions(capsys):
    assert not check("models.to-in-place", {"net": True, "X": True}, ones_on("meta"))
    assert "on_cpu is wrong for net: run the cell" in said(capsys)
    assert not check("models.to-in-place", {"net": True, "X": False}, ones_on("meta"))
    assert "on_cpu is wrong for net and X" in said(capsys)
    assert not check("models.to-in-place", {"net": False}, ones_on("meta"))
    assert "on_cpu lacks an answer for: X" in said(capsys)
    assert not check("models.to-in-place", {"net": "no", "X": True}, ones_on("meta"))
    assert 'on_cpu["net"] should be a bool, but it is a str' in said(capsys)


def test_to_in_place_catches_a_model_for_the_tensor_another_gpu_and_the_template(machine, capsys):
    machine("two-cuda-gpus")
    assert not check("models.to-in-place", dict(RIGHT), nn.Linear(3, 1))
    assert "X_on_other should be a tensor (torch.Tensor), but it is a Linear" in said(capsys)
    assert not check("models.to-in-place", dict(RIGHT), ones_on("cuda:1"))
    assert "X_on_other lives on cuda:1; it should live on other, cuda:0" in said(capsys)
    assert not check("models.to-in-place", {"net": ..., "X": ...}, ...)
    assert said(capsys).startswith("Not answered yet")


# --- models.split ------------------------------------------------------------------------------

class Split(nn.Module):
    """The worked solution: each layer on its device, the input and the activations moved to them."""

    def __init__(self, first, second):
        super().__init__()
        self.first, self.second = first, second
        self.hidden = nn.Linear(3, 4).to(first)
        self.out = nn.Linear(4, 1).to(second)

    def forward(self, x):
        return self.out(torch.relu(self.hidden(x.to(self.first))).to(self.second))


class InputBehind(Split):
    def forward(self, x):  # the batch is never moved to the first layer's device
        return self.out(torch.relu(self.hidden(x)).to(self.second))


class ActivationsBehind(Split):
    def forward(self, x):  # the hidden activations never follow the second layer
        return self.out(torch.relu(self.hidden(x.to(self.first))))


def test_split_accepts_layers_on_both_devices_that_get_their_inputs_there(capsys):
    """On this machine's two devices (the CPU and meta without a GPU), with a CPU batch and a GPU-like one."""
    first, second = two_different_devices()
    assert check("models.split", Split(first, second), False)
    assert f"split computes across {first} and {second}" in said(capsys)


class MadeLastLayerFirst(nn.Module):
    """Right, but __init__ makes the second layer first: modules() lists Linear(4, 1) before Linear(3, 4)."""

    def __init__(self, first, second):
        super().__init__()
        self.out = nn.Linear(4, 1, device=second)
        self.hidden = nn.Linear(3, 4, device=first)

    def forward(self, x):
        return self.out(self.hidden(x.to(self.hidden.weight.device)).to(self.out.weight.device))


class InAModuleList(nn.Module):
    """Right: the layers in an nn.ModuleList, their devices in a list, a loop in forward."""

    def __init__(self, first, second):
        super().__init__()
        self.devices = [first, second]
        self.layers = nn.ModuleList([nn.Linear(3, 4).to(first), nn.Linear(4, 1).to(second)])

    def forward(self, x):
        for layer, device in zip(self.layers, self.devices, strict=True):
            x = layer(x.to(device))
        return x


@pytest.mark.parametrize("model", [MadeLastLayerFirst, InAModuleList])
def test_split_accepts_layers_made_in_any_order_or_held_in_a_module_list(capsys, model):
    first, second = two_different_devices()
    split = model(first, second)
    assert check("models.split", split, len({p.device for p in split.parameters()}) == 1)
    assert f"split computes across {first} and {second}" in said(capsys)
    assert check("models.split", split, np.False_)
    assert f"split computes across {first} and {second}" in said(capsys)


def test_split_names_the_layers_of_a_wrong_model_made_in_any_order(capsys):
    first, second = two_different_devices()

    class Backwards(MadeLastLayerFirst):  # the layers swapped: each on the other's device
        def __init__(self, first, second):
            super().__init__(second, first)

    assert not check("models.split", Backwards(first, second), False)
    assert f"the first layer is on {second} and the second on {first}; they belong on {first}" in said(capsys)
    assert not check("models.split", nn.Sequential(nn.Linear(4, 1), nn.Linear(3, 4), nn.Linear(4, 1)), False)
    assert "it holds: Linear(4, 1), Linear(3, 4), Linear(4, 1)" in said(capsys)


def test_split_catches_a_model_whose_input_stayed_behind(capsys):
    """Without a GPU the first layer is on the CPU, so the check's GPU-like batch is the one left behind."""
    first, second = two_different_devices()
    assert not check("models.split", InputBehind(first, second), False)
    out = said(capsys)
    assert "the first layer got its input on" in out and f"but its parameters live on {first}" in out
    assert "move what each layer gets to that layer's device, the model's input included" in out


def test_split_catches_activations_left_on_the_first_device(capsys):
    first, second = two_different_devices()
    assert not check("models.split", ActivationsBehind(first, second), False)
    assert f"the second layer got its input on {first}, but its parameters live on {second}" in said(capsys)


def test_split_catches_layers_on_one_device_swapped_or_missing(capsys):
    first, second = two_different_devices()
    assert not check("models.split", Split(first, first), False)
    assert f"both layers of split are on {first}: put the first on {first} and the second on {second}" in said(capsys)
    assert not check("models.split", Split(second, first), False)
    assert f"the first layer is on {second} and the second on {first}; they belong on {first}" in said(capsys)
    assert not check("models.split", nn.Sequential(nn.Linear(3, 1)), False)
    assert "it holds: Linear(3, 1)" in said(capsys)


def test_split_catches_the_class_for_the_model_the_template_and_one_device_true(capsys):
    first, second = two_different_devices()
    assert not check("models.split", Split, False)
    assert "split is the class Split itself" in said(capsys)

    class Template(nn.Module):
        def __init__(self, first, second):
            super().__init__()
            ...

    assert not check("models.split", Template(first, second), False)
    assert "it holds: none" in said(capsys)
    assert not check("models.split", Split(first, second), True)
    assert "one_device is True: look again, run model_device(split)" in said(capsys)
    assert not check("models.split", ..., ...)
    assert said(capsys).startswith("Not answered yet")


# --- models.load-onto --------------------------------------------------------------------------

def load_onto(path, device):
    return torch.load(path, map_location=device, weights_only=True)


@pytest.fixture
def checkpoint(tmp_path) -> pathlib.Path:
    """Section 7's checkpoint: the state of nn.Sequential(nn.Linear(3, 1)), saved on the CPU."""
    path = tmp_path / "line.pt"
    torch.save(nn.Sequential(nn.Linear(3, 1)).state_dict(), path)
    return path


def on_best(state: dict, device: str) -> dict:
    return {k: v if device == "cpu" else _on_a_gpu(v, device) for k, v in state.items()}


@pytest.mark.parametrize(("name", "best"), [("cpu-only", "cpu"), ("one-cuda-gpu", "cuda:0"), ("apple-mps", "mps:0")])
def test_load_onto_accepts_map_location_and_the_state_on_the_best_device(machine, capsys, checkpoint, name, best):
    machine(name)
    assert check("models.load-onto", load_onto, on_best(load_onto(checkpoint, "cpu"), best))
    assert f"state lives on {best}" in said(capsys)


def load_from_a_file_object(path, device):
    """Another right load_onto: the device as its name, the file opened by hand, the result as a plain dict."""
    with open(path, "rb") as file:
        return dict(torch.load(file, map_location=str(device)))


def test_load_onto_accepts_a_device_name_and_a_file_opened_by_hand(machine, capsys, checkpoint):
    machine("cpu-only")
    assert check("models.load-onto", load_from_a_file_object, load_from_a_file_object(checkpoint, utils.try_gpu()))
    assert "state lives on cpu" in said(capsys)


def test_load_onto_catches_a_load_without_map_location(capsys, checkpoint):
    """The check's file is marked as saved on a CUDA GPU: without a GPU, loading it as it is fails."""
    assert not check("models.load-onto", lambda path, device: torch.load(path, weights_only=True),
                 load_onto(checkpoint, "cpu"))
    out = said(capsys)
    if torch.cuda.is_available():  # a real CUDA GPU loads it there, not on the CPU it was asked for
        assert "load_onto puts the tensors on cuda:0, not on cpu" in out
    else:
        assert "load_onto fails for a file saved on a CUDA GPU, loaded onto the CPU: Attempting to deserialize" in out


def test_load_onto_catches_a_device_ignored_and_a_return_that_is_no_state_dict(capsys, checkpoint):
    state = load_onto(checkpoint, "cpu")
    assert not check("models.load-onto", lambda p, d: torch.load(p, map_location="cpu", weights_only=True), state)
    assert "loaded onto meta, load_onto puts the tensors on cpu, not on meta: use the device" in said(capsys)
    assert not check("models.load-onto", lambda p, d: list(load_onto(p, d).values()), state)
    assert "should be a dict, but it is a list" in said(capsys)


def test_load_onto_catches_a_state_left_on_the_cpu_or_of_another_model(machine, capsys, checkpoint):
    machine("one-cuda-gpu")
    assert not check("models.load-onto", load_onto, load_onto(checkpoint, "cpu"))
    assert "state's tensors are on cpu, but your best device is cuda:0: load them onto it" in said(capsys)
    machine("cpu-only")
    assert not check("models.load-onto", load_onto, nn.Linear(3, 1).state_dict())
    assert "state holds bias, weight: load section 7's checkpoint" in said(capsys)
    assert not check("models.load-onto", load_onto, ...)
    assert said(capsys).startswith("Not answered yet")


# --- models.layer-bytes ------------------------------------------------------------------------

SIZE = 4_198_400  # nn.Linear(1024, 1024): (1024 * 1024 + 1024) values of 4 bytes


def parameter_bytes(net):
    return sum(p.numel() * p.element_size() for p in net.parameters())


def test_layer_bytes_on_the_cpu_accepts_none_and_says_what_a_gpu_would_show(machine, capsys):
    machine("cpu-only")
    assert check("models.layer-bytes", parameter_bytes, None)
    assert "4,198,400 bytes. PyTorch keeps no count of main memory" in said(capsys)


@pytest.mark.parametrize(("name", "best", "measured"), [("one-cuda-gpu", "cuda:0", SIZE),
                                                        ("two-cuda-gpus", "cuda:0", SIZE),
                                                        ("apple-mps", "mps:0", SIZE + 12_288)])
def test_layer_bytes_on_a_gpu_prints_what_the_counter_showed(machine, capsys, name, best, measured):
    """Simulated GPU machines: the learner's measured number is what their counter showed."""
    machine(name)
    assert check("models.layer-bytes", parameter_bytes, measured)
    assert f"on {best} the counter grew by {measured:,}" in said(capsys)


@pytest.mark.parametrize("count", [
    lambda net: sum(p.nbytes for p in net.parameters()),
    lambda net: sum(np.prod(p.shape) * p.element_size() for p in net.parameters()),  # NumPy's int64
    lambda net: sum(p.numel() * torch.finfo(p.dtype).bits / 8 for p in net.parameters()),  # a float
    lambda net: sum(torch.tensor(p.numel() * p.element_size()) for p in net.parameters()),  # a tensor
])
def test_layer_bytes_accepts_nbytes_and_a_count_as_numpy_a_float_or_a_tensor(machine, capsys, count):
    machine("cpu-only")
    assert check("models.layer-bytes", count, None)
    assert "4,198,400 bytes. PyTorch keeps no count of main memory" in said(capsys)
    machine("one-cuda-gpu")
    assert check("models.layer-bytes", count, np.int64(SIZE))  # the counter's difference, kept as NumPy's
    assert f"on cuda:0 the counter grew by {SIZE:,}" in said(capsys)


def test_layer_bytes_catches_a_count_of_values_4_bytes_each_and_weights_only(capsys):
    assert not check("models.layer-bytes", lambda net: sum(p.numel() for p in net.parameters()), None)
    assert "parameter_bytes(nn.Linear(1024, 1024)) is 1,049,600: that counts the values" in said(capsys)
    assert not check("models.layer-bytes", lambda net: 4 * sum(p.numel() for p in net.parameters()), None)
    assert "(nn.Linear(10, 10).half()) is 440, as if every value took 4 bytes: these take 2" in said(capsys)
    assert not check("models.layer-bytes", lambda net: net.weight.numel() * net.weight.element_size(), None)
    assert "is 4,194,304: that counts the weights but not the biases" in said(capsys)
    assert not check("models.layer-bytes", lambda net: parameter_bytes(net) / 1e6, None)
    assert "but it is a float" in said(capsys)


def test_layer_bytes_catches_a_measurement_missing_where_a_gpu_is_and_made_up_without_one(machine, capsys):
    machine("one-cuda-gpu")
    assert not check("models.layer-bytes", parameter_bytes, None)
    assert "measured is None, but your machine has cuda:0" in said(capsys)
    machine("cpu-only")
    assert not check("models.layer-bytes", parameter_bytes, SIZE)
    assert "your best device is the CPU, for which PyTorch keeps no count" in said(capsys)


def test_layer_bytes_on_cuda_catches_the_reserved_counter_but_apple_may_round_up(machine, capsys):
    """CUDA's allocated counter grows by exactly the parameters (blocks of 512 bytes, which both fill); its
    reserved counter by whole segments, 4 MiB for the weights and 2 MiB for the bias."""
    machine("one-cuda-gpu")
    assert not check("models.layer-bytes", parameter_bytes, 6 * 2**20)
    assert ("measured is 6,291,456, but on a CUDA GPU memory_allocated grows by exactly the bytes of the "
            "parameters: read it (not memory_reserved)") in said(capsys)
    machine("apple-mps")
    assert check("models.layer-bytes", parameter_bytes, 6 * 2**20)
    assert "on mps:0 the counter grew by 6,291,456" in said(capsys)


def test_layer_bytes_catches_a_counter_read_after_the_move_or_not_subtracted(machine, capsys):
    machine("one-cuda-gpu")
    assert not check("models.layer-bytes", parameter_bytes, 0)  # both readings after the move
    assert "measured is 0, less than the 4,198,400 bytes of the parameters" in said(capsys)
    assert not check("models.layer-bytes", parameter_bytes, 30_000_000)  # the total, not the difference
    assert "more than twice the parameters' 4,198,400 bytes" in said(capsys)

    def template(net):
        """The bytes that the parameters of `net` take."""
        ...

    assert not check("models.layer-bytes", template, ...)
    assert said(capsys).startswith("Not answered yet")


class SplitWithAsTensor(Split):
    """The worked solution written with torch.as_tensor(x, device=...), which copies a GPU batch to the CPU."""

    def forward(self, x):
        hidden = torch.relu(self.hidden(torch.as_tensor(x, device=self.first)))
        return self.out(torch.as_tensor(hidden, device=self.second))


def test_split_accepts_a_forward_that_moves_with_as_tensor(capsys):
    """as_tensor takes the batch as data, which no __torch_function__ of the GPU-like batch sees: the check
    runs with a mode that moves it as CUDA would (exercises.core._OnAGPUCalls), where it stayed "on cuda:0"."""
    first, second = two_different_devices()
    assert check("models.split", SplitWithAsTensor(first, second), False)
    assert f"split computes across {first} and {second}" in said(capsys)


class LeftBehind(nn.Module):
    """Exercise 5's model as given: scale a plain attribute, the offset made on the CPU in forward."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 2)
        self.scale = torch.tensor([2.0, 0.5])

    def forward(self, x):
        return self.linear(x) * self.scale + torch.ones(2)


class Buffered(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 2)
        self.register_buffer("scale", torch.tensor([2.0, 0.5]))

    def forward(self, x):
        return self.linear(x) * self.scale + torch.ones(2, device=x.device)


class BufferedOffsetToo(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 2)
        self.register_buffer("scale", torch.tensor([2.0, 0.5]), persistent=False)
        self.register_buffer("offset", torch.ones(2))

    def forward(self, x):
        return self.linear(x) * self.scale + self.offset


class FrozenParameter(nn.Module):
    def __init__(self, trains=False):
        super().__init__()
        self.linear = nn.Linear(3, 2)
        self.scale = nn.Parameter(torch.tensor([2.0, 0.5]), requires_grad=trains)

    def forward(self, x):
        return self.linear(x) * self.scale + torch.ones_like(x[:, :2])


class ScaleFixedOnly(Buffered):
    def forward(self, x):
        return self.linear(x) * self.scale + torch.ones(2)   # the offset still made on the CPU


def test_left_behind_accepts_a_buffer_a_frozen_parameter_and_an_offset_made_anywhere_right(capsys):
    assert check("models.left-behind", Buffered)
    assert "scale is a buffer, which .to() moves with the parameters" in said(capsys)
    assert check("models.left-behind", BufferedOffsetToo)
    assert check("models.left-behind", FrozenParameter)
    assert "a parameter that never trains" in said(capsys)


def test_left_behind_catches_the_plain_attribute_and_an_offset_made_on_the_cpu(capsys):
    assert not check("models.left-behind", LeftBehind)
    assert "still keeps scale as a plain tensor attribute" in said(capsys)
    assert not check("models.left-behind", ScaleFixedOnly)
    out = said(capsys)
    assert "a tensor it uses stayed on the CPU, or was made there" in out
    assert ("is not on the expected device meta" in out) == (try_gpu().type == "cpu")


def test_left_behind_catches_a_trained_scale_changed_values_and_an_instance(capsys):
    assert not check("models.left-behind", lambda: FrozenParameter(trains=True))
    assert "check wants a class derived from nn.Module" in said(capsys)
    trained = type("Trained", (FrozenParameter,), {"__init__": lambda self: FrozenParameter.__init__(self, True)})
    assert not check("models.left-behind", trained)
    assert "a parameter that training would change" in said(capsys)
    doubled = type("Doubled", (Buffered,), {"forward": lambda self, x: 2 * Buffered.forward(self, x)})
    assert not check("models.left-behind", doubled)
    assert "computes something other than linear(x) * [2.0, 0.5] + 1" in said(capsys)
    assert not check("models.left-behind", Buffered())
    assert "not a model made from it: drop the ()" in said(capsys)


def test_left_behind_says_not_answered_for_the_templates_class(capsys):
    class ScaledOnAnyDevice(nn.Module):
        """The same computation, with every tensor on the model's device after .to()."""

        ...

    assert not check("models.left-behind", ScaledOnAnyDevice)
    assert "Not answered yet" in said(capsys)
