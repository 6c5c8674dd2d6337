"""Every text an exercise check or hint prints, in one table: "<exercise id>/<what>" -> text.

Checks never print a text of their own: they name a key of MESSAGES (exercises/core.py formats it
with the fields the check gives), so the whole of what a learner may read is here, in one place.
"""

MESSAGES: dict[str, str] = {
    # What every check may say (exercises/core.py).
    "core/right": "✓ Right. {why}",
    "core/wrong": "✗ Not yet: {why}",
    "core/hint-offer": 'For a hint, run hint("{id}").',
    "core/not-answered": "Not answered yet: write your answer in the cell above (where the ... is), "
                         "run that cell, then run this one again.",
    "core/how-many": 'check("{id}", ...) takes {wanted} answer(s) after the exercise\'s name ({names}), '
                     "but got {got}.",
    "core/raised": "✗ Not yet: your code raised {error} when the check ran it.",
    "core/no-hint": 'Exercise "{id}" has no hint: the worked solution explains it.',
    "core/wrong-type": "{what} should be {want}, but it is {got}.",
    "core/not-callable": "{what} should be a function you wrote (def ...), but it is {got}.",
    # What a check names when it says what an answer is (the fields {want} and {got} above).
    "core/a-kind": "a {name}",
    "core/an-kind": "an {name}",
    "core/a-tensor": "a tensor (torch.Tensor)",
    "core/or": " or ",
    "core/and": " and ",
    # Timers, checked against a simulated GPU that runs queued work later (exercises/core.py).
    "core/timer-never-called": "your timer never called the function it was given.",
    "core/timer-no-clock": "your timer never read a clock (time.perf_counter(), or elapsed_time between two "
                          "events), so it measured nothing.",
    "core/timer-read-before-wait": "the clock was read while the work was still queued on the GPU: call "
                                   "synchronize(device) after the work and before reading the clock, "
                                   "or you measure only the launch.",
    "core/timer-no-warm-up": "the first call was timed: it is cold (libraries set up, kernels loaded), so "
                             "call the function once, and wait for it, before starting the clock.",
    # --- setup.*: lesson 00 check your setup (exercises/setup.py)
    "setup.kaggle-no-gpu/right": "With those facts setup_advice says to switch a GPU on: Kaggle's PyTorch "
                                 "already fits its GPUs, so never reinstall it there.",
    "setup.kaggle-no-gpu/service": 'kaggle["service"] is {got}: name the service as hosted_notebook() does, '
                                   '"Kaggle".',
    "setup.kaggle-no-gpu/cuda-available": 'kaggle["cuda_available"] is {got}: a session without a GPU cannot '
                                          "use CUDA, so it is False.",
    "setup.kaggle-no-gpu/driver": 'kaggle["driver_cuda"] is {got}: without a GPU there is no driver for '
                                  "driver_cuda_version() to ask, so what would it return?",
    "setup.kaggle-no-gpu/build": 'kaggle["torch_cuda"] is None, the value of a CPU-only build: Kaggle\'s PyTorch '
                                 "is a CUDA build, so torch_cuda is its CUDA version as text.",
    "setup.kaggle-no-gpu/refused": "setup_advice refuses these facts: {error}",
    "setup.kaggle-no-gpu/other-advice": "with these facts setup_advice gives other advice than for a Kaggle "
                                        "session without a GPU: look at each fact again.",
    "setup.kaggle-no-gpu/choice": '{what} should be one of {letters}, but it is {got}.',
    "setup.kaggle-no-gpu/prediction": 'the facts are right, but the advice is not ({got}): run '
                                      "print(setup_advice(**kaggle)) and read what it says.",
    "setup.kaggle-no-gpu/hint": "Section 4 has the same facts for a Colab session without a GPU: what "
                                "changes for Kaggle? A hosted session without a GPU has no driver to ask, and "
                                "its PyTorch is still a CUDA build.",
    "setup.old-driver/right": "A driver that serves CUDA 11.4 runs CUDA 11 builds only, and PyTorch 2.7 is the "
                              "newest release with one (cu118).",
    "setup.old-driver/missing": "lab_server lacks an answer for: {names}.",
    "setup.old-driver/not-a-tag": "{what} is {got}: write a build tag such as \"cu126\", or None.",
    "setup.old-driver/build-of-2.13": 'lab_server["build of 2.13"] is {got}, a build this driver cannot run: '
                                      "read again which build of 2.13 the advice names.",
    "setup.old-driver/release": 'lab_server["newest release"] is "{got}", but the advice offers another release: '
                                "which is the newest in PYTORCH_CUDA_BUILDS with a build this driver runs?",
    "setup.old-driver/cuda-12": 'lab_server["build of 2.7.1"] is {got}, a CUDA 12 build, which needs a driver '
                                "that serves CUDA 12: this one serves 11.4.",
    "setup.old-driver/build-of-2.7": 'lab_server["build of 2.7.1"] is {got}: PyTorch 2.7 publishes cu118, cu126 '
                                     "and cu128; call setup_advice with torch_version=\"2.7.1\".",
    "setup.old-driver/choice": '{what} should be one of {letters}, but it is {got}.',
    "setup.old-driver/why-b": "minor versions need not match: a driver that serves CUDA 11.4 runs a cu118 "
                              "build (NVIDIA's minor-version compatibility), as the advice for 2.7.1 shows. "
                              "What about CUDA 12.6?",
    "setup.old-driver/why-c": "the facts name no GPU: setup_advice knows only the driver and the build, so "
                              "something about those rules 2.13 out.",
    "setup.old-driver/hint": 'Call setup_advice(driver_cuda="11.4", torch_cuda=None, cuda_available=False, '
                             'torch_version="2.13.0") and read it, then again with torch_version="2.7.1". For '
                             "why, compare the driver's CUDA major version with those of 2.13's builds.",
    "setup.too-old/right": "torch_too_old reads every kind of version string, and for this notebook's PyTorch "
                           "({version}) version_advice returns None: nothing to fix.",
    "setup.too-old/raised": 'torch_too_old("{case}") raised {error}: read only the leading major and minor '
                            "numbers, since what follows may be anything (0a0+git1234).",
    "setup.too-old/release": 'torch_too_old("{case}") returns {said}, but {case} is {what} 2.4.',
    "setup.too-old/as-text": 'torch_too_old("{case}") returns {said}, but {case} is {what} 2.4: compared as '
                             'text "2.13" sorts before "2.4", and as a float 2.10 is 2.1. Compare the '
                             "numbers as integers.",
    "setup.too-old/major": 'torch_too_old("{case}") returns {said}, but {case} is {what} 2.4: compare the '
                           "major number first, and the minor only when the majors are equal.",
    "setup.too-old/older-than": "older than",
    "setup.too-old/not-older-than": "not older than",
    "setup.too-old/advice-old": 'version_advice("{case}") returns {got}: for a PyTorch older than 2.4 it should '
                                "return one sentence (a str) that says what to do.",
    "setup.too-old/advice-new": 'version_advice("{case}") returns {got}: when nothing needs fixing it returns '
                                "None, as setup_advice does.",
    "setup.too-old/hint": "Take only the leading major and minor numbers (a regular expression, or split on "
                          '"." and "+"), turn them into ints, and compare the pair with (2, 4): Python '
                          "compares tuples element by element.",
    # --- devices.*: lesson 01 devices (exercises/devices.py)
    "devices.predict-helpers/right": "On this machine try_gpu() is {first}, try_gpu(1) is {second} and "
                                     "try_all_gpus() is {all}.",
    "devices.predict-helpers/missing": "predicted lacks an answer for: {names}.",
    "devices.predict-helpers/shape": 'predicted["{machine}"] should be three answers, (try_gpu(), try_gpu(1), '
                                     "try_all_gpus()), the last a list.",
    "devices.predict-helpers/not-a-device": '{what} is {got}, which is not a device name such as "cpu", '
                                            '"cuda:0" or "mps:0".',
    "devices.predict-helpers/no-index": "{machine}: {call} is not {got}: the helpers name every device with "
                                        "its index (cuda:0, mps:0), so that it equals a tensor's device.",
    "devices.predict-helpers/wrong": "look again at {names}.",
    "devices.predict-helpers/hint": "try_gpu(i) gives GPU number i if the machine has it, else the CPU; a Mac "
                                    "has one GPU. try_all_gpus() lists every GPU, or the CPU alone. For this "
                                    "machine, run the three calls.",
    "devices.same-place/right": "same_place finds the current GPU behind a bare cuda, tells GPUs apart by their "
                                "index, and runs on machines without CUDA too.",
    "devices.same-place/bare-cuda": "same_place({a}, {b}) returns {said} on {machine}: cuda alone means the "
                                    "current GPU, which is GPU {current} there. torch.cuda.current_device() "
                                    "says which one is current.",
    "devices.same-place/type-only": "same_place({a}, {b}) returns {said} on {machine}: two GPUs of one kind are "
                                    "two places, so compare the index too.",
    "devices.same-place/mps": "same_place({a}, {b}) returns {said}: a Mac has one GPU, so mps and mps:0 are "
                              "the same place, and neither is the CPU.",
    "devices.same-place/wrong": "same_place({a}, {b}) returns {said} on {machine}; it should be {want}.",
    "devices.same-place/raised": "same_place({a}, {b}) raised {error} on {machine}.",
    "devices.same-place/raised-no-cuda": "same_place({a}, {b}) raised {error} on {machine}: ask "
                                         "torch.cuda.current_device() only for a bare cuda, and only when "
                                         "torch.cuda.is_available().",
    "devices.same-place/two-gpus-current-0": "a machine with two CUDA GPUs, GPU 0 current",
    "devices.same-place/two-gpus-current-1": "a machine with two CUDA GPUs, GPU 1 current",
    "devices.same-place/no-cuda": "a machine without CUDA",
    "devices.same-place/hint": "Two devices are the same place when their type and index agree, once a missing "
                               "index is filled in: for cuda, the current GPU's number (ask torch.cuda only "
                               "when CUDA is usable); for mps, 0.",
    "devices.never-empty/right": "With [] the loop computes nothing and says nothing; [cpu] makes it compute "
                                 "once, on the CPU.",
    "devices.never-empty/not-a-list": "sum_on_each({case}) returns {got}, not a list with one sum per device.",
    "devices.never-empty/count": "sum_on_each({case}) returns {n} sum(s) for {m} device(s): one per device.",
    "devices.never-empty/values": "sum_on_each({case}) returns {got}: each sum of torch.ones(3) is 3.",
    "devices.never-empty/choice": 'why should be one of "a", "b" or "c", but it is {got}.',
    "devices.never-empty/ignores-device": "sum_on_each([cpu:0]) made no tensor on cpu:0, the device it was given: "
                                          "compute each sum on its own device, torch.ones(3, device=d).",
    "devices.never-empty/why-a": "a for loop over an empty list raises nothing: your own sum_on_each([]) "
                                 "returned [] without a word.",
    "devices.never-empty/why-c": "PyTorch never sees the list: your loop runs once per item, so with no items "
                                 "nothing is computed anywhere.",
    "devices.never-empty/hint": "A for loop runs its body once per item of the list. Call sum_on_each([]) and "
                                "look at what it returns, and at what it printed or raised: nothing.",
    "devices.gpu-memory/right": "On this machine gpu_memory_gib() returns {found}.",
    "devices.gpu-memory/raised": "gpu_memory_gib() raised {error} on {machine}.",
    "devices.gpu-memory/not-a-dict": "gpu_memory_gib() returns a {got} on {machine}: return a dict, {{}} when "
                                     "there is no GPU.",
    "devices.gpu-memory/keys": "on {machine}, gpu_memory_gib() has the keys {got}; it should have {want}, one "
                               "per usable CUDA GPU.",
    "devices.gpu-memory/not-usable": "on a machine whose driver is too old for the build, device_count() says 1 "
                                     "but is_available() says False, and gpu_memory_gib() {did}: count the GPUs "
                                     "only when CUDA is usable, as try_gpu does.",
    "devices.gpu-memory/not-a-number": "on {machine}, gpu_memory_gib()[\"{name}\"] is a {got}: it should be a "
                                       "number of GiB.",
    "devices.gpu-memory/not-positive": "gpu_memory_gib()[\"{name}\"] is {got}: a GPU's memory is more than 0.",
    "devices.gpu-memory/gb": "on {machine}, gpu_memory_gib() says {got} for {name}, a GPU of {gib} GiB: that is "
                             "GB (10**9 bytes), but a GiB is 2**30 bytes.",
    "devices.gpu-memory/values": "on {machine}, gpu_memory_gib() says {got} for {name}, a GPU of {gib} GiB "
                                 "({nbytes} bytes).",
    "devices.gpu-memory/two-gpus": "a machine with two CUDA GPUs",
    "devices.gpu-memory/old-driver": "a machine whose driver is too old for the build (device_count() says 1, "
                                     "is_available() False)",
    "devices.gpu-memory/no-cuda": "a machine without CUDA",
    "devices.gpu-memory/this-machine": "this machine",
    "devices.gpu-memory/did-raise": "raises {error}",
    "devices.gpu-memory/did-return": "returns {found}",
    "devices.gpu-memory/hint": "torch.cuda.get_device_properties(i).total_memory is GPU i's memory in bytes, "
                               "and a GiB is 2**30 bytes. Ask torch.cuda.is_available() before you count the "
                               "GPUs with device_count().",
    # --- tensors.*: lesson 02 tensors on devices (exercises/tensors.py)
    "tensors.half-size/right": "h's values take {n_bytes:,} bytes, exactly 2 MiB, on {device}.",
    "tensors.half-size/shape": "h has shape {shape}; the exercise asks for a 1024 × 1024 matrix.",
    "tensors.half-size/dtype": "h is {dtype}: ask for half precision, dtype=torch.float16.",
    "tensors.half-size/device": "h lives on {got}, but your best device is {best}: create h there (device=device).",
    "tensors.half-size/numel": "n_bytes is {n_bytes:,}, the number of values in h; each value takes several "
                               "bytes (h.element_size() says how many).",
    "tensors.half-size/bytes": "n_bytes is {n_bytes:,}, which is not what h's values take: compute it from h, "
                               "its number of values times the bytes of one.",
    "tensors.half-size/hint": "Factory functions such as torch.zeros take dtype= and device= together. h.numel() "
                              "counts the values, h.element_size() gives the bytes of one.",
    "tensors.missing-gpu/right": 'On your machine torch.ones(2, device="cuda:5") {outcome}.',
    "tensors.missing-gpu/raises": "raises {kind}: {message}",
    "tensors.missing-gpu/creates": "creates the tensor: this machine has {count} CUDA GPUs, so cuda:5 exists",
    "tensors.missing-gpu/none": 'error is None, but on this machine torch.ones(2, device="cuda:5") raises: '
                                "create the tensor inside try, and keep what the except clause catches.",
    "tensors.missing-gpu/a-string": "error is a str: keep the exception itself (the err of except ... as err), "
                                    "not its text.",
    "tensors.missing-gpu/not-an-error": "error should be the exception you caught (or None), but it is {got}.",
    "tensors.missing-gpu/other": 'error is {kind}: {message}. That is not what torch.ones(2, device="cuda:5") '
                                 "raises on this machine: keep the exception that creating this tensor raises.",
    "tensors.missing-gpu/unexpected": 'error is {got}, but on this machine torch.ones(2, device="cuda:5") '
                                      "raises nothing: it has {count} CUDA GPUs, so error should be None.",
    "tensors.missing-gpu/hint": "Set error = None, create the tensor inside a try: block, and in the except "
                                "clause (except Exception as err:) keep err in error. What it catches depends "
                                "on the machine.",
    "tensors.retype/right": "retyped has memory of its own ({old} bytes per value in t, {new} in retyped): a "
                            "change of type always copies, even on the same device.",
    "tensors.retype/device": "retyped lives on {got}, but t is on {want}: keep the device and change only the type.",
    "tensors.retype/t-changed": "t is float16, but the template makes it float32: run its first line again and "
                                "leave t as it is; the float16 copy goes in retyped.",
    "tensors.retype/same-dtype": "retyped has t's own type, {dtype}: ask .to() for torch.float16 as well.",
    "tensors.retype/dtype": "retyped is {dtype}; the exercise asks for torch.float16.",
    "tensors.retype/values": "retyped does not hold t's values: make it from t, with t.to(...).",
    "tensors.retype/answer": "copies is {copies}, but retyped.data_ptr() and t.data_ptr() differ: look at the "
                             "two addresses.",
    "tensors.retype/hint": "t.to(device, torch.float16) changes the type on the same device. Print "
                           "retyped.data_ptr() and t.data_ptr(): the same address means the same memory.",
    "tensors.describe/right": "describe works for tensors of any shape and type, on the CPU, CUDA GPUs and "
                              "Apple's GPU.",
    "tensors.describe/not-a-string": "describe returns a {got} for {case}, not a str.",
    "tensors.describe/shape": "describe gives {got!r} for {case}: write the shape as a tuple, like (2, 3).",
    "tensors.describe/dtype": "describe gives {got!r} for {case}: write the type without its torch. prefix, "
                              "like float32.",
    "tensors.describe/device": "describe gives {got!r} for {case}, which lives on {device}: end with the "
                               "tensor's own device, as str(t.device) writes it.",
    "tensors.describe/different": "describe gives {got!r} for {case}; it should give {want!r}.",
    "tensors.describe/cpu-matrix": "a 2 × 3 float32 matrix on the CPU",
    "tensors.describe/half-vector": "a float16 vector on cuda:0",
    "tensors.describe/int-number": "a single int64 number on cuda:1",
    "tensors.describe/mps-matrix": "a bool matrix on Apple's GPU",
    "tensors.describe/hint": "tuple(t.shape) is (2, 3); str(t.dtype) is 'torch.float32', so drop the 'torch.' "
                             "prefix; str(t.device) is 'cpu' or 'cuda:0'. An f-string puts them together.",
    # --- copies.*: lesson 03 copies between devices (exercises/copies.py)
    "copies.other-way/right": "The sum lives on {device}, X's device: the copy of Y went to X, not X to Y.",
    "copies.other-way/on-second": "the sum lives on {got}, Y's device: this exercise copies Y to X's device "
                                  "({first}) instead.",
    "copies.other-way/elsewhere": "the sum lives on {got}; it should live where X is, on {first}.",
    "copies.other-way/values": "result is on the right device, but its values are not X + Y. If you drew Y again "
                               "on the CPU, call torch.manual_seed(0) first, so that it gets the same values.",
    "copies.other-way/dtype": "result holds {got} values, but X and Y are float32: add them as they are.",
    "copies.other-way/hint": "Copy Y, not X: .to() gives a copy on the device you name, and X.device names X's. "
                             "Without a GPU the second device is meta, which holds no values: catch the "
                             "NotImplementedError and draw Y again on the CPU (torch.manual_seed(0) first).",
    "copies.copy-true/is": "shares_memory says False even for t and t itself: two addresses are numbers, so "
                           "compare them with ==, not with is (each data_ptr() call makes a new int object).",
    "copies.copy-true/right": "copy=True allocates new memory and copies the values into it, even on the same "
                              "device.",
    "copies.copy-true/function": "shares_memory says {said} for {pair}: compare the addresses of their first "
                                 "values, a.data_ptr() and b.data_ptr().",
    "copies.copy-true/answer": "your shares_memory works, but it answers False for t and "
                               "t.to(t.device, copy=True): try it.",
    "copies.copy-true/hint": "t.data_ptr() is the address of t's first value. Write shares_memory(a, b) with "
                             "it, then call shares_memory(t, t.to(t.device, copy=True)).",
    "copies.which-copy/missing": "copies_to_cpu lacks an answer for: {names}.",
    "copies.which-copy/wrong": "Not right yet, {count} of the 7 answers: {said_copy} where you said the call "
                               "copies and {said_none} where you said it does not. Ask of each call whether Python "
                               "ends up holding the tensor's values themselves (numbers or text), or only a fact kept "
                               "beside them, or a new tensor where t lives.",
    "copies.which-copy/hint": "A call copies to the CPU when it needs the values themselves in main memory "
                              "(as Python numbers or text). A tensor's shape and device are kept in main "
                              "memory anyway, and an operation on t computes where t lives.",
    "copies.to-numpy/requires-grad": "to_numpy fails for {case}: NumPy cannot hold the autograd record, so "
                                     "take the values without it first.",
    "copies.to-numpy/on-gpu": "to_numpy fails for {case}: NumPy arrays live in main memory, so copy the "
                              "tensor there first.",
    "copies.to-numpy/not-an-array": "to_numpy returns a {got} for {case}, not a NumPy array.",
    "copies.to-numpy/values": "to_numpy returns an array with other values than the tensor's, for {case}.",
    "copies.to-numpy/cpu": "a CPU tensor",
    "copies.to-numpy/grad": "a tensor that requires gradients",
    "copies.to-numpy/gpu": "a tensor on a CUDA GPU",
    "copies.to-numpy/gpu-grad": "a CUDA tensor that requires gradients",
    "copies.to-numpy/hint": "Two steps before .numpy(): one drops the gradient record (.detach()), one copies "
                            "to main memory (.cpu()); both do nothing when there is nothing to do.",
    # --- models.*: lesson 04 models on devices (exercises/models.py)
    "models.to-in-place/right": "net moved in place; X stayed on the CPU, and its copy lives on {other}.",
    "models.to-in-place/missing": "on_cpu lacks an answer for: {names}.",
    "models.to-in-place/wrong": "on_cpu is wrong for {names}: run the cell, then look at model_device(net) "
                                "and X.device.",
    "models.to-in-place/left-behind": "X_on_other lives on {got}, not on {other}: Tensor.to leaves X where it "
                                      "is and gives back a copy, which you must keep.",
    "models.to-in-place/elsewhere": "X_on_other lives on {got}; it should live on other, {other}.",
    "models.to-in-place/values": "X_on_other is on {other}, but it is not a copy of X (torch.ones(3)).",
    "models.to-in-place/hint": "Module.to and Tensor.to differ in what they change: one changes the object "
                               "it is called on, the other gives back a new one.",
    "models.split/right": "split computes across {first} and {second}, each layer with its input on its own "
                          "device, and model_device names no single device for it.",
    "models.split/a-class": "split is the class {name} itself: make a model of it, with the two devices.",
    "models.split/layers": "split should hold two nn.Linear layers, Linear(3, 4) then Linear(4, 1); it holds: "
                           "{found}.",
    "models.split/one-device": "both layers of split are on {got}: put the first on {first} and the second on "
                               "{second}.",
    "models.split/placement": "the first layer is on {got0} and the second on {got1}; they belong on {first} "
                              "and {second}, in the order two_different_devices() gives.",
    "models.split/inputs-behind": "for {case}, the {layer} layer got its input on {got}, but its parameters "
                                  "live on {want}: in forward, move what each layer gets to that layer's "
                                  "device, the model's input included.",
    "models.split/output-device": "for {case}, split's output lives on {got}; it should come out of the "
                                  "second layer, on {second}.",
    "models.split/output-shape": "for {case} (2 rows of 3 features), split's output has shape {shape}, "
                                 "not (2, 1).",
    "models.split/one-device-answer": "one_device is {one_device}: look again, run model_device(split) and "
                                      "read what it says.",
    "models.split/no-linear": "none",
    "models.split/first-layer": "first",
    "models.split/second-layer": "second",
    "models.split/cpu-batch": "a batch on the CPU, as a data loader gives it",
    "models.split/gpu-batch": "a batch on a CUDA GPU",
    "models.split/what-returns": "what split returns",
    "models.split/hint": "In __init__, make each layer and move it there, nn.Linear(3, 4).to(first), and keep "
                         "the devices (self.first = first). In forward, x.to(self.first) goes into the first "
                         "layer, and its output moves to self.second before the second.",
    "models.load-onto/right": "load_onto puts a checkpoint's tensors on the device you name, even a file saved "
                              "on a GPU onto the CPU; state lives on {device}.",
    "models.load-onto/no-map-location": "load_onto fails for {case}: {error} Tell torch.load where to put the "
                                        "tensors as it reads them.",
    "models.load-onto/keys": "load_onto returns other entries than the file holds, for {case}: return what "
                             "torch.load gives.",
    "models.load-onto/ignores-device": "for {case}, load_onto puts the tensors on {got}, not on {device}: use "
                                       "the device it is given.",
    "models.load-onto/values": "load_onto changes the values, for {case}: return what torch.load gives.",
    "models.load-onto/state-keys": "state holds {keys}: load section 7's checkpoint, whose entries are "
                                   "0.weight and 0.bias.",
    "models.load-onto/state-device": "state's tensors are on {got}, but your best device is {best}: load them "
                                     "onto it.",
    "models.load-onto/gpu-to-cpu": "a file saved on a CUDA GPU, loaded onto the CPU",
    "models.load-onto/cpu-to-meta": "a file saved on the CPU, loaded onto meta",
    "models.load-onto/what-returns": "what load_onto returns for {case}",
    "models.load-onto/no-keys": "nothing",
    "models.left-behind/an-instance": "check wants the class itself, {name}, not a model made from it: drop the ().",
    "models.left-behind/not-a-module": "check wants a class derived from nn.Module, but got a {got}.",
    "models.left-behind/no-linear": "{name}() has no attribute linear that is an nn.Linear(3, 2): keep the layer "
                                    "as the exercise's class has it.",
    "models.left-behind/values": "On the CPU, {name}() computes something other than linear(x) * [2.0, 0.5] + 1: "
                                 "keep what the model computes, change only where its tensors live.",
    "models.left-behind/plain-attribute": "{name}() still keeps scale as a plain tensor attribute, which .to() "
                                          "does not move.",
    "models.left-behind/fails": "After {name}().to({other}), calling it on an input on {other} fails with "
                                "\"{error}\": a tensor it uses stayed on the CPU, or was made there.",
    "models.left-behind/trained-scale": "{name}() makes scale a parameter that training would change: register it "
                                        "as a buffer, which .to() moves and no optimizer touches.",
    "models.left-behind/output-elsewhere": "After {name}().to({other}), its output is on {got}, not on {other}.",
    "models.left-behind/buffer": "scale is a buffer, which .to() moves with the parameters",
    "models.left-behind/other-way": "every tensor it uses reaches the input's device",
    "models.left-behind/frozen-parameter": "scale is a parameter that never trains (requires_grad=False), which "
                                           ".to() moves; a buffer says the same more plainly",
    "models.left-behind/right": "{how}, and the model runs on {other} with its input there.",
    "models.left-behind/hint": "self.register_buffer(\"scale\", ...) makes scale a buffer; in forward, make the "
                               "offset where x is: device=x.device.",
    "models.load-onto/hint": "torch.load(path, map_location=device, weights_only=True) puts every tensor on "
                             "device as it reads the file; try_gpu() is your best device.",
    "models.layer-bytes/right": "{summary}",
    "models.layer-bytes/measured": "The parameters take {size:,} bytes; on {device} the counter grew by "
                                   "{measured:,}.",
    "models.layer-bytes/on-cpu": "The parameters take {size:,} bytes. PyTorch keeps no count of main memory, so "
                                 "there was nothing to measure here: on a CUDA GPU the counter should grow by "
                                 "exactly these bytes, on Apple's GPU by as many or a little more.",
    "models.layer-bytes/numel": "parameter_bytes({case}) is {got:,}: that counts the values, but each takes "
                                "several bytes (p.element_size()).",
    "models.layer-bytes/assumes-4": "parameter_bytes({case}) is {got:,}, as if every value took 4 bytes: these "
                                    "take {size} each (p.element_size()).",
    "models.layer-bytes/weights-only": "parameter_bytes({case}) is {got:,}: that counts the weights but not "
                                       "the biases. Count every parameter.",
    "models.layer-bytes/count": "parameter_bytes({case}) is {got:,}, which is not the bytes its parameters take.",
    "models.layer-bytes/cpu-number": "your best device is the CPU, for which PyTorch keeps no count of tensor "
                                     "memory: set measured = None.",
    "models.layer-bytes/not-measured": "measured is None, but your machine has {device}: read its memory "
                                       "counter before and after moving a new nn.Linear(1024, 1024) there.",
    "models.layer-bytes/too-small": "measured is {measured:,}, less than the {size:,} bytes of the parameters: "
                                    "read the counter before creating the layer on the device, and again after.",
    "models.layer-bytes/too-large": "measured is {measured:,}, more than twice the parameters' {size:,} bytes: "
                                    "subtract the counter's value before the move from its value after.",
    "models.layer-bytes/not-exact": "measured is {measured:,}, but on a CUDA GPU memory_allocated grows by exactly "
                                    "the bytes of the parameters: read it (not memory_reserved) just before and just "
                                    "after the move, with nothing else made in between.",
    "models.layer-bytes/hint": "Sum p.numel() * p.element_size() over net.parameters(). For the measurement: "
                               "torch.cuda.memory_allocated(device) (or torch.mps.current_allocated_memory()) "
                               "before, the layer .to(device), the counter again, and the difference.",
    # --- timing.*: lesson 05 asynchronous GPU work (exercises/timing.py)
    "timing.naive-clock/right": "launch_seconds reads the clock straight after the call, the device idle before each "
                                "read. On this machine ({device}), torch.randn(2048, 2048): read straight after the "
                                "call {naive}, median_seconds {honest}, {ratio} times as long.{note}",
    "timing.naive-clock/cpu-note": " On a CPU the two agree up to noise: each call has finished when it returns.",
    "timing.naive-clock/busy": "a call was launched while the one before it was still queued: with a full queue even "
                               "a launch waits, so wait for each call (synchronize(device)) after its read, before "
                               "the next one.",
    "timing.naive-clock/waited": "launch_seconds returned {got}, about the simulated GPU's work per call ({work}), not "
                                 "its launch ({launch}): read the clock straight after fn() returns, before any wait, "
                                 "and return seconds.",
    "timing.naive-clock/not-median": "launch_seconds returned {got}, but the simulated GPU's launches take a median "
                                     "of {launch}: return the median of the reads (statistics.median), not their "
                                     "mean or their minimum.",
    "timing.naive-clock/ratio": 'ratio_decided_by is "{got}": look again at what the naive read measures on a GPU, '
                                "and at what the honest time adds to it. On a CPU the two agree: why?",
    "timing.naive-clock/hint": "The naive read is the lesson's mistake, made on purpose: a clock read straight after "
                               "fn(). Keep it fair all the same: warm up first, and leave the device idle before each "
                               "read, since with a full queue even a launch waits.",
    "timing.spread/not-a-timing": "{what} should return a Timing(median, iqr), but it returns a {got}.",
    "timing.spread/median": "the median is {got}, but the simulated GPU's calls take a median of {want}: the median of "
                            "the per-call times after the warm-up (not their mean), in seconds.",
    "timing.spread/iqr-negative": "the IQR is {got}, below zero: it is the third quartile less the first.",
    "timing.spread/iqr-zero": "the IQR is 0, but the simulated GPU's calls vary: compute it from the per-call times.",
    "timing.spread/iqr": "the IQR is {got}, but the simulated GPU's per-call times spread by about 0.4 ms between "
                         "their first and third quartiles: the third quartile less the first, of the per-call times, "
                         "in seconds (not their standard deviation).",
    "timing.spread/iqr-half": "the IQR is {got}, about half the simulated GPU's 0.4 ms between its first and third "
                              "quartiles: with q = statistics.quantiles(times, n=4), the IQR is q[2] - q[0], the third "
                              "quartile less the first, not less the median.",
    "timing.spread/right": "The median and the IQR match the simulated GPU's calls. On this machine ({device}), a "
                           "{n} x {n} product: yours {mine}, median_and_iqr_seconds {helper}.",
    "timing.spread/hint": "Keep simple_timer as it is up to its last line: statistics.quantiles(times, n=4) gives the "
                          "three quartiles, and the middle one is the median.",
    "timing.queued-timer/waits-each": "your timer synchronised {syncs} times while it timed {calls} calls: waiting "
                                      "after "
                                      "each call measures latency, as simple_timer does. Queue the calls back to back "
                                      "and wait once, at the end.",
    "timing.queued-timer/total": "queued_timer returned the time of all {calls} calls together, not the time per call.",
    "timing.queued-timer/per-call": "queued_timer returned {got} per call, but the simulated GPU works {want} per call "
                                    "on average: time only the calls after the warm-up, up to the final wait.",
    "timing.queued-timer/row": "  {k} x {k} product: waited for after each call {waited}, queued {queued} per call",
    "timing/events-need-a-gpu": "(not run here: your timer is built on events, which a GPU records in its queue and "
                                "a CPU has not; on a GPU it runs as it did on the simulated one)",
    "timing.queued-timer/right": "queued_timer warms up, queues the calls and waits once. On this machine ({device}), "
                                 "with median_seconds for the wait after each call:\n{rows}",
    "timing.queued-timer/hint": "simple_timer waits inside its loop; this timer waits only after it. The warm-up "
                                "stays, "
                                "and the result is a time per call.",
    # --- payoff.*: lesson 06 where a GPU pays off (exercises/payoff.py)
    "payoff.crossover/clear": "for made-up timings where the GPU is clearly ahead from n = 256 on, crossover returned "
                              "{got}, not {want}.",
    "payoff.crossover/overlap": "at n = 128 the GPU's median is the smaller, but the two are closer than their spreads "
                                "(GPU {gpu}, CPU {cpu}): too close to call, so the crossover is {want}, not {got}. The "
                                "GPU is ahead only when it beats the CPU by more than the spread of either.",
    "payoff.crossover/dip": "for made-up timings where the GPU is clearly ahead at n = 64, behind at 128 and ahead "
                            "from "
                            "256 on, crossover returned {got}: the GPU has to stay ahead at every larger size, so the "
                            "crossover is {want}.",
    "payoff.crossover/always": "for made-up timings where the GPU is clearly ahead at every size, crossover returned "
                               "{got}: the crossover is then the smallest size, {want}.",
    "payoff.crossover/never": "for made-up timings where the GPU is never clearly ahead, crossover returned {got}: "
                              "return None when there is no crossover.",
    "payoff.crossover/no-gpu": "No GPU here, and PyTorch uses one CPU thread, so nothing to measure: on a GPU the "
                               "check times both devices from n = 32 to 1024 and names the crossover your function "
                               "finds, where the GPU's line, below the CPU's for small products, crosses it.",
    "payoff.crossover/threads": "No GPU here, so the check measured the CPU against itself, one thread against all "
                                "{threads}, from n = 32 to 1024: your function finds all threads clearly ahead from "
                                "n = {n} on. The same trade as a GPU's: a fixed cost per call against more arithmetic.",
    "payoff.crossover/threads-none": "No GPU here, so the check measured the CPU against itself, one thread against "
                                     "all {threads}, from n = 32 to 1024: your function finds no n from which all "
                                     "threads are clearly ahead at every larger size; a quieter run may show it.",
    "payoff.crossover/measured": "Measured on this machine, {device} against the CPU: the GPU is clearly ahead from "
                                 "n = {n} on.",
    "payoff.crossover/measured-none": "Measured on this machine, {device} against the CPU: from no n up to 1024 is the "
                                      "GPU clearly ahead at every larger size; a quieter run may show it.",
    "payoff.crossover/right": "crossover decides every made-up case right. {measured}",
    "payoff.crossover/touching": "crossover(on_cpu, on_gpu) returns {got}, but there the GPU's median plus its IQR "
                                 "only equals the CPU's median less its IQR: level is not ahead. The GPU is ahead "
                                 "where its upper edge is below the CPU's lower one; here from {want}.",
    "payoff.crossover/unsorted": "crossover(on_cpu, on_gpu) returns {got} when the dicts list the largest size "
                                 "first, and {want} when they list the smallest first: walk the sizes in order, "
                                 "sorted(on_cpu), not in the order the dict happens to hold them.",
    "payoff.crossover/hint": "First decide each size alone: is the GPU clearly ahead, by more than the spread (IQR) of "
                             "either? Then look from the largest size down: where does the run of sizes at which it is "
                             "ahead begin?",
    "payoff.peaks/missing": "peak_for lacks an answer for: {names}.",
    "payoff.peaks/value": 'peak_for["{name}"] is {got}: answer "float32", "TF32" or "float16", or None where no peak '
                          "is published.",
    "payoff.peaks/wrong": "wrong answers: {count} of {total}. Look again at: {names}.",
    "payoff.peaks/share": " = {share} of the {kind} peak ({peak} TFLOP/s)",
    "payoff.peaks/row": "  {label}: {rate} GFLOP/s{share}",
    "payoff.peaks/right": "Each case names the peak that applies. On this machine ({device}, n = {n}):\n{rows}",
    "payoff.peaks/tf32": "float32 with TF32",
    "payoff.peaks/hint": "Which units run the product decides the peak: TF32 exists only from the Ampere generation "
                         "on (an A100, not a T4), float16 runs on the tensor cores, and a CPU has no published peak.",
    "payoff.copy-every/remainder": "with k={k} and {steps} steps the log holds {got} norms: the last steps, which fill "
                                   "no whole group of {k}, need copying too.",
    "payoff.copy-every/length": "with k={k} and {steps} steps the log holds {got} norms, not one per step.",
    "payoff.copy-every/not-floats": "the log holds values of type {got}, not Python floats: copy the norms to the CPU "
                                    "as numbers.",
    "payoff.copy-every/values": "the log's values are not the norms of m @ m: log torch.linalg.matrix_norm(m @ m) at "
                                "every step, as log_every_step does.",
    "payoff.copy-every/copies": "with k={k}, the {steps} steps copied values to the CPU {got} times, not {want}: every "
                                "float(), .item() or .tolist(), and every write of a value into a CPU tensor, is a "
                                "copy (and on a GPU a wait). Copy a whole group of norms at once.",
    "payoff.copy-every/too-few": "with k={k}, the {steps} steps copied values to the CPU {got} times, not {want}: "
                                 "log_every copies once per group of k steps, so that the log reaches the CPU a "
                                 "group at a time as training goes, not only at the end.",
    "payoff.copy-every/row": "  copy every {k:>4} steps: {time}",
    "payoff.copy-every/right": "log_every logs every norm and copies once per group of k steps. On this machine "
                               "({device}), {steps} steps:\n{rows}\nEvery 100 steps against once: {against}.",
    "payoff.copy-every/hint": "Keep the norms of the current group on the device in a list; when the group is full, "
                              "torch.stack makes one tensor of them, which one call copies.",
    # --- memory.*: lesson 07 GPU memory (exercises/memory.py)
    "memory.adam-step/no-grad": "state_bytes fails for {case} before its first backward pass, when p.grad is None: a "
                                "missing gradient takes no bytes.",
    "memory.adam-step/keys": "state_bytes should return a dict with the keys \"weights\", \"gradients\" and \"state\"; "
                             "it lacks {names}.",
    "memory.adam-step/elements": "state_bytes says {got} bytes of weights for {case}, the number of its elements: "
                                 "multiply each tensor's elements by the bytes of each.",
    "memory.adam-step/weights": "state_bytes says {got} bytes of weights for {case}, which holds {want}.",
    "memory.adam-step/gradients-early": "before the first backward pass {case} has no gradients (p.grad is None), but "
                                        "state_bytes counts {got} bytes of them: count the gradients that exist.",
    "memory.adam-step/lazy": "before the first optimizer.step(), Adam holds no state, but state_bytes says {got} bytes "
                             "for {case}: count the tensors in optimizer.state, not what it will hold.",
    "memory.adam-step/gradients": "after one step state_bytes counts {got} bytes of gradients for {case}, which holds "
                                  "{want}.",
    "memory.adam-step/state": "after one step state_bytes counts {got} bytes of Adam's state for {case}, but Adam "
                              "holds about {want}: count every tensor in optimizer.state[p], for every p.",
    "memory.adam-step/predicted": "your prediction, {got} MiB, is off: the layer's weights alone are {weights} MiB. "
                                  "What "
                                  "does one training step with Adam add for each weight?",
    "memory.adam-step/no-counters": "{device} keeps no memory counters, so the count is the answer.",
    "memory.adam-step/counters": "On {device}, allocated grew by {grew} MiB during the step (the weights were there "
                                 "before it; cuBLAS's workspace may add to it).",
    "memory.adam-step/right": "state_bytes counts the weights, the gradients and Adam's state, before and after the "
                              "first step. For nn.Linear(4096, 4096) after one step it counts {counted} MiB. "
                              "{measured}",
    "memory.adam-step/float32-network": "a float32 network",
    "memory.adam-step/float64-layer": "a float64 layer",
    "memory.adam-step/hint": "Count bytes as numel() * element_size() of each tensor: the parameters, their .grad "
                             "where "
                             "it is not None, and the tensors in each optimizer.state[p], a dict per parameter.",
    "memory.alias/missing": "still_held lacks an answer for: {names}.",
    "memory.alias/wrong": "wrong answers: {count} of {total}. Look again at: {names}.",
    "memory.alias/alive": "alive",
    "memory.alias/gone": "gone",
    "memory.alias/no-counters": "no counters here",
    "memory.alias/counters": "allocated {allocated} MiB, reserved {reserved} MiB",
    "memory.alias/row": "  {label:17} the tensor is {alive:5}  {counters}",
    "memory.alias/right": "A second name keeps a tensor alive, and release returns only what no tensor uses. On this "
                          "machine ({device}):\n{rows}",
    "memory.alias/after-del-big": "del big, release",
    "memory.alias/after-del-alias": "del alias",
    "memory.alias/release-again": "release again",
    "memory.alias/hint": "alias = big makes a second name for the same tensor, not a copy. A tensor is freed when its "
                         "last name goes; the allocator then keeps its block, until a release hands the block back.",
    # --- oom.*: lesson 08 out of memory (exercises/oom.py)
    "oom.kept-alive/not-oom": "failing_step raised {error}, which is not an out-of-memory error: end it with the "
                              "impossible torch.empty(2**62, dtype=torch.uint8).",
    "oom.kept-alive/no-error": "failing_step returned without an error: it should end by asking for the impossible "
                               "torch.empty(2**62, dtype=torch.uint8), which every allocator refuses.",
    "oom.kept-alive/no-ref": "failing_step put nothing in the list it was given: append a weakref.ref to its tensor.",
    "oom.kept-alive/not-weakref": "failing_step put a {got} in the list, not a weakref.ref: a weak reference does not "
                                  "keep the tensor alive, so it can tell whether something else does.",
    "oom.kept-alive/gone-early": "the tensor was already gone while the error was kept: keep it in a local variable of "
                                 "failing_step, as a step keeps its activations, until the impossible request.",
    "oom.kept-alive/held-elsewhere": "the tensor is still alive after del and gc.collect(): something besides the "
                                     "error holds it, a global name perhaps. Keep it only in a local variable.",
    "oom.kept-alive/while-caught": "failing_step works, but alive_while_caught is wrong: run it, keep the error as "
                                   "caught, and look at alive[0]().",
    "oom.kept-alive/after-del": "failing_step works, but alive_after_del is wrong: look at alive[0]() after del caught "
                                "and gc.collect().",
    "oom.kept-alive/right": "A kept error keeps its traceback, the traceback the frame of failing_step, and the frame "
                            "its tensor: deleting the error lets the tensor go.",
    "oom.kept-alive/hint": "weakref.ref(t) is a reference that does not keep t alive: calling it returns t while "
                           "something else still holds t, and None once nothing does.",
    "oom.bisect/oom-raised": "largest_batch_bisect let an out-of-memory error through: a size whose step runs out of "
                             "memory does not fit, so catch the error (is_out_of_memory) and try a smaller size.",
    "oom.bisect/one-above": "largest_batch_bisect returned {got}, one too many: {got} samples of 5 KiB do not fit in "
                            "16 MiB, {want} do. Your search ends on the first size that fails; return the last one "
                            "that fits.",
    "oom.bisect/one-below": "largest_batch_bisect returned {got}, one too few: {want} samples of 5 KiB fit in 16 MiB "
                            "too. Does your search ever try the size just below the one that failed?",
    "oom.bisect/not-twice": "for a step that fits up to a batch of 100, started at 101, largest_batch_bisect returned "
                            "{got}, not 100. Halving tries 101, which fails, then 50: the size that failed is 101, "
                            "not twice 50, so 100 was never tried. Search between the last size that failed and the "
                            "first that fits.",
    "oom.bisect/too-large": "{got} samples of 5 KiB do not fit in 16 MiB, only {want}: on the CPU nothing refuses, so "
                            "compare the bytes the step returns with budget_bytes.",
    "oom.bisect/halving-only": "largest_batch_bisect returned {got}, what halving finds: search between it and the "
                               "size that failed, twice as large.",
    "oom.bisect/too-small": "largest_batch_bisect returned {got}, but {want} samples of 5 KiB fit in 16 MiB (halving "
                            "finds {halved}).",
    "oom.bisect/tries": "the answer is right, but it took {tries} tries of the step: bisection halves the interval at "
                        "each try, and needs at most about {enough} in all here.",
    "oom.bisect/above-start": "for a start of 1000 whose step fits, largest_batch_bisect returned {got}: never try "
                              "above start.",
    "oom.bisect/start-fits": "for a start of 1000 whose step fits, largest_batch_bisect returned {got}, not 1000.",
    "oom.bisect/oom": "for a step that runs out of memory above a batch of 1500, largest_batch_bisect returned {got}, "
                      "not 1500: a size whose step raises an out-of-memory error does not fit.",
    "oom.bisect/swallowed": "a step with a bug (a shape error at some sizes) went unnoticed and the search returned "
                            "{got}: let every error but an out-of-memory one through.",
    "oom.bisect/right": "Within 16 MiB at 5 KiB a sample, halving finds {halved}; your bisection finds {got}, the most "
                        "that fit, in {tries} tries of the step. It counts a size that runs out of memory as too "
                        "large, and lets a bug through.",
    "oom.bisect/hint": "Halve from start as largest_batch_that_fits does, but remember the last size that failed: "
                       "the answer lies between it and the first size that fits (not always twice that one: 101 "
                       "halves to 50). Then try the middle of the two, as the lesson's helper tries one size, and "
                       "keep the half that still holds the answer.",
    "oom.late-error/missing": "answers lacks {names}.",
    "oom.late-error/letter": 'answers["{name}"] is {got!r}: answer with a letter, "a", "b" or "c".',
    "oom.late-error/without-a": "the error is not reported at the bug's line: there Python only queues the kernel and "
                                "goes on, and the kernel fails later, on the GPU.",
    "oom.late-error/without-c": "a kernel's error is not lost: CUDA keeps it, and a later call into CUDA reports it.",
    "oom.late-error/with-b": "a synchronize() waits until everything queued so far has finished, the faulty kernel "
                             "included, so its error cannot slip past it.",
    "oom.late-error/with-c": "the bug's line only queued the kernel; the traceback names the line that met the error.",
    "oom.late-error/cost-a": "CUDA_LAUNCH_BLOCKING=1 makes every kernel launch wait; how often does one "
                             "synchronize() wait?",
    "oom.late-error/cost-c": "a synchronize() is not free: Python waits there until the GPU has run everything "
                             "queued, and the queue runs dry.",
    "oom.late-error/right": "An error inside a kernel surfaces at the first call that meets the GPU after it; a "
                            "synchronize() after a suspect line brings it there, at the cost of one wait.",
    "oom.late-error/hint": "Section 4: Python queues a kernel and goes on; CUDA reports a kernel's error at a later "
                           "call into CUDA. What does a synchronize() wait for?",
    # --- precision.*: lesson 09 mixed precision (exercises/precision.py)
    "precision.bf16-vs-fp16/missing": 'which lacks an answer for "{name}".',
    "precision.bf16-vs-fp16/choice": '{what} should be "a", "b" or "c", but it is {got}.',
    "precision.bf16-vs-fp16/ampere-b": "{name}: bfloat16 tensor cores arrived with Ampere (section 2), and an "
                                       "A100's data sheet gives bfloat16 the same peak as float16, 312 TFLOP/s.",
    "precision.bf16-vs-fp16/t4-a": "{name}: a T4 or a V100 has tensor cores for float16 but none for bfloat16, "
                                   "which arrived with Ampere (section 2); autocast accepts bfloat16 there and "
                                   "emulates it.",
    "precision.bf16-vs-fp16/cpu-a": "{name}: few CPUs compute float16 (the newest Intel servers' AMX-FP16, some Arm "
                                    "chips); on the others the products are converted and take a slow path, as your "
                                    "float16 row shows.",
    "precision.bf16-vs-fp16/half-the-bytes": "{name}: half the bytes halve the memory traffic, but the arithmetic "
                                             "needs hardware for the format; without it a step is no faster.",
    "precision.bf16-vs-fp16/no-loss": "{what} should return the step's loss, a tensor with one value (training_step "
                                      "returns it), but it returns a {got}.",
    "precision.bf16-vs-fp16/float16-no-scaler": "the float16 step scales no loss: without a GradScaler (or with "
                                                "one made with enabled=False), small gradients underflow to 0 in "
                                                "float16 (section 3). Give the float16 step a torch.amp.GradScaler "
                                                "and pass it to training_step.",
    "precision.bf16-vs-fp16/float16-scaler-disabled": "the float16 step's GradScaler scales nothing: it is a CUDA "
                                                      "scaler made before the check ran, and this machine has no "
                                                      "CUDA, so PyTorch disabled it when it was made (it warned "
                                                      "\"CUDA is not available. Disabling.\"); one made with "
                                                      "enabled=False is disabled too. Make the scaler inside "
                                                      "make_step: the check counts a CUDA scaler it sees made "
                                                      "enabled as one that scales on a GPU.",
    "precision.bf16-vs-fp16/products-dtype": "the step of {called} computes its matrix products in {seen}, but this "
                                             "variant computes them in {want}: run its forward pass under "
                                             "torch.autocast(device.type, dtype=...) with that dtype (None: no "
                                             "autocast), as measure() in section 4 does.",
    "precision.bf16-vs-fp16/needless-scaler": "the {label} step uses a GradScaler, but only float16, with its small "
                                              "range, needs one: a scaler only adds work to the step you time.",
    "precision.bf16-vs-fp16/not-training": "the {label} step does not train: its loss went from {first:.4f} to "
                                           "{last:.4f} over the timed steps. Does each call run the optimizer on the "
                                           "model it computes with, as training_step does?",
    "precision.bf16-vs-fp16/noisy": "too noisy to compare (an IQR over a third of the median): run the check "
                                    "again when the machine is quieter",
    "precision.bf16-vs-fp16/row": "  {label:17}: {timing} a step{versus}",
    "precision.bf16-vs-fp16/row-skipped": "  {label:17}: not on this Mac ({error})",
    "precision.bf16-vs-fp16/right": "float16 with a scaler, bfloat16 and float32 without. Your steps on {device}:\n"
                                    "{rows}\nOn an Ampere or later GPU the two 16-bit rows come close; a T4 or a V100 "
                                    "emulates bfloat16; a CPU without bfloat16 instructions runs both 16-bit rows "
                                    "slower than float32 (section 5).",
    "precision.bf16-vs-fp16/the-step": "the step that {called} returns",
    "precision.bf16-vs-fp16/versus": "; {versus} as float32's",
    "precision.bf16-vs-fp16/versus-same": "; {versus}",
    "precision.bf16-vs-fp16/hint": "measure() in section 4 builds what one variant needs: a fresh make_model(), an "
                                   "optimizer, and a GradScaler only where the dtype's range calls for one "
                                   "(section 3). make_step does the same and returns the step instead of timing it. "
                                   "For which: section 2 says what Ampere GPUs compute, section 5 what CPUs do.",
    "precision.underflow/missing": "zeros lacks an answer for: {names}.",
    "precision.underflow/subnormal": "{got} is how many gradients fall below float16's smallest normal number, about "
                                     "6 × 10⁻⁵: those become subnormal numbers, not 0. Count the values that are "
                                     "exactly 0 after the conversion.",
    "precision.underflow/below-smallest": "{got} is how many gradients lie below float16's smallest subnormal, 2⁻²⁴ "
                                          "(about 6 × 10⁻⁸), but those above half of it round up to it, not down to "
                                          "0. Count the values that are exactly 0 after the conversion.",
    "precision.underflow/count": 'zeros["{name}"] is {got}, but that is not how many of the 1001 gradients become '
                                 "exactly 0 there: convert, then count with (t == 0).sum().",
    "precision.underflow/not-a-power": "largest_scale is {got}, not a power of two: scaling by 2**k changes only the "
                                       "exponent, so it adds no rounding error.",
    "precision.underflow/exponent": "largest_scale is {got}: give the scale itself, 2**{got}, not its exponent.",
    "precision.underflow/overflows": "scaled by 2**{k}, the largest gradient, 1, becomes {got}, which float16 turns "
                                     "into {value}: its largest number is 65504.",
    "precision.underflow/too-small": "scaled by 2**{k} nothing overflows, but a larger power of two is safe too: the "
                                     "largest gradient is 1, and float16 holds numbers up to 65504.",
    "precision.underflow/right": "float16 turns {f16} of the 1001 gradients into 0; scaled by 2**16 it loses "
                                 "{f16_scaled}, and bfloat16 loses {bf16}. The largest safe scale is 2**{k} = {scale}, "
                                 "so GradScaler's first factor, 2**16, overflows the largest gradient here: it skips "
                                 "that step and halves the factor.",
    "precision.underflow/hint": "Convert with .half() or .bfloat16() and count with int((t == 0).sum()); scale before "
                                "the conversion (grads * 2**16). For the scale, try 2.0**k for growing k until "
                                "torch.isfinite(...).all() says False.",
    "precision.small-model/not-three": "small_setup should return three things, (model, inputs, targets), but it "
                                       "returns a {got}.",
    "precision.small-model/no-linear": "the model small_setup returns has no nn.Linear layer: build it as "
                                       "make_model() does, 64 wide.",
    "precision.small-model/width": "the model's first linear layer is {got}: 64 wide, it is 64 x 64.",
    "precision.small-model/batch": "the inputs have the shape {got} and the targets {targets}: a batch of 64 "
                                   "examples of 64 numbers is (64, 64), with 64 targets.",
    "precision.small-model/devices": "the model is on {model}, the inputs on {inputs} and the targets on {targets}: "
                                     "move all three to device, or the first layer fails with a device error.",
    "precision.small-model/choice": '{what} should be "a", "b" or "c", but it is {got}.',
    "precision.small-model/why-b": "float16 overflows above 65504 whatever the size of the matrices, and these "
                                   "products of numbers near 1 stay far below it.",
    "precision.small-model/why-c": "the scaler skips a step only when a gradient overflows, whatever the batch "
                                   "size; bfloat16, without a scaler, gains as little at this size.",
    "precision.small-model/float32-only": "float32 took {full} a step; this device has no mixed precision to "
                                          "compare (autocast_dtype says None).",
    "precision.small-model/both": "float32 took {full} a step, {label} {mixed}: {versus}.",
    "precision.small-model/right": "The model is 64 wide and the batch 64, all on {device}, where {result} A step "
                                   "this small is a dozen little kernels: launches and casts, not arithmetic, decide "
                                   "its time.",
    "precision.small-model/the-model": "the model small_setup returns",
    "precision.small-model/the-inputs": "the inputs small_setup returns",
    "precision.small-model/the-targets": "the targets small_setup returns",
    "precision.small-model/hint": "Write make_model's body with 64 in place of width, and draw the data as section 4 "
                                  "does with batch = 64; move all of it to device. For why: what does a step of such "
                                  "tiny products spend its time on (lesson 05)?",
    # --- tf32.*: lesson 10 TF32 and determinism (exercises/tf32.py)
    "tf32.precision-settings/choice": '{what} should be "a", "b" or "c", but it is {got}.',
    "tf32.precision-settings/not-restored": 'after product_error(where, "{precision}") the matmul precision is '
                                            '"{after}", not "{before}" as before: put the setting back in a finally, '
                                            "or every later product of the notebook runs with it.",
    "tf32.precision-settings/never-set": 'product_error(where, "{precision}") never calls '
                                         'torch.set_float32_matmul_precision("{precision}"), so it measures whatever '
                                         "setting is in force.",
    "tf32.precision-settings/zero": 'product_error({where}, "{precision}") is 0: a float32 product compared with '
                                    "another float32 product shows no error. Compare with a float64 product made on "
                                    "the CPU, a.double() @ b.double().",
    "tf32.precision-settings/too-large": 'product_error({where}, "{precision}") is {got:.3g}, far above what rounding '
                                         "gives (about 10⁻⁴ for a 512 x 512 float32 product): compare with the "
                                         "float64 product of the same two matrices, as the largest absolute "
                                         "difference.",
    "tf32.precision-settings/negative": 'product_error({where}, "{precision}") is {got:.3g}, below zero: an error is '
                                        "the size of a difference, so take .abs() before .max().",
    "tf32.precision-settings/not-on-device": 'product_error({where}, "{precision}") puts no tensor on {where}: move '
                                             "the two matrices there (.to(where)) before multiplying, or the rows of "
                                             "your device measure the CPU again.",
    "tf32.precision-settings/where-b": "TF32 is NVIDIA's, inside the tensor cores of Ampere and later GPUs: a CPU, a "
                                       'T4, a V100 and a Mac have none, so "high" changes nothing there (your CPU '
                                       "rows show it).",
    "tf32.precision-settings/where-c": 'on an Ampere or later GPU, "high" lets float32 products run on TF32 tensor '
                                       "cores, which keep 10 mantissa bits of each input: section 2's emulation "
                                       "shows what that costs.",
    "tf32.precision-settings/mixed-api": "torch.get_float32_matmul_precision() raises in this notebook, before your "
                                         "function ran: a new name (torch.backends.cuda.matmul.fp32_precision) "
                                         "allows TF32 while the old setting does not. Set it back to \"ieee\" (or "
                                         "restart the kernel), then run this check again.",
    "tf32.precision-settings/row": "  {where:5} {precision:10}: largest error {error:.2e}",
    "tf32.precision-settings/right": 'product_error sets each precision and puts it back. "highest" is the accurate '
                                     "setting everywhere; your machine:\n{rows}",
    "tf32.precision-settings/hint": "Section 2's cell does it for one device: set the precision, multiply on where, "
                                    "copy back, compare with a float64 product made on the CPU, and put the setting "
                                    "back in a finally. Make it a function of where and precision.",
    "tf32.chunked-sum/one-by-one": "chunked_sum([2**24, 0, 0, 0, 1, 1, 1, 1], 4) is {got:.0f}: the 1s were lost, as "
                                   "in one running total of all the numbers. Sum each chunk first (the four 1s make "
                                   "4, which 2**24 + 4 holds), then add the chunk sums.",
    "tf32.chunked-sum/chunks": "chunked_sum([2**24, 0, 0, 0, 1, 1, 1, 1], 4) is {got:.0f}, not {want:.0f}: the two "
                               "chunks of 4 sum to 2**24 and 4. v.view(-1, chunk) has one chunk a row.",
    "tf32.chunked-sum/not-consecutive": "chunked_sum([0, 0, 0, 1, 1, 0, 2**24, 0], 2) is {got:.0f}, not "
                                        "{want:.0f}: in chunks of 2 values that come one after the other, [0, 0], "
                                        "[0, 1], [1, 0] and [2**24, 0], each 1 is summed without 2**24, and the "
                                        "total keeps both. Yours lost them, as a chunk does that holds a 1 together "
                                        "with 2**24, further along v: each of your chunks should be a run of chunk "
                                        "consecutive values.",
    "tf32.chunked-sum/not-float32": "chunked_sum([2**24, 1, 1, 1, 1], 1) is {got:.0f}, not {want:.0f}: with chunks of "
                                    "1 it is one float32 running total, in which 2**24 + 1 rounds back to 2**24. "
                                    "Your total kept more digits: a Python float is float64, and torch.cumsum on the "
                                    "CPU keeps its running total in float64 too (rounding only each output to "
                                    "float32). Add the chunk sums one by one in float32: np.cumsum(..., "
                                    "dtype=np.float32), or a loop whose total is a float32 tensor.",
    "tf32.chunked-sum/float64-total": "for 2**24 followed by {n} chunks that each sum to 1, chunked_sum(v, 10) gives "
                                      "{got:.0f}, what adding the chunk sums in float64 gives, not {want:.0f}: in a "
                                      "float32 running total each 1 rounds away against 2**24. torch.cumsum on the "
                                      "CPU keeps its running total in float64 (rounding only each output to "
                                      "float32), and a Python float is float64: neither loses the low bits this "
                                      "exercise is about. Use np.cumsum(..., dtype=np.float32), or a loop whose "
                                      "total is a float32 tensor.",
    "tf32.chunked-sum/pairwise": "for 2**24 followed by {n} chunks that each sum to 1, chunked_sum(v, 10) gives "
                                 "{got:.0f}, not {want:.0f}, which adding the chunk sums one by one in float32 gives: "
                                 "there each 1 rounds away against 2**24. Are the chunk sums added one by one, in a "
                                 "float32 running total? (torch.sum adds pairwise, and so does np.sum.)",
    "tf32.chunked-sum/values": "for section 3's million numbers in chunks of {chunk}, chunked_sum gives {got:.6f}, "
                               "but summing each chunk and adding the chunk sums one by one in float32 gives "
                               "{want:.6f}.",
    "tf32.chunked-sum/not-a-chunk": "most_accurate is {got}: answer with one of the chunk sizes, 10, 1000 or 100_000.",
    "tf32.chunked-sum/most-accurate": "most_accurate is {got}, but another chunk size lands closer to the float64 "
                                      "sum: print the three errors.",
    "tf32.chunked-sum/choice": '{what} should be "a", "b" or "c", but it is {got}.',
    "tf32.chunked-sum/why-b": "float32 reaches 3.4 × 10³⁸, and a sum of a million numbers of size about 1 stays far "
                              "below: the range is not the problem, the digits are.",
    "tf32.chunked-sum/why-c": "a running total adds the numbers in the order they come, one after the other: the "
                              "order is fixed.",
    "tf32.chunked-sum/row": "  {label:17}: error {error:.2e}",
    "tf32.chunked-sum/chunks-of": "chunks of {size}",
    "tf32.chunked-sum/running-total": "one running total",
    "tf32.chunked-sum/right": "chunked_sum adds the chunk sums one by one in float32. Against the float64 sum of "
                              "section 3's numbers:\n{rows}\nThe larger the chunks, the fewer additions into a large "
                              "total: torch.sum adds in blocks and trees for this reason.",
    "tf32.chunked-sum/hint": "v.view(-1, chunk).sum(dim=1) gives the chunk sums; np.cumsum(..., dtype=np.float32)[-1] "
                             "adds them one by one in float32, as the exercise's hint does for all the numbers.",
    "tf32.repeatable/left-on": "train leaves deterministic mode on: switch it off again at the end (in a finally), "
                               "or every later cell runs in it and raises where an operation has no deterministic "
                               "version.",
    "tf32.repeatable/shape": "train should return the 10 losses as one tensor (torch.stack(losses)), but it returns "
                             "{got}.",
    "tf32.repeatable/shape-of": "a tensor of shape {shape}",
    "tf32.repeatable/not-deterministic": "train never calls torch.use_deterministic_algorithms(True). On a CPU two "
                                         "runs agree anyway, but on a CUDA GPU an operation with atomic additions "
                                         "(section 4) can make them differ: switch it on inside train.",
    "tf32.repeatable/not-on-device": "train({device}) puts no tensor on {device}: move the model and the data there "
                                     "(.to(where)), or both runs are on the CPU and the comparison across devices "
                                     "compares the CPU with itself.",
    "tf32.repeatable/not-learning": "the loss went from {first:.4f} to {last:.4f} in 10 steps: the model does not "
                                    "learn. Does each step run the optimizer, as training_step does?",
    "tf32.repeatable/differ": "two runs of train differ by up to {diff:.2e}: seed inside train, before making the "
                              "model and the data, so that every run starts alike.",
    "tf32.repeatable/cpu-only": "Without a GPU there is no second device to compare: on one, the check also trains "
                                "on the CPU and says which torch.allclose tolerance accepts the two runs.",
    "tf32.repeatable/across": "On {device} and on the CPU the losses differ by up to {relative:.1e} relatively; the "
                              "smallest tolerance that accepts the two runs is {rtol}.",
    "tf32.repeatable/no-rtol": "none up to 1e-2",
    "tf32.repeatable/cublas-late": "train raised cuBLAS's determinism error, which asks for CUBLAS_WORKSPACE_CONFIG "
                                   "(now {now} in this notebook). PyTorch reads that variable once, at the kernel's "
                                   "first matrix product on the GPU, so setting it later changes nothing. Restart "
                                   "the kernel and run the lesson from its first cell, which sets it before any "
                                   "product.",
    "tf32.repeatable/unset": "not set",
    "tf32.repeatable/right": "Two runs on {device} gave the same bits, in deterministic mode. {across}",
    "tf32.repeatable/hint": "Inside train: torch.manual_seed(0) before the model, a seeded torch.Generator for the "
                            "data, deterministic mode on, 10 calls of training_step with loss_fn=F.mse_loss; stack "
                            "the losses, and switch the mode off in a finally.",
    # --- loading.*: lesson 11 data loading (exercises/loading.py)
    "loading.spawn/choice": '{what} should be "a", "b" or "c", but it is {got}.',
    "loading.spawn/no-batch": "first_batch_seconds never takes a batch from a DataLoader: time next(iter(loader)).",
    "loading.spawn/workers": "the DataLoader has num_workers={got}: the exercise starts one worker.",
    "loading.spawn/context": "first_batch_seconds({given}) makes a DataLoader with multiprocessing_context={got}: "
                             "pass on the context it is given.",
    "loading.spawn/clock-after-start": "the clock starts after iter(loader), which is where the worker starts: start "
                                       "it before, or you time the batch but not the worker's start.",
    "loading.spawn/not-first-batch": "with a worker that takes 1 s to start and 10 ms a batch, first_batch_seconds "
                                     "returns {got}, not {want}: time from asking for the batches to getting the "
                                     "first one, once.",
    "loading.spawn/why-a": "pickle stores a class by its module and name only, never its code: the worker has to "
                           "import it.",
    "loading.spawn/why-c": "that is fork. spawn starts a new Python interpreter, which has none of the notebook's "
                           "classes.",
    "loading.spawn/right": "Your clock covers the worker's start. On this machine (default start method: {method}) "
                           "the first batch came after {default} by default, after {spawn} with a spawned worker.",
    "loading.spawn/hint": "Make the DataLoader with num_workers=1 and multiprocessing_context=context, read "
                          "time.perf_counter(), take next(iter(loader)), read it again. For why: section 2 says what "
                          "pickle writes down for a class.",
    "loading.workers/no-helper": "per_step never calls step_time_split: measure with it, as it synchronises after "
                                 "every step and keeps the first batch apart.",
    "loading.workers/num-workers": "per_step({asked}) gives step_time_split a loader with num_workers={got}.",
    "loading.workers/batches": "per_step gives step_time_split max_batches={got}, not 16.",
    "loading.workers/not-a-pair": "per_step should return a pair (waiting, computing), but it returns a {got}.",
    "loading.workers/computing-total": "the computing time is that of all the steps together: divide it by the "
                                       "number of batches.",
    "loading.workers/computing": "the computing time per step is StepTimes' computing divided by its batches.",
    "loading.workers/first-batch": "the waiting is divided by all the batches, but it covers all but the first: "
                                   "step_time_split keeps the first batch, which starts the workers, apart. Divide "
                                   "by batches - 1.",
    "loading.workers/waiting-total": "the waiting time is that of all the steps together: divide it by the number "
                                     "of batches it covers, batches - 1.",
    "loading.workers/waiting": "the waiting per step is StepTimes' waiting divided by batches - 1 (the first batch "
                               "is kept apart).",
    "loading.workers/cores": "a worker that sleeps, as one waiting for a disk does, needs no CPU core: workers that "
                             "only wait help beyond the number of cores. Workers that decode images are another "
                             "matter.",
    "loading.workers/row": "  num_workers={workers}: {waiting} waiting, {computing} computing per step",
    "loading.workers/right": "per_step measures per step, the first batch apart. On this machine ({cores} CPU "
                             "cores):\n{rows}\n{seen}",
    "loading.workers/waiting-fell": "The waiting fell from {wait_0} to {wait_n} a step with {n} workers.",
    "loading.workers/waiting-stayed": "The waiting did not fall much with {n} workers ({wait_0}, then {wait_n}): "
                                      "was the machine busy with other work?",
    "loading.workers/computing-stayed": "The computing stayed about the same ({compute_0}, then {compute_n}): "
                                        "workers take the waiting off the training step, not its work.",
    "loading.workers/computing-rose": "The computing rose from {compute_0} to {compute_n}: the workers share this "
                                      "machine's cores with the training step, which then computes more slowly.",
    "loading.workers/computing-fell": "The computing fell from {compute_0} to {compute_n}: workers do not compute "
                                      "the step, so this is the machine's noise (other work ended).",
    "loading.workers/hint": "slow_loader(workers) of section 3 makes the loader; step_time_split(model, loader, "
                            "optimizer, device, max_batches=16) measures it. Then divide: the waiting by "
                            "batches - 1, the computing by batches.",
    # --- loop.*: lesson 12 training loop (exercises/loop.py)
    "loop.save-optimizer/choice": '{what} should be "a", "b" or "c", but it is {got}.',
    "loop.save-optimizer/not-resumed": "the resumed epochs end with losses of {kept:.2f} and {fresh:.2f}, as from "
                                       "untrained weights: load the checkpoint's model state into the model.",
    "loop.save-optimizer/ignores-checkpoint": "handed a checkpoint of untrained weights, resume_one_epoch still "
                                              "ends its epoch at a loss of {loss:.2f}, as a trained model does: does "
                                              "it load the checkpoint it is given, rather than section 4's saved?",
    "loop.save-optimizer/unseeded": "resume_one_epoch(saved, True) gives {first:.4f}, and called once more "
                                    "{again:.4f}: its runs differ in more than the optimizer. Seed inside the "
                                    "function, as the exercise asks: torch.manual_seed(...) for dropout, and a "
                                    "DataLoader of its own with generator=torch.Generator().manual_seed(...) for the "
                                    "order of the batches.",
    "loop.save-optimizer/same": "resume_one_epoch gives {loss:.4f} both ways: does it load the optimizer's state "
                                "only when keep_optimizer is True?",
    "loop.save-optimizer/wrong-way-round": "with the saved state the epoch's loss is {kept:.4f}, with a fresh Adam "
                                           "{fresh:.4f}: is keep_optimizer used the right way round?",
    "loop.save-optimizer/fresh-lr": "with the saved state the epoch's loss is {kept:.4f}, with a fresh Adam "
                                    "{fresh:.4f}, but that fresh Adam has a learning rate of {lr:g}, not the "
                                    "checkpoint's {saved:g}: make it as section 4 does, so that only the optimizer's "
                                    "state differs.",
    "loop.save-optimizer/why-a": "both runs make Adam with the same learning rate, 0.01: the difference is in what "
                                 "Adam remembers.",
    "loop.save-optimizer/why-c": "both runs load the trained weights: only the optimizer's state differs.",
    "loop.save-optimizer/right": "Resumed with Adam's saved state, the epoch's training loss was {kept:.3f}; with a "
                                 "fresh Adam {fresh:.3f}, {ratio:.1f} times as much. A run resumed without its "
                                 "optimizer's state restarts from trained weights: save a scheduler's state_dict() "
                                 "and SGD's momentum too.",
    "loop.save-optimizer/hint": "Build as section 4 does: digits_mlp().to(device), load_state_dict, a new Adam, and "
                                "its load_state_dict only if keep_optimizer; then one train_one_epoch, with the "
                                "loader and torch.manual_seed seeded alike in both runs.",
    "loop.resume-exactly/missing": 'needed_for lacks an answer for "{name}".',
    "loop.resume-exactly/choice": '{what} should be "a", "b" or "c", but it is {got}.',
    "loop.resume-exactly/generator-b": "dropout draws from PyTorch's global generator, not from the loader's.",
    "loop.resume-exactly/generator-c": "the starting weights of a resumed run come from the checkpoint's model "
                                       "state, not from the loader's generator.",
    "loop.resume-exactly/rng-a": "the loader draws its order from a generator of its own.",
    "loop.resume-exactly/rng-c": "the weights come back from the checkpoint; what else draws random numbers while "
                                 "the model trains?",
    "loop.resume-exactly/not-loadable": "torch.load(..., weights_only=True) cannot read your checkpoint back "
                                        "({error}): keep to tensors, numbers, strings and plain containers.",
    "loop.resume-exactly/model": "after restore the model's weights are not those saved: load the checkpoint's "
                                 "model state into the model.",
    "loop.resume-exactly/optimizer": "after restore Adam's step count is not the saved one: load the optimizer's "
                                     "state too.",
    "loop.resume-exactly/generator": "after restore the loader's generator is not where it was at the save, so the "
                                     "resumed run shuffles as in epoch 1 again: save its state and set it back.",
    "loop.resume-exactly/rng": "after restore PyTorch's global random state is not the one at the save, so dropout "
                               "zeroes other units: save torch.get_rng_state() and set it back, with no seed after "
                               "it.",
    "loop.resume-exactly/differs": "everything came back, but 2 more epochs do not end with the weights of 4 "
                                   "straight ones: does restore change anything after setting the states, such as "
                                   "a seed?",
    "loop.resume-exactly/right": "2 epochs, a checkpoint and 2 more epochs give the very weights of 4 straight "
                                 "epochs, bit for bit: the weights, Adam's state, the order of the batches and "
                                 "dropout's random units all came back.",
    "loop.resume-exactly/hint": "The checkpoint holds every state the training draws on: the model's and the "
                                "optimizer's state_dict(), and the state of both random generators, the loader's and "
                                "PyTorch's global one. restore puts each back with its own setter.",
    "loop.pin-price/choice": '{what} should be "a", "b" or "c", but it is {got}.',
    "loop.pin-price/not-copied": "copy_pageable() returns a tensor on {got}, not on {want}: copy host to the device.",
    "loop.pin-price/pins-first": "copy_pageable() pins memory before it copies (it calls pin_memory()): what it "
                                 "times is a pin and a copy from pinned memory, not a copy from pageable memory.",
    "loop.pin-price/copies-pinned": "copy_pageable() copies a tensor that is in pinned memory: what it times is a "
                                    "copy from pinned memory, not one from pageable memory.",
    "loop.pin-price/not-pinned": "pin_host() should return a copy of host in pinned memory, but what it returns "
                                 "(on {device}) is not pinned.",
    "loop.pin-price/pays": "pinning copies the tensor within main memory, as the driver's staging does for a copy "
                           "from pageable memory: done once, for one copy, it saves nothing.",
    "loop.pin-price/thread-b": "any thread may pin memory: without workers the loop's own thread does it.",
    "loop.pin-price/thread-c": "a copy from pinned memory is as fast wherever it was pinned: the thread decides when "
                               "the pinning happens.",
    "loop.pin-price/measured": "On {device}: pinning {size} took {pin}, one copy of it from pageable memory {copy}; "
                               "pinning against the copy: {versus}. These are repeated pins: after the first, "
                               "PyTorch reuses the pinned memory it keeps in a cache, so they time mostly the copy "
                               "into it, and a first pin, which page-locks new memory, costs more.",
    "loop.pin-price/skipped": "No CUDA GPU here ({device}): nothing to pin, so nothing was timed. On one, pinning "
                              "64 MiB takes about as long as a copy from pageable memory, whose staging does the "
                              "same work (reasoned in the solution, not a recorded run).",
    "loop.pin-price/right": "{measured} Pinning pays for a tensor copied many times, or for a copy that must not "
                            "hold Python up (non_blocking=True).",
    "loop.pin-price/hint": "pin_host returns host.pin_memory(), copy_pageable host.to(device). For pays: what does "
                           "the driver do with pageable memory before a copy (section 5)?",
    # --- ddp.*: lesson 13 distributed data parallel (exercises/ddp.py)
    "ddp.cuda-before-workers/missing": "can_use_cuda lacks an answer for: {names}.",
    "ddp.cuda-before-workers/fork": "Not for \"fork\": a forked worker is a copy of the notebook, which has started "
                                    "CUDA already. What does CUDA say when a copy of such a process calls it?",
    "ddp.cuda-before-workers/spawn": "Not for \"spawn\": a spawned worker is a fresh Python, which has never "
                                     "started CUDA. Can it start CUDA itself?",
    "ddp.cuda-before-workers/forkserver": "Not for \"forkserver\": the server is a fresh Python that never touched "
                                          "CUDA, and each worker is a copy of that server, not of the notebook.",
    "ddp.cuda-before-workers/torchrun": "Not for \"torchrun\": torchrun runs the script in new processes, which "
                                        "share nothing with the notebook.",
    "ddp.cuda-before-workers/right": "Only a copy of a process that started CUDA cannot start it again: a forked "
                                     "worker fails with \"Cannot re-initialize CUDA in forked subprocess\".",
    "ddp.cuda-before-workers/hint": "Ask of each: is the worker a copy of the notebook, or a fresh process?",
    "ddp.no-sync/no-group": "the check could not open a process group of one process (Gloo, on the CPU) to run "
                            "your step in: {error}",
    "ddp.no-sync/no-distributed": "this build of PyTorch has no torch.distributed",
    "ddp.no-sync/group-open": "a process group of {size} processes is open in this notebook, and the check needs "
                              "one of one process: restart the kernel, run the lesson again, then this check.",
    "ddp.no-sync/steps": "accumulate_step called optimizer.step() {n} times: step once, after both micro-batches.",
    "ddp.no-sync/not-halved": "the step moved the weights twice as far as one step on all the examples: divide "
                              "each micro-batch's loss by the number of micro-batches, so that the two "
                              "gradients add up to the gradient of the mean.",
    "ddp.no-sync/stale": "the gradients of an earlier step were still in .grad and went into this step: zero "
                         "them first (optimizer.zero_grad()).",
    "ddp.no-sync/one-half": "only one micro-batch's gradient reached the step: run forward and backward with "
                            "gradients for both micro-batches (no_sync() skips the all-reduce, not the "
                            "backward pass), then step.",
    "ddp.no-sync/weights": "after your step the weights differ from one step on all the examples at once (by up "
                           "to {diff:.1e}): run both micro-batches forward and backward, each loss halved, "
                           "then step once.",
    "ddp.no-sync/none": "your step made no all-reduce, so the processes' gradients would never be averaged: run "
                        "the last micro-batch outside no_sync().",
    "ddp.no-sync/no-no-sync": "the weights are right, but your step made {n} all-reduces, one per backward(): run "
                              "the first micro-batch inside `with model.no_sync():`.",
    "ddp.no-sync/forward-outside": "you used model.no_sync(), but your step still made {n} all-reduces: DDP decides "
                                   "in the forward pass whether the backward all-reduces, so run the first "
                                   "micro-batch's forward AND backward inside the block.",
    "ddp.no-sync/reversed": "the weights are right and your step made one all-reduce, but it carried only the first "
                            "micro-batch's gradient: the last micro-batch's was added after it. With several "
                            "processes each would then step with its own, unaveraged second half, and the replicas "
                            "drift apart. Run the earlier micro-batches inside no_sync() and the last one outside.",
    "ddp.no-sync/counts-missing": "all_reduces lacks an answer for: {names}.",
    "ddp.no-sync/counts": "your function is right, but all_reduces is not, for: {names}. DDP all-reduces in every "
                          "backward() whose forward ran outside no_sync().",
    "ddp.no-sync/hint": "Zero the gradients, then split inputs and labels in two (.chunk(2)). Run the first "
                        "piece's forward and backward inside `with model.no_sync():`, the second's after the "
                        "block, each loss divided by 2; .grad adds them up. Then step once.",
    "ddp.no-sync/right": "One all-reduce in your step instead of two, and the weights of one step on all 32 "
                         "examples (to 1e-6). With k micro-batches, no_sync() saves k - 1 all-reduces a step.",
    "ddp.scaling-rule/not-three": "{call} returns {got}: it should return a list of 3 losses, one per epoch.",
    "ddp.scaling-rule/n-values": "{n} values",
    "ddp.scaling-rule/not-numbers": "values that are not numbers",
    "ddp.scaling-rule/not-finite": "{call} returns a loss that is not a finite number: the training diverged.",
    "ddp.scaling-rule/batch-ignored": "train(64, 0.1) gives the very losses of train(32, 0.1): pass batch to the "
                                      "DataLoader (batch_size=batch).",
    "ddp.scaling-rule/lr-ignored": "train(64, 0.2) gives the very losses of train(64, 0.1): pass lr to the optimizer.",
    "ddp.scaling-rule/losses": "{call} gives the losses {got}, but the lesson's make_model() trained that way on "
                               "make_data() gives about {want}: measure the loss on all 256 examples after each "
                               "epoch, with SGD, shuffled batches and a fresh model for every call.",
    "ddp.scaling-rule/closer-not-a-rate": "closer should be 0.1 or 0.2, one of the learning rates tried with batch "
                                          "64, but it is {got}.",
    "ddp.scaling-rule/closer": "your own losses say otherwise: compare each batch-64 curve with batch 32's, epoch "
                               "by epoch.",
    "ddp.scaling-rule/choice": '{what} should be "a", "b" or "c", but it is {got}.',
    "ddp.scaling-rule/why-b": "(b) is not it: the loss is a mean, so the mean gradient of 64 examples is about as "
                              "large as that of 32, only less noisy. Count the steps of an epoch instead.",
    "ddp.scaling-rule/why-c": "(c) is not it: the average of two processes' mean gradients is the mean gradient of "
                              "all 64 examples, about as large as either; and train() ran in one process. Count "
                              "the steps of an epoch instead.",
    "ddp.scaling-rule/epochs-ignored": "train(32, 0.1, 2) returns {got} losses, not 2: train for the epochs it "
                                       "is given, one loss after each.",
    "ddp.scaling-rule/hint": "A DataLoader(make_data(), batch_size=batch, shuffle=True), SGD with lr, the usual "
                             "loop; after each epoch the loss of the model on all inputs, under torch.no_grad(). "
                             "Then compare how many steps an epoch takes at batch 32 and at 64.",
    "ddp.scaling-rule/right": "At batch 64, learning rate 0.2 stays within {gap_double:.4f} of batch 32's losses, "
                              "0.1 falls {gap_same:.2f} behind: the linear scaling rule. Scale the learning "
                              "rate with the global batch (with a warm-up for large ones).",
    "ddp.uneven-data/not-two": "{call} returns {got}: it should return two lists, rank 0's indices and rank 1's.",
    "ddp.uneven-data/n-items": "{n} items",
    "ddp.uneven-data/not-indices": "items that are not lists of indices",
    "ddp.uneven-data/drop-last-ignored": "{call} returns what the sampler gives with the other drop_last: pass "
                                         "drop_last to the DistributedSampler.",
    "ddp.uneven-data/no-shuffle": "{call} returns the indices in order, without the shuffle: give the sampler "
                                  "shuffle=True and seed=0, as in section 3.",
    "ddp.uneven-data/swapped": "{call} returns rank 1's indices first: the first list should be rank 0's.",
    "ddp.uneven-data/other": "{call} returns shares of {sizes} indices that are not what a DistributedSampler for "
                             "two ranks gives in epoch 0 (num_replicas=2, rank=0 and 1, shuffle=True, seed=0, "
                             "set_epoch(0)).",
    "ddp.uneven-data/choice": '{what} should be "a", "b" or "c", but it is {got}.',
    "ddp.uneven-data/why-b": "(b) is not it: the sampler never sees the other ranks' shares, and it evens them out "
                             "itself. Think of what every step's backward() does under DDP.",
    "ddp.uneven-data/why-c": "(c) is not it: a smaller last batch happens in one process too (a DataLoader's last "
                             "batch), and training goes on. Think of what every step's backward() does under DDP.",
    "ddp.uneven-data/hint": "Make one DistributedSampler(examples, num_replicas=2, rank=rank, shuffle=True, seed=0, "
                            "drop_last=drop_last) per rank, call set_epoch(0), and list(sampler) gives its indices.",
    "ddp.uneven-data/right": "Without drop_last each rank reads {padded} indices, and example {twice} twice; with "
                             "drop_last=True each reads {dropped}, and example {never} is not read in epoch 0 "
                             "(another one in another epoch). Either way both ranks take the same number of steps.",
    # --- ddp-practice.*: lesson 14 DDP in practice (exercises/ddp_practice.py)
    "ddp-practice.hang/no-error": "error is None: launch raised nothing. Call launch(hang, 2, timeout=60) inside "
                                  "try: ... except RuntimeError as err:, and keep err as error.",
    "ddp-practice.hang/not-an-exception": "error should be the exception launch raised (except RuntimeError as err: "
                                          "error = err), but it is {got}.",
    "ddp-practice.hang/launch-timeout": "launch raised TimeoutError: its own timeout of 60 s stopped the processes, "
                                        "so the process group's timeout never ended the wait. Give "
                                        "init_process_group timeout=timedelta(seconds=5).",
    "ddp-practice.hang/other-error": "launch raised {kind}, not the RuntimeError of a script that failed: read its "
                                     "message, fix the call, and run it again.",
    "ddp-practice.hang/too-soon": "seconds is {seconds:.1f}, but the launch takes longer than the group's timeout of "
                                 "5 s, which rank 0 waits out before it fails: time the whole launch call with the "
                                 "clock (time.perf_counter() before and after), or read the error if the script "
                                 "failed sooner.",
    "ddp-practice.hang/not-seconds": "seconds is {seconds:.1f}: more than an hour for a launch that a timeout ends "
                                     "within a minute. time.perf_counter() differences are in seconds; were these "
                                     "milliseconds or nanoseconds?",
    "ddp-practice.hang/too-late": "seconds is {seconds:.1f}, longer than rank 1's minute of sleep: the group's 5 s "
                                  "timeout did not end the wait. Is the script's timeout 5 seconds?",
    "ddp-practice.hang/pids": "pids should be a list of the two process ids the ranks printed, but it is {got}.",
    "ddp-practice.hang/pids-not-printed": "{pids} is not a process id of this launch: take the ids from the lines "
                                          "'rank N pid P' in the error's text.",
    "ddp-practice.hang/still-running": "process {pids} still exists after the launch: a training process outlived "
                                       "it. Did the cell start processes some other way?",
    "ddp-practice.hang/hint": "Read time.perf_counter() before the try and after it; keep the exception as error "
                              "(except RuntimeError as err: error = err); the ids are in its text, "
                              're.findall(r"rank \\d pid (\\d+)", str(error)).',
    "ddp-practice.hang/no-timeout-line": "(no line with 'timed out': read the error's text)",
    "ddp-practice.hang/right": "launch raised RuntimeError after {seconds:.1f} s: the group's 5 s timeout plus "
                               "the start of two Pythons, not rank 1's minute. Rank 0 said: {said}. Both "
                               "processes ({pids}) are gone.",
    "ddp-practice.load-anywhere/plain": "a plain state dict",
    "ddp-practice.load-anywhere/prefixed": "the same names with module. in front",
    "ddp-practice.load-anywhere/wrapped": "the state_dict() of a model held as `module`, as DDP holds it",
    "ddp-practice.load-anywhere/refused": "loading {case} fails (missing or unexpected names): strip the module. "
                                          "prefix where it is present, and only there.",
    "ddp-practice.load-anywhere/renamed": "load_anywhere changed the names of the caller's dictionary, for {case}: "
                                          "rename the entries of a copy (consume_prefix_in_state_dict_if_present "
                                          "works in place).",
    "ddp-practice.load-anywhere/metadata": "load_anywhere changed the _metadata of the caller's dictionary, for "
                                           "{case}: give the copy a _metadata of its own, or leave it out.",
    "ddp-practice.load-anywhere/values-changed": "load_anywhere changed the tensors of the caller's dictionary, for "
                                                 "{case}: only read them.",
    "ddp-practice.load-anywhere/not-loaded": "after load_anywhere(model, {case}) the model does not hold the "
                                             "checkpoint's {names}: load with strict=True (the default), so that "
                                             "a name that does not fit is an error, not skipped.",
    "ddp-practice.load-anywhere/hint": "Copy the dictionary first (copy.copy(state) keeps its _metadata; give that "
                                       "a copy too), strip the prefix on the copy with "
                                       'consume_prefix_in_state_dict_if_present(copy, "module."), then '
                                       "model.load_state_dict(copy).",
    "ddp-practice.load-anywhere/right": "All three load the same weights, and the caller's dictionaries keep their "
                                        "names and _metadata.",
    # --- builds.*: lesson 15 which PyTorch build (exercises/builds.py)
    "builds.which-build/right": "cu126 is the one build of 2.13 with code for a V100, and a Blackwell GPU "
                                "needs both a CUDA 13 build and a driver that knows it.",
    "builds.which-build/missing": "build lacks an answer for: {names}.",
    "builds.which-build/not-a-tag": '{what} is {got}: write a build tag such as "cu126", or None.',
    "builds.which-build/not-published": "{case}: {got} is not a build of PyTorch 2.13, which publishes cu126, "
                                        "cu130 and cu132.",
    "builds.which-build/driver": "{case}: {got} is a CUDA {major} build, which needs a driver that serves CUDA "
                                 "{major}.0 or newer; this driver does not.",
    "builds.which-build/gpu-driver": "{case}: whatever the build, this driver cannot run a Blackwell GPU such "
                                     "as the {gpu}: section 3 says which driver it needs.",
    "builds.which-build/gpu": "{case}: {got} carries no code for the {gpu} (compute capability {cc}): section "
                              "4's table says which builds do.",
    "builds.which-build/none-fits": "{case}: one of 2.13's builds fits both this driver and this GPU.",
    "builds.which-build/command-not-pip": "command should be the pip command that installs torch, such as "
                                          "pip install torch==... --index-url ...",
    "builds.which-build/command-unpinned": "command installs {got} without pinning the release: write "
                                           "torch==2.13.0, or pip may quietly install another release that "
                                           "index has.",
    "builds.which-build/command-other-release": "command pins {got}, another release than the 2.13.0 the "
                                                "exercise asks for: torch==2.13.0.",
    "builds.which-build/command-no-index": "command names no --index-url, so pip installs PyPI's build: on "
                                           "Linux a CUDA 13 build, which this driver cannot run.",
    "builds.which-build/command-index": "command installs from {got}: the {want} build comes from "
                                        "https://download.pytorch.org/whl/{want}.",
    "builds.which-build/command-other-build": "command pins {got}, the {build} build, but the build for this case "
                                             "is {want}: write torch==2.13.0 (or torch==2.13.0+{want}).",
    "builds.which-build/hint": "For each case check the two joints of section 2: does the driver serve the "
                               "build's CUDA major version (a CUDA 13 build needs driver 580 or later), and "
                               "does the build carry code for the GPU (section 4's table)? A new GPU also "
                               "needs a driver that knows it.",
    "builds.arch-list/right": "Only the RTX 5090 is left out: Blackwell code starts with the cu128 builds.",
    "builds.arch-list/missing": "fits lacks an answer for: {names}.",
    "builds.arch-list/wrong": "wrong for: {names}. Machine code sm_XY runs on compute capability X.Y up to X.9 "
                              "of the same generation, never on another generation.",
    "builds.arch-list/not-a-tag": '{what} is {got}: write a build tag such as "cu126".',
    "builds.arch-list/not-a-build": "oldest_build is {got}, which PyTorch publishes for no release of section "
                                    "5's table.",
    "builds.arch-list/build-older": "{got} has no code for the RTX 5090: which builds carry Blackwell code? "
                                    "(section 4's table)",
    "builds.arch-list/build-newer": "{got} has code for the RTX 5090, but an older build already has: name the "
                                    "oldest.",
    "builds.arch-list/hint": "sm_XY runs on compute capability X.Y to X.9: look for an entry of the GPU's own "
                             "generation (the first number) whose minor number is at most the GPU's. "
                             "_has_kernels_for((8, 9), arch_list) answers for one GPU.",
    "builds.found-version/right": "The driver serves CUDA 12.4, pip installed PyPI's CUDA 13 build, and only a "
                                  "new driver (580 or later) makes the RTX 5090 work.",
    "builds.found-version/driver": 'driver_serves is "{got}": in the message the driver\'s CUDA version is '
                                   "written 1000 × major + 10 × minor.",
    "builds.found-version/runs": "pip_installed is {got}: a driver that serves CUDA 12.4 runs every CUDA 12 "
                                 "build and older, so the build that says it is too old is newer.",
    "builds.found-version/installed": "pip_installed is {got}: which CUDA major version does PyPI's Linux wheel "
                                      "of recent releases carry? (section 6)",
    "builds.found-version/choice": 'fix should be one of "a", "b" or "c", but it is {got}.',
    "builds.found-version/fix-b": "cu126 runs on a driver that serves CUDA 12.4 (minor-version compatibility), "
                                  "and cu118 has no code for Blackwell either: look at the GPU, not only the "
                                  "driver.",
    "builds.found-version/fix-c": "no build helps while this driver stays: a Blackwell GPU needs driver 570 or "
                                  "later, and this one serves CUDA 12.4.",
    "builds.found-version/hint": "The driver's CUDA version is written 1000 × major + 10 × minor. The message "
                                 "appears only when the build's CUDA major version is newer than the driver's. "
                                 "Then ask whether a driver of that version can run a Blackwell GPU at all "
                                 "(section 3).",
    "torch-compile.first-and-steady/not-a-pair": "first_and_steady should return a pair (first, steady), but it "
                                                 "returns a {got}.",
    "torch-compile.first-and-steady/once": "first_and_steady called the function {calls} time(s): the steady "
                                           "Timing needs the calls after the first one.",
    "torch-compile.first-and-steady/not-first": "Your first time is {first:.3f} s, but the stand-in's first call "
                                                "alone takes {compile} s, as a compile would: did the call you timed "
                                                "come after an earlier one?",
    "torch-compile.first-and-steady/too-long": "Your first time is {first:.3f} s, far more than the stand-in's "
                                               "first call, {compile} s: time that one call, not several.",
    "torch-compile.first-and-steady/steady-has-first": "Your steady median is {steady:.3f} s, but after its first "
                                                       "call the stand-in takes microseconds: the steady Timing "
                                                       "still contains the {compile} s of the first call.",
    "torch-compile.first-and-steady/right": "first_and_steady times the first call apart from the rest. {measured}",
    "torch-compile.first-and-steady/paid": "On {device}, a function the check compiled: first call {first} "
                                           "(less where an earlier run left its compile in Inductor's disk "
                                           "cache), then {steady} a call against {eager} eager, so the compile "
                                           "is repaid after about {calls} calls.",
    "torch-compile.first-and-steady/unpaid": "On {device}, a function the check compiled: first call {first}, "
                                             "then {steady} a call against {eager} eager: no gain beyond the noise "
                                             "(where torch.compile cannot build kernels here, nothing is fused), "
                                             "so the compile is never repaid.",
    "torch-compile.first-and-steady/hint": "Time one call with time.perf_counter() before and after it, and "
                                           "synchronize(device) before reading the clock; only then call "
                                           "median_and_iqr_seconds, which warms up and times the calls that "
                                           "follow.",
    "torch-compile.one-graph/values": "For x = {x}, normalise gives {want}, but normalise_in_one_graph gives {got}.",
    "torch-compile.one-graph/breaks": "The values are right, but the function still has {count} graph break(s), "
                                      "the first: {first}",
    "torch-compile.one-graph/one": "It compiles to one graph.",
    "torch-compile.one-graph/no-dynamo": "torch.compile does not run with this Python and PyTorch, so its graphs "
                                         "were not looked at.",
    "torch-compile.one-graph/right": "normalise_in_one_graph gives normalise's values. {graphs}",
    "torch-compile.one-graph/hint": "A graph can hold a choice made by a tensor operation, never one made by "
                                    "Python's if: which torch function bounds a tensor from below, or picks "
                                    "between two tensors?",
    "fits.uneven/stepped": "accumulate_any changed the weights: it should only leave the gradient in .grad, and "
                           "leave the step to the optimizer.",
    "fits.uneven/whole": "The model ran on {biggest} examples at once, but the largest micro-batch ({sizes}) has "
                         "fewer: run it on one micro-batch at a time, or the memory is not saved.",
    "fits.uneven/all-at-once": "Your function runs a forward pass of a micro-batch before the backward pass of "
                               "the one before it: every micro-batch's activations are then kept at once, as for "
                               "one big batch. Run each micro-batch's backward pass before the next forward pass.",
    "fits.uneven/scale": "With micro-batches of {sizes} examples, your gradient points the right way but is "
                         "{ratio:.3g} times the gradient of one batch of all the examples.",
    "fits.uneven/no-grad": "After accumulate_any, some weights have no gradient in .grad: call backward() on a "
                           "loss of each micro-batch.",
    "fits.uneven/by-k": "With micro-batches of {sizes} examples, your gradient is the mean of the micro-batches' "
                        "gradients, each counted once: a micro-batch of 1 weighs as much as one of 3. The batch's "
                        "mean counts every example once.",
    "fits.uneven/sum": "With micro-batches of {sizes} examples, your gradient is the sum of the micro-batches' "
                       "gradients, not the gradient of the mean over all the examples.",
    "fits.uneven/last": "With micro-batches of {sizes} examples, your gradient is the last micro-batch's alone: "
                        "is .grad emptied before each backward()?",
    "fits.uneven/values": "With micro-batches of {sizes} examples, your gradient differs from one batch of all "
                          "the examples by up to {difference:.2g}.",
    "fits.uneven/right": "accumulate_any gives the gradient of one batch of all the examples, however they are "
                         "split.",
    "fits.uneven/hint": "A micro-batch's mean loss times its number of examples is the sum of its examples' "
                        "losses; the batch's loss is that sum over all micro-batches, divided by all the examples.",
    "fits.segments/values": "With size={size}, run_in_segments(blocks, x, size) does not return what the blocks "
                            "give one after another: x = block(x) for each block, in order.",
    "fits.segments/reentrant": "The blocks' weights got no gradient: the reentrant variant of checkpoint "
                               "(use_reentrant=True, or what PyTorch uses when use_reentrant is left out) gives none "
                               "to a segment whose input needs none, and x needs none.",
    "fits.segments/no-grad": "The blocks' weights got no gradient: is the forward pass run under torch.no_grad(), "
                             "or the result detached?",
    "fits.segments/grads": "With size={size}, the output is right, but the blocks' gradients differ from those of "
                           "the plain stack. The backward pass runs each segment's forward pass again, later: a "
                           "function that looks up its blocks only when it is called (a lambda in a loop, say) may "
                           "then run another segment's blocks.",
    "fits.segments/hidden": "With size={size}, the check saw nothing kept for the backward pass: does your function "
                            "install saved-tensor hooks of its own? Checkpoint the segments instead.",
    "fits.segments/keeps-all": "With size={size}, run_in_segments keeps {kept} for the backward pass, as much as the "
                               "plain stack ({plain}): nothing is recomputed.",
    "fits.segments/keeps-some": "With size={size}, run_in_segments keeps {kept} for the backward pass, more than the "
                                "inputs of {segments} segment(s) ({inputs}): some block, outside a checkpointed "
                                "segment, still keeps its hidden activation.",
    "fits.segments/too-few": "With size={size}, run_in_segments keeps {kept}, less than the inputs of {segments} "
                             "segment(s) ({inputs}): are the segments longer than size blocks?",
    "fits.segments/right": "Kept for the backward pass: {size1} with size=1, {size2} with size=2, {size3} with "
                           "size=3, {size5} with size=5 (the plain stack: {plain}). The longer the segment, the less "
                           "kept, and the more rebuilt at once in the backward pass.",
    "fits.segments/hint": "A segment is a function of x that runs its blocks in turn, as nn.Sequential(*some_blocks) "
                          "does; checkpoint(segment, x, use_reentrant=False) keeps only x.",
    "fsdp.rows/not-counts": "{call} gives {got}: the rows of each process should be whole numbers, 0 or more.",
    "fsdp.rows/count": "{call} gives {got}: a list of {processes}, one number for each process, by rank (a process "
                       "left without rows holds an empty shard: 0).",
    "fsdp.rows/lost": "{call} gives {got}, which adds up to {total} rows, not {rows}: every row belongs to one shard.",
    "fsdp.rows/even": "{call} gives {got}: your rows spread as evenly as possible, but torch.chunk cuts otherwise. "
                      "What does torch.arange(rows).chunk(processes) give?",
    "fsdp.rows/other": "{call} gives {got}, not how torch.chunk cuts the rows.",
    "fsdp.rows/right": "rows_per_process cuts as FSDP2 does: 5 rows on 4 processes are {example}, not the even "
                       "[2, 1, 1, 1].",
    "fsdp.rows/hint": "Each shard has ceil(rows / processes) rows, taken in order, until the rows run out; the "
                      "processes after that hold none.",
    "fsdp.optimizer-first/choice": '{what} should be "a", "b" or "c", but it is {got}.',
    "fsdp.optimizer-first/happens-a": "What happens: (a) is not it. Nothing in PyTorch compares the tensors an "
                                      "optimizer holds with the model's. Which tensors does optimizer.step() "
                                      "update, and do they get a gradient?",
    "fsdp.optimizer-first/happens-b": "What happens: (b) is not it. fully_shard replaces each weight of the model "
                                      "with a new DTensor parameter. Which tensors did the optimizer receive?",
    "fsdp.optimizer-first/choice-why": '{what} should be "i", "ii" or "iii", but it is {got}.',
    "fsdp.optimizer-first/why-ii": "Reason (ii) is not it: fully_shard never sees the optimizer; it changes only the "
                                   "model.",
    "fsdp.optimizer-first/why-iii": "Reason (iii) is not it: the reduce-scatter runs on the gradients of the model's "
                                    "DTensor weights, whoever holds them.",
    "fsdp.optimizer-first/right": "The optimizer holds the weights fully_shard replaced: they get no gradient, and "
                                  "optimizer.step() skips a tensor whose .grad is None, without a word.",
    "fsdp.optimizer-first/hint": "Compare model.parameters() before and after fully_shard: are they the same tensors?",
}
