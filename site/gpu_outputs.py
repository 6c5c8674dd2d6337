"""Recorded GPU outputs beside the stored CPU outputs: a Sphinx extension of the site.

A lesson's page shows the outputs stored in its notebook, made on the CPU reference machine. Where
a record of a GPU run (tools/gpu_runs.py, the folder `gpu_runs_dir`, gpu-runs/ by default) holds
an output of a code cell that differs from the stored one, the page shows the recorded output
right after the stored one, in a block of its own that names the machine and the date:

    <details class="gpu-output" data-gpu-record="NAME" data-gpu-setting="one GPU" data-cell-id="ID" open>
      <summary class="gpu-output-label">On a GPU: 1 × NVIDIA H200, driver 570.86, torch 2.14.1 (CUDA 12.8),
        Python 3.12.3, 2026-12-01</summary>
      <div class="output stream highlight-none notranslate"><div class="highlight"><pre>what it printed</pre>...
    </details>

(Chinese pages: 在 GPU 上：…), inside the cell's output block (div.cell_output) after the stored
outputs; open, so that the reader sees both, and foldable; site/static/gpu-outputs.css draws it.
What is compared is what a reader sees as text
(tools.gpu_report.render of the stored outputs against the record's text), with one exception: a
picture is only named in a record (``<image/png, N bytes>``), so its size in bytes is not compared.

Which outputs are shown:
- each setting with a GPU visible ("one GPU"; "all GPUs" where the machine had several) of each
  record with ``gpu: true``; a record made without a GPU and the "no GPU" runs are never shown;
- only cells the record holds: a cell it does not hold shows nothing extra (a record leaves out
  the cells that printed nothing, and a missing cell may as well be one it did not run);
- only cells whose code is the code the record ran (its fingerprint, Record.stale): a cell
  changed since shows nothing of that record;
- a Chinese page (notebooks/zh/) shows the record of its English notebook for a cell whose code
  equals the English cell's once comments are removed (tools.i18n.code_without_comments, the
  check of the Chinese edition) and whose stored outputs are the English cell's: printed output
  stays English in the Chinese edition, so what the GPU printed is the same;
- a record marked ``"fixture": true`` (tests/fixtures/gpu-runs/) stops the build, unless
  `gpu_runs_fixtures` is on: only `make test-site`'s second build, into build/site-fixture/, turns
  it on (GPU_RUNS_DIR and GPU_RUNS_FIXTURES, read by site/conf.py), so a fixture is never published.
"""

from __future__ import annotations

import html
import re
import sys
import tokenize
from dataclasses import dataclass
from pathlib import Path

from docutils import nodes

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # tools/ is the series' package; sphinx may be started from elsewhere
    sys.path.insert(0, str(ROOT))

from tools import gpu_runs  # noqa: E402
from tools.gpu_report import render  # noqa: E402

IMAGE = re.compile(r"^<(image/[^,>]+), \d+ bytes>$", re.MULTILINE)


@dataclass(frozen=True)
class Shown:
    """One recorded GPU output to show under a cell."""

    record: gpu_runs.Record
    settings: tuple[str, ...]  # the settings that printed this text (one, or all GPUs and one GPU alike)
    text: str

    def label(self, chinese: bool = False) -> str:
        """'On a GPU: <the record's label>', or 'On 2 GPUs: ...' for all GPUs of a machine with several."""
        seen = sorted(self.record.data["settings"][s]["gpus_seen"] for s in self.settings)
        machine = zh_label(self.record) if chinese else self.record.label()
        if seen == [1]:
            return f"在 GPU 上：{machine}" if chinese else f"On a GPU: {machine}"
        if chinese:  # all GPUs of a machine with several ("2"), or one and all alike ("1 个和 2")
            return f"在 {' 个和 '.join(map(str, seen))} 个 GPU 上：{machine}"
        return f"On {' and on '.join(map(str, seen))} GPUs: {machine}"


def zh_label(record: gpu_runs.Record) -> str:
    """record.label() in Chinese: '1 × NVIDIA H200，驱动 570.86，torch 2.14.1（CUDA 12.8），Python 3.12.3，…'."""
    m = record.machine
    names = sorted(set(m["gpus"]))
    gpus = " + ".join(f"{m['gpus'].count(n)} × {n}" for n in names)
    driver = f"，驱动 {m['driver']}" if m.get("driver") else ""
    cuda = f"（CUDA {m['cuda']}）" if m.get("cuda") else ""
    return f"{gpus}{driver}，torch {m['torch']}{cuda}，Python {m['python']}，{record.date}"


def comparable(text: str) -> str:
    """An output's text as a record stores it (one newline after each line), pictures without their size."""
    text = "".join(line + "\n" for line in gpu_runs.lines(text)) if text else ""
    return IMAGE.sub(r"<\1>", text)


def load_records(folder: Path, allow_fixtures: bool = False) -> list[gpu_runs.Record]:
    """The records of GPU runs in ``folder`` that the site shows: those made with a GPU. A fixture
    record (``"fixture": true``) is refused with RecordError unless ``allow_fixtures``."""
    folder = Path(folder)
    if not folder.is_dir():
        raise gpu_runs.RecordError(f"{folder}: no such folder of GPU run records (gpu_runs_dir, GPU_RUNS_DIR)")
    found = gpu_runs.records(folder)
    for record in found:
        if record.data.get("fixture") and not allow_fixtures:
            raise gpu_runs.RecordError(
                f"{record.path}: a test fixture (\"fixture\": true), which the published site never shows;"
                " only the test build (make test-site: GPU_RUNS_FIXTURES=1) reads fixtures")
    return [r for r in found if r.gpu]


def recorded(records: list[gpu_runs.Record], notebook: str, cell_id: str, stored_outputs: list[dict],
             source: str | None = None) -> list[Shown]:
    """What the records hold for one cell of ``notebook`` (its path from the repository's root, as a
    record names it) where that differs from its stored outputs: oldest record first, then all GPUs
    before one GPU. Settings of one record that printed the same text are one entry. Given the
    cell's ``source``, a record that ran other code in that cell (stale) shows nothing."""
    cpu = comparable(render(stored_outputs))
    shown = []
    for record in records:
        if source is not None and record.stale(notebook, cell_id, source):
            continue
        runs = record.data["notebooks"].get(notebook, {})
        by_text: dict[str, list[str]] = {}
        for setting in record.gpu_settings:
            lines = runs.get(setting, {}).get("cells", {}).get(cell_id)
            if lines is None:  # not recorded: printed nothing, or never ran
                continue
            text = "".join(line + "\n" for line in lines)
            if comparable(text) != cpu:
                by_text.setdefault(text, []).append(setting)
        shown += [Shown(record, tuple(settings), text) for text, settings in by_text.items()]
    return shown


def english_twin(zh_cell: dict, en_cell: dict | None) -> bool:
    """Whether the English cell's record applies to this cell of a Chinese notebook."""
    from tools.i18n import code_without_comments

    if en_cell is None or en_cell.get("cell_type") != "code" or zh_cell.get("outputs") != en_cell.get("outputs"):
        return False
    try:
        return code_without_comments(zh_cell["source"]) == code_without_comments(en_cell["source"])
    except (tokenize.TokenError, SyntaxError):  # a cell Python cannot read: not known to be the same code
        return False


def notebook_outputs(path: Path, records: list[gpu_runs.Record]) -> dict[int, tuple[str, list[Shown]]]:
    """{index of a cell in the notebook at ``path``: (its id, what to show under it)}, for the cells
    with something to show."""
    import nbformat

    from tools.i18n import ZH, english_path

    nb = nbformat.read(path, as_version=4)
    chinese = path.is_relative_to(ZH)
    source = english_path(path) if chinese else path
    english = {c.get("id"): c for c in nbformat.read(source, as_version=4).cells} if chinese else {}
    key = source.relative_to(ROOT).as_posix()
    out = {}
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or not cell.get("id"):
            continue
        if chinese and not english_twin(cell, english.get(cell.id)):
            continue
        code = english[cell.id].source if chinese else cell.source
        if shown := recorded(records, key, cell.id, cell.get("outputs", []), code):
            out[index] = (cell.id, shown)
    return out


# --- the nodes and their HTML ---------------------------------------------------------------

class gpu_output(nodes.General, nodes.Element):
    """One recorded GPU output: <details class="gpu-output" open>, a summary, the text."""


class gpu_output_label(nodes.TextElement):
    """The <summary> of a gpu_output: which machine, which date."""


def output_node(shown: Shown, cell_id: str, chinese: bool) -> gpu_output:
    node = gpu_output(record=shown.record.name, setting=" + ".join(shown.settings), cell_id=cell_id)
    node += gpu_output_label("", shown.label(chinese))
    block = nodes.literal_block(shown.text, shown.text, language="none", classes=["output", "stream"])
    node += block
    return node


def details_tag(record: str, setting: str, cell_id: str) -> str:
    """The opening tag of a gpu_output (open: the reader sees both outputs, and can fold this one)."""
    attributes = {"class": "gpu-output", "data-gpu-record": record, "data-gpu-setting": setting,
                  "data-cell-id": cell_id}
    return "<details " + " ".join(f'{k}="{html.escape(v)}"' for k, v in attributes.items()) + " open>\n"


def visit_gpu_output(self, node):
    self.body.append(details_tag(node["record"], node["setting"], node["cell_id"]))


def depart_gpu_output(self, node):
    self.body.append("</details>\n")


def visit_gpu_output_label(self, node):
    self.body.append('<summary class="gpu-output-label">')


def depart_gpu_output_label(self, node):
    self.body.append("</summary>\n")


# --- Sphinx ---------------------------------------------------------------------------------

def read_records(app):
    folder = Path(app.config.gpu_runs_dir)
    folder = folder if folder.is_absolute() else ROOT / folder
    try:
        app.gpu_records = load_records(folder, app.config.gpu_runs_fixtures)
    except gpu_runs.RecordError as err:
        from sphinx.errors import ConfigError

        raise ConfigError(str(err)) from None
    app.gpu_record_files = sorted(folder.glob("*.json"))


def add_gpu_outputs(app, doctree):
    """After a notebook is read: a gpu_output after the stored outputs of each cell a record differs on."""
    docname = app.env.docname
    path = Path(app.env.doc2path(docname)).resolve()
    if path.suffix != ".ipynb" or app.builder.format != "html":
        return
    for record in app.gpu_record_files:  # a changed record rebuilds the page
        app.env.note_dependency(str(record))
    by_index = notebook_outputs(path, app.gpu_records) if app.gpu_records else {}
    if not by_index:
        return
    chinese = docname.startswith("notebooks/zh/")
    for cell in list(doctree.findall(nodes.container)):
        if cell.get("nb_element") != "cell_code" or cell.get("cell_index") not in by_index:
            continue
        output = next((c for c in cell.children if c.get("nb_element") == "cell_code_output"), None)
        if output is None:  # the CPU printed nothing; a GPU did
            output = nodes.container(nb_element="cell_code_output", classes=["cell_output"])
            cell += output
        cell_id, shown_here = by_index[cell["cell_index"]]
        for shown in shown_here:
            output += output_node(shown, cell_id, chinese)


def setup(app):
    app.add_config_value("gpu_runs_dir", "gpu-runs", "env", types=[str])
    app.add_config_value("gpu_runs_fixtures", False, "env", types=[bool])
    app.add_node(gpu_output, html=(visit_gpu_output, depart_gpu_output))
    app.add_node(gpu_output_label, html=(visit_gpu_output_label, depart_gpu_output_label))
    app.add_css_file("gpu-outputs.css")
    app.connect("builder-inited", read_records)
    app.connect("doctree-read", add_gpu_outputs)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
