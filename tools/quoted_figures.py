"""Figures in stored outputs and in the prose beside them (tests/test_stored_timings.py).

Every timing a lesson prints has one form, `utils.Timing`'s: ``2.82 ms (IQR 0.0423 ms)``. A
timing whose IQR is more than a third of its median is noise: it prints marked as such
(``(IQR 3.90 ms, noisy)``; in Chinese ``(IQR 3.90 ms)，噪声大``), a stored output holds no unmarked one,
and no sentence quotes one (a comparison the cell prints goes through `Timing.against`, which says when a difference is
inside the noise). And a measured figure that the prose quotes (a time, a speed-up,
a rate: ``10.3 ms``, ``1.91×``, ``12.5 GB/s``) must be printed, as quoted, by a code cell of the
same section before that sentence: else the prose was written around another run. Approximate
wording ("about four times faster", "roughly 10 ms") and figures labelled as reasoning or as a
data sheet's are not checked. The parsing is here, apart from the test, so that GPU records
can be checked the same way.

GPU figures and their sources (tests/test_gpu_figures.py): every sentence that states
a GPU figure cites a GPU record of gpu-runs/ whose cell printed it, or says it is reasoning and
names its source; the section "GPU figures" below says what counts and how to cite.

Comparative claims (tests/test_stored_timings.py): a sentence beside a cell that
prints timings and compares them in words ("close", "faster", 接近, 更慢) agrees with the printed
medians and IQRs by the lesson's own rule; the section "Comparative claims" at the end says what is
read and how.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import nbformat

from tools import gpu_report, gpu_runs, series

NUMBER = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"  # 3,350 is one number
TIME_UNITS = ("s", "ms", "µs", "ns")
SECONDS = {"s": 1.0, "ms": 1e-3, "µs": 1e-6, "ns": 1e-9}
# The Chinese edition marks a noisy timing after the parenthesis: ``8.55 ms (IQR 3.90 ms)，噪声大``.
TIMING = re.compile(rf"({NUMBER}) (s|ms|µs|ns) \(IQR ({NUMBER}) \2(, noisy\)|\)，噪声大|\))")
# A measured figure: a time, a rate, or a ratio written onto its number (1.91×; but 64 × 64 is a
# shape and 1000 × major a formula).
FIGURE = re.compile(rf"(?<![\w.])({NUMBER})(?:\s?(ms|µs|ns|s|GB/s|GiB/s|MB/s|MiB/s|GFLOP/s|TFLOP/s)|([×x]))"
                    r"(?![\w/])(?!\s*\d)")
CODE_OR_LINK = re.compile(r"```.*?```|`[^`\n]*`|\]\([^)]*\)|<[^>]+>", re.DOTALL)
SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|(?<=[。！？])|\n+")
# Sentences that state no measurement of this page: approximate, reasoned, or from a data sheet.
NOT_MEASURED = re.compile(r"(?i)\b(about|around|roughly|approximately|nearly|almost|over|under|up to|at least|"
                          r"at most|more than|less than|reason\w*|data ?sheets?|spec\w*|peaks?|e\.g\.|"
                          r"for example|such as|say)\b"
                          r"|约|大约|左右|上下|推算|推理")
HEADING = re.compile(r"^#{2,3} ", re.MULTILINE)
# A sentence's note mark (tools/series.py, SOURCE_MARK) as the parsers here read it: a token that says
# "reasoned, see note n", moved before the sentence's closing punctuation so that it stays with the
# sentence it marks ("... gives `1`.¹ Next" and "……是 `1`¹。" alike).
NOTE = re.compile(r"⟨note (\d+)⟩")


def with_notes(markdown: str) -> str:
    """``markdown`` with each note mark written as a NOTE token inside the sentence it marks."""
    text = series.SOURCE_MARK.sub(lambda m: f"⟨note {m.group(1)}⟩", markdown)
    return re.sub(r"([.!?。！？])((?:⟨note \d+⟩)+)", r"\2\1", text)


@dataclass(frozen=True)
class Timing:
    median: float
    iqr: float
    unit: str
    text: str
    marked: bool = False  # printed as noisy, as utils.Timing marks it
    median_text: str = ""  # the median as printed (3,350 or 2.82)

    @property
    def noisy(self) -> bool:
        return self.iqr > self.median / 3

    @property
    def seconds(self) -> float:
        return self.median * SECONDS[self.unit]

    @property
    def iqr_seconds(self) -> float:
        return self.iqr * SECONDS[self.unit]


def timings(text: str) -> list[Timing]:
    return [Timing(float(m.group(1).replace(",", "")), float(m.group(3).replace(",", "")), m.group(2), m.group(0),
                   m.group(4) != ")", m.group(1)) for m in TIMING.finditer(text)]


def unit(u: str) -> str:
    return "×" if u in ("x", "×") else u


def figures(text: str) -> set[tuple[str, str]]:
    """(number, unit) of every figure in printed text, the unit normalised (x and × alike)."""
    return {(m.group(1), unit(m.group(2) or m.group(3))) for m in FIGURE.finditer(text)}


def quoted(markdown: str) -> list[tuple[str, str, str]]:
    """(number, unit, sentence) of every measured figure the prose states exactly."""
    out = []
    for sentence in SENTENCE_END.split(CODE_OR_LINK.sub(" ", with_notes(markdown))):
        if NOT_MEASURED.search(sentence) or NOTE.search(sentence):
            continue
        out += [(m.group(1), unit(m.group(2) or m.group(3)), sentence.strip()) for m in FIGURE.finditer(sentence)]
    return out


def output_text(cell: nbformat.NotebookNode) -> str:
    """A cell's outputs as a reader sees them, as text (the GPU report renders its records the same way)."""
    return gpu_report.render(cell.get("outputs", []))


def noisy_timings(nb: nbformat.NotebookNode) -> list[tuple[str, Timing]]:
    """Timings too noisy to compare that do not say so (utils.Timing marks them `noisy`)."""
    return [(cell.get("id"), t) for cell in nb.cells if cell.cell_type == "code"
            for t in timings(output_text(cell)) if t.noisy and not t.marked]


def noisy_medians(nb: nbformat.NotebookNode) -> set[tuple[str, str]]:
    """(number, unit) of every noisy timing's median, as printed: no sentence may quote one."""
    return {(t.median_text, t.unit) for cell in nb.cells if cell.cell_type == "code"
            for t in timings(output_text(cell)) if t.noisy}


def unbacked_figures(nb: nbformat.NotebookNode) -> list[tuple[str, str, str]]:
    """(cell id, figure, sentence) for each figure the prose quotes that no code cell of its section
    printed before it."""
    out, printed, noise = [], set(), noisy_medians(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            printed |= figures(output_text(cell))
        elif cell.cell_type == "markdown" and cell.get("id") not in ("header", "footer", series.SOURCES_ID):
            if HEADING.search(cell.source):
                printed = set()  # a new section: its figures come from its own cells
            out += [(cell.get("id"), f"{n} {u}", s) for n, u, s in quoted(cell.source)
                    if (n, u) not in printed or (n, u) in noise]
    return out


# --- GPU figures and their sources (tests/test_gpu_figures.py) ------------------------------------
#
# A GPU figure is a number with a unit (MiB, GB/s, ms, ×, % ...) in a sentence that names a GPU
# ("on a CUDA GPU", "an H100", "on a Mac", "nvidia-smi", "在 GPU 上", "两块 GPU") or says it
# describes a run elsewhere ("not a run of this page"), or a unit only GPUs have (TFLOP/s, TB/s,
# W) beside a GPU word. Approximate wording is no exception: "about 30 µs on a T4" is a GPU figure.
# A sentence with one cites its source, in one of two ways:
#
# - recorded: a link whose text names the cell and whose target is a record of gpu-runs/ in this
#   repository, ``([H200 run, cell memory-11](https://github.com/<REPO>/blob/main/gpu-runs/<record>.json))``
#   (REPO and the branch from tools/series.py, the record's form from tools/gpu_runs.py). The record
#   must have been made with a GPU, and every figure of the sentence must be printed, as written,
#   in that cell's output under a setting with a GPU visible;
# - reasoning: the sentence says so ("reasoned from ...", "not a recorded run", "not measured
#   here"; 推算, 推理得出, 并非实际运行的记录, 并非实测) and names what it rests on: a PyTorch file
#   (``c10/cuda/CUDACachingAllocator.cpp``), PyTorch's documentation, or a data sheet or
#   specification.
#
# The sentence is the unit, in both editions, with one exception: a sentence that only labels the one
# before it ("This is reasoned from ...", "这是根据……推算的") covers that sentence, as Chinese writing
# puts the source in a sentence of its own. A fenced
# block belongs to the sentence that introduces it (an output shown as text). A GPU named only in a
# parenthesised aside makes only that aside's figures GPU figures. A size the notebook's own code
# writes (``256 * MiB``, ``64 * 2**20``) is what a cell asks for, not what a GPU printed.

GPU_NUMBER = rf"(?<![\w.,/-])({NUMBER})"
GPU_UNITS = (r"\s?(?:TFLOP/s|GFLOP/s|TB/s|GB/s|GiB/s|MB/s|MiB/s|TiB|GiB|MiB|KiB|TB|GB|MB|KB|kB|GHz|MHz|ms|µs|us|ns|s|W"
             r"|%|倍)|×|x")  # a ratio's × is written onto its number: 64 × 64 is a shape
GPU_FIGURE = re.compile(rf"{GPU_NUMBER}({GPU_UNITS})(?![\w/])(?!\s*[×x]?\s*\d)")
# Units only a GPU's specification or a GPU measurement uses, beside a GPU word.
GPU_ONLY_UNITS = {"TFLOP/s", "TB/s", "W"}
GPU_MODEL = (r"(?<![\w-])(?:[KPTV]\d{2,3}|[PT]4|A\d{2,4}G?|H\d{3}|B\d{3}|GB\d{3}|L4|L40S?|MI\d{3}X?"
             r"|(?:RTX|GTX|Quadro|Titan|Tesla|Radeon)(?:\s[A-Z]?\d{3,4}\w*)?|M[1-5](?:\s(?:Pro|Max|Ultra))?)(?![\w-])")
NAMES_A_GPU = re.compile(
    GPU_MODEL
    + r"|(?i:\b(?:a|an|the|one|two|each|every|your|this|that|such a|any|its) (?:[\w-]+ ){0,2}"
      r"(?:GPUs?|GPU's|graphics cards?)(?![\w-]))"
    + r"|(?i:\bMacs?\b|\bMac's\b|\bApple silicon\b|\bMetal\b|\bnvidia-smi\b|\bCUDA out of memory\b)"
    + r"|GPU\s*上|Mac\s*上|Apple 芯片|显卡|[一两几每多这那各]块\s*(?:[\w-]+\s*)?GPU"
)
GPU_WORD = re.compile(r"(?i:\bGPUs?\b|\bCUDA\b|\bcuBLAS\b|\bcuDNN\b|\bHBM\d?e?\b|\bNVLink\b|\bNVIDIA\b|tensor cores?\b"
                      r"|\bMetal\b|\bMPS\b)|显存|张量核心")
# Words that say a figure comes from a run elsewhere: a sentence that says so speaks of a GPU run.
ELSEWHERE = re.compile(r"(?i:\bnot (?:a |from a )?recorded run\b|\bnot a run of this page\b|\bno GPU run\b)"
                       r"|并非实际运行|不是实际运行|并非本页的运行|不是 GPU 上的运行记录|没有 GPU 上的运行记录")
REASONING = re.compile(r"(?i:\breason(?:ed|ing)\b|\bnot (?:a |from a )?recorded run\b|\bnot a run of this page\b"
                       r"|\bnot (?:yet )?measured\b)"
                       r"|推算|推理(?:出来|得出|而来|所得)|这是推理|是推理|并非实际运行|不是实际运行"
                       r"|(?:并非|不是|没有|并未|尚未)[^。，；]{0,8}实测")
# What a reasoned figure may rest on: a PyTorch file (the series' own utils.py is not a source),
# PyTorch's documentation, or a data sheet or specification.
SOURCE_FILE = re.compile(r"(?<![\w/.-])(?!utils\.py\b)[\w/-]*[A-Za-z_]\w*\.(?:cpp|cc|cu|cuh|h|hpp|mm|py|rst)\b")
SOURCE_DOCS = re.compile(r"https://(?:docs\.)?pytorch\.org/docs/[^)\s]*")
DATA_SHEET = re.compile(r"(?i:\bdata ?sheets?\b|\bspecifications?\b)|数据手册|规格书|规范")
RECORD_LINK = re.compile(r"\[([^\]\n]*)\]\(\s*(https?://[^)\s]*?/gpu-runs/([\w.-]+)\.json|[^)\s]*gpu-runs/[^)\s]*)\s*\)")
CITED_CELL = re.compile(r"(?:\bcell|单元格)\s*`?([A-Za-z0-9][\w-]*)`?")
CODE_SIZE = re.compile(rf"(?<![\w.])({NUMBER})\s*\*\s*(KiB|MiB|GiB|2\*\*10|2\*\*20|2\*\*30)\b")
CODE_UNIT = {"2**10": "KiB", "2**20": "MiB", "2**30": "GiB"}
FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n]*\n.*?^[ \t]*\1[ \t]*$", re.DOTALL | re.MULTILINE)
INLINE_CODE = re.compile(r"`[^`\n]+`")
LINK = re.compile(r"!?\[[^\]\n]*\]\([^)\n]*\)")
EMPHASIS = re.compile(r"(?<![*\w])\*(?!\s)[^*\n]+(?<!\s)\*(?![*\w])")
HTML = re.compile(r"<!--.*?-->|</?[A-Za-z][^>]*>", re.DOTALL)
PARAGRAPH = re.compile(r"\n\s*\n")


@dataclass(frozen=True)
class GpuSentence:
    """A sentence of a markdown cell that states a GPU figure, and what it cites."""
    cell: str
    text: str  # as written, code and links included (with the fenced block it introduces)
    figures: tuple[str, ...]  # "256.0 MiB", "1.91×": as written
    records: tuple[tuple[str, str, str | None], ...]  # (link target, record name or "", cited cell id or None)
    reasoned: bool  # says it is reasoning
    source: str | None  # what it names as the source of its reasoning


@dataclass(frozen=True)
class _Sentence:
    written: str  # as written
    prose: str  # what a reader reads as prose: a link's text, no code, no link target
    shown: str  # prose plus code spans and fenced blocks: where figures are looked for
    main: tuple[str, str]  # (prose, shown) outside parentheses
    asides: tuple[tuple[str, str], ...]  # (prose, shown) of each outermost parenthesised aside


def _sentences(markdown: str) -> list[_Sentence]:
    """The sentences of a markdown cell. Periods inside code, links and emphasis end no sentence;
    a fenced block belongs to the sentence before it (the one that introduces it)."""
    kept: list[str] = []

    def keep(m: re.Match) -> str:
        kept.append(m.group(0))
        return f"\x00{len(kept) - 1}\x00"

    def restore(text: str, mode: str) -> str:
        def back(m: re.Match) -> str:
            part = kept[int(m.group(1))]
            if mode == "written" or EMPHASIS.fullmatch(part):
                return restore(part, mode)
            if FENCE.fullmatch(part) or INLINE_CODE.fullmatch(part):
                return part if mode == "shown" else " "
            return restore(part[part.index("[") + 1:part.rindex("](")], mode)  # a link: its text
        return re.sub(r"\x00(\d+)\x00", back, text)

    def both(piece: str) -> tuple[str, str]:
        return restore(piece, "prose"), restore(piece, "shown")

    text = HTML.sub(" ", with_notes(markdown))
    for pattern in (FENCE, INLINE_CODE, LINK, EMPHASIS):
        text = pattern.sub(keep, text)
    out: list[_Sentence] = []
    for paragraph in PARAGRAPH.split(text):
        for piece in SENTENCE_END.split(paragraph):
            if not piece.strip():
                continue
            only = re.fullmatch(r"\s*\x00(\d+)\x00\s*", piece)
            if only and FENCE.fullmatch(kept[int(only.group(1))]) and out:
                last = out.pop()  # an output shown as text: part of the sentence that introduces it
                block = kept[int(only.group(1))]
                out.append(_Sentence(last.written + "\n" + block, last.prose, last.shown + "\n" + block,
                                     (last.main[0], last.main[1] + "\n" + block), last.asides))
                continue
            main, asides = _asides(piece)  # code, links and emphasis are still placeholders here
            out.append(_Sentence(restore(piece, "written").strip(), *both(piece), both(main),
                                 tuple(both(a) for a in asides)))
    return out


def code_sizes(nb: nbformat.NotebookNode) -> set[tuple[str, str]]:
    """(number, unit) of every size the notebook's code writes as ``N * MiB``: what a cell asks for."""
    return {(m.group(1), CODE_UNIT.get(m.group(2), m.group(2))) for cell in nb.cells if cell.cell_type == "code"
            for m in CODE_SIZE.finditer(cell.source)}


def _figure(number: str, unit: str) -> str:
    unit = unit.strip()
    return f"{number}{unit}" if unit in ("%", "×", "x", "倍") else f"{number} {unit}"


def _asides(text: str) -> tuple[str, list[str]]:
    """``text`` without its parenthesised asides, and the asides (outermost ones)."""
    main, asides, depth, start = [], [], 0, 0
    for k, ch in enumerate(text):
        if ch in "(（":
            if depth == 0:
                start = k
            depth += 1
        elif ch in ")）" and depth:
            depth -= 1
            if depth == 0:
                asides.append(text[start:k + 1])
                continue
        if depth == 0:
            main.append(ch)
    return "".join(main), asides


def gpu_sentences(markdown: str, cell_id: str = "", asked: set[tuple[str, str]] = frozenset(),
                  notes: dict[int, str] | None = None) -> list[GpuSentence]:
    """Every sentence of ``markdown`` that states a GPU figure: the rule above. A GPU named only
    in a parenthesised aside makes only that aside's figures GPU figures ("2 MiB, in any
    device's memory (on a GPU the printout names cuda:0)"). A sentence with a note mark is
    reasoning, and its source is what the lesson's note of that number names (``notes``:
    tools/series.py, source_notes)."""
    found = []
    sentences = _sentences(markdown)
    for k, s in enumerate(sentences):
        if NAMES_A_GPU.search(s.main[0]) or ELSEWHERE.search(s.prose):
            where = s.shown
        else:
            where = " ".join(shown for prose, shown in s.asides if NAMES_A_GPU.search(prose))
            if GPU_WORD.search(s.prose):  # a unit only GPUs have, beside a GPU word
                where += " " + " ".join(m.group(0) for m in GPU_FIGURE.finditer(s.shown)
                                        if m.group(2).strip() in GPU_ONLY_UNITS)
        figures = [(m.group(1), m.group(2).strip()) for m in GPU_FIGURE.finditer(where)]
        figures = [(n, u) for n, u in dict.fromkeys(figures) if (n, u) not in asked]
        if not figures:
            continue
        records = []
        for m in RECORD_LINK.finditer(s.written):
            cited = CITED_CELL.search(m.group(1))
            records.append((m.group(2), m.group(3) or "", cited.group(1) if cited else None))
        source, reasoned = _source(s), bool(REASONING.search(s.prose))
        marked = [int(n) for n in NOTE.findall(s.written)]
        if marked and not (reasoned and source):
            found_in = [note_source(notes[n]) if (notes or {}).get(n) else None for n in marked]
            source, reasoned = next((f for f in found_in if f), None), True
        label = sentences[k + 1] if k + 1 < len(sentences) else None
        if not (reasoned and source) and label is not None and LABEL_START.match(label.prose) and \
                REASONING.search(label.prose) and _source(label):
            source, reasoned = _source(label), True
        found.append(GpuSentence(cell_id, s.written, tuple(_figure(n, u) for n, u in figures), tuple(records),
                                 reasoned, source))
    return found


# A sentence that only labels the one before it: it opens by pointing back at it.
LABEL_START = re.compile(r"\s*(?:这是|这些是|这些数字是|这个数字是|以上是|以上数字|(?i:this is|these are|both are)\b)")


def _source(s: _Sentence) -> str | None:
    found = SOURCE_FILE.search(s.written) or SOURCE_DOCS.search(s.written) or DATA_SHEET.search(s.prose)
    return found.group(0) if found else None


def note_source(note: str) -> str | None:
    """What a lesson's note names as a source: a PyTorch file, PyTorch's documentation or a data sheet."""
    found = SOURCE_FILE.search(note) or SOURCE_DOCS.search(note) or DATA_SHEET.search(note)
    return found.group(0) if found else None


def notebook_gpu_sentences(nb: nbformat.NotebookNode) -> list[GpuSentence]:
    """The GPU-figure sentences of every markdown cell of a notebook (the header and footer aside)."""
    asked, notes = code_sizes(nb), series.source_notes(nb)
    return [s for cell in nb.cells
            if cell.cell_type == "markdown" and cell.get("id") not in ("header", "footer", series.SOURCES_ID)
            for s in gpu_sentences(cell.source, cell.get("id", ""), asked, notes)]


def printed(figure: str, output: str) -> bool:
    """Whether ``output`` prints ``figure`` ("256.0 MiB", "1.91×") as written, spacing aside."""
    m = re.fullmatch(rf"({NUMBER})\s?(.+)", figure)
    number, unit = m.group(1), m.group(2)
    units = "[×x]" if unit in ("×", "x") else re.escape(unit)
    return re.search(rf"(?<![\w.]){re.escape(number)}\s*{units}(?![\w/])", output) is not None


RECORD_URL = f"{series.GITHUB_URL}/blob/{series.BRANCH}/gpu-runs/"


def citation_problems(sentence: GpuSentence, notebook: str, folder: Path = gpu_runs.RUNS) -> list[str]:
    """What is wrong with how one GPU-figure sentence of ``notebook`` cites its source; [] if nothing.
    A cited record comes from ``folder`` (gpu-runs/, or a test's own folder)."""
    if not sentence.records:
        missing = [what for what, ok in (("say it is reasoning", sentence.reasoned),
                                         ("name its source (a PyTorch file, PyTorch's documentation or a data "
                                          "sheet)", sentence.source)) if not ok]
        return [f"cites no record of gpu-runs/, and does not {' or '.join(missing)}"] if missing else []
    problems, outputs = [], []
    for url, name, cell in sentence.records:
        if not url.startswith(RECORD_URL) or not name:
            problems.append(f"cites {url}: a record is cited as {RECORD_URL}<record>.json")
            continue
        if cell is None:
            problems.append(f"the link to {name} names no cell: write its text as \"<GPU> run, cell <cell id>\"")
            continue
        try:
            record = gpu_runs.by_name(name, folder)
        except gpu_runs.RecordError as err:
            problems.append(str(err))
            continue
        if not record.gpu:
            problems.append(f"record {name} was made on a machine without a GPU: it backs no sentence about one")
            continue
        found = [(nb, setting) for nb, setting in record.find_cell(cell) if setting in record.gpu_settings]
        found = [(nb, s) for nb, s in found if Path(nb).name == Path(notebook).name] or found
        if len({nb for nb, _ in found}) > 1:
            problems.append(f"record {name} holds cell {cell} of several notebooks: "
                            + ", ".join(sorted({nb for nb, _ in found})))
        elif not found:
            problems.append(f"record {name} holds no output of cell {cell} with a GPU visible")
        elif any(record.stale(nb, cell, cell_source(gpu_runs.ROOT / nb, cell) or "") for nb in {nb for nb, _ in found}):
            problems.append(f"cell {cell} is not the code record {name} ran (changed or gone): its output there "
                            "is stale (make gpu-report again, or cite reasoning)")
        outputs += [record.output(nb, cell, setting) for nb, setting in found]
    if problems:
        return problems
    unprinted = [f for f in sentence.figures if not any(printed(f, out) for out in outputs)]
    if unprinted and not (sentence.reasoned and sentence.source):
        cells = ", ".join(cell for _, _, cell in sentence.records)
        problems.append(f"{', '.join(unprinted)}: not in the recorded GPU output of cell {cells}")
    return problems


def cell_source(path: Path, cell_id: str) -> str | None:
    """The source of the cell with this id in the notebook at ``path`` today (None: no such cell or file)."""
    if not path.is_file():
        return None
    return next((c.source for c in nbformat.read(path, as_version=4).cells if c.get("id") == cell_id), None)


def uncited_gpu_figures(nb: nbformat.NotebookNode, notebook: str,
                        folder: Path = gpu_runs.RUNS) -> list[tuple[GpuSentence, list[str]]]:
    """Each GPU-figure sentence of a notebook whose citation does not hold, with what is wrong."""
    return [(s, p) for s in notebook_gpu_sentences(nb) if (p := citation_problems(s, notebook, folder))]


# --- Comparative claims (tests/test_stored_timings.py) -------------------------------------------
#
# A sentence beside a cell that prints timings may compare them in words: "the two come out
# close", "no difference", "about the same", "faster", "slower", "1.7× as long"; in the Chinese
# edition 接近, 差不多, 没有差别, 更快, 更慢, 倍. Such a claim must agree with the printed medians
# and IQRs by the lesson's own rule (lesson 05, cell timing-43; `utils.Timing.against`): two medians
# differ only when they are further apart than their two IQRs together.
#
# Beside a cell means in the markdown cell right after it (up to its first heading: a heading opens
# another section) or right before it (after its last heading), code cells that print nothing (the
# checks) aside; a cell beside is one whose output holds at least two timings. The claim is a
# clause (sentences split at , ; : and their Chinese forms): a clause that hedges (may, can, if,
# expect; 可能, 如果, 预期) or negates the word ("no faster", 并不更快) claims nothing, nor does a
# question, a prediction, or a sentence that says it is reasoning. A clause speaks of a GPU, and
# not of the run on record, when it or an earlier clause of its paragraph names a GPU ("On a GPU",
# 在 GPU 上) and no later one says "without a GPU", "on a CPU", "here" (没有 GPU, 在 CPU 上, 这里):
# the stored outputs come from a machine without one, so only the other clauses are checked.
#
# Which timings a sentence compares is not parsed: a claim of no difference fails only where every
# two timings of the cell differ (with two timings: where they do), a claim of a difference only
# where no two differ; its direction (which is the faster) and a figure it quotes are not checked
# here (a quoted figure must be printed: `unbacked_figures`). A sentence between two cells that
# print timings fails only if it contradicts both.

SAME_WORDS = re.compile(r"(?i:\bclose\b|\bno (?:real |measurable |clear )?difference\b|\bagree\b"
                        r"|\b(?:about|much|roughly) the same\b|\b(?:about|just|almost) as (?:fast|long)\b)"
                        r"|接近|差不多|相差无几|没有(?:明显的?|什么)?(?:差别|区别|差异)|无差别|一致")
DIFFER_WORDS = re.compile(r"(?i:\bfaster\b|\bslower\b|\bquicker\b|\bsooner\b|\btwice\b"
                          rf"|\btimes (?:as long|longer|faster)\b|{NUMBER}\s?[×x] (?:as long|faster|slower|longer)\b)"
                          r"|更快|更慢|快得多|慢得多|[快慢]了|[快慢][^，。；：,;:]{0,4}倍|倍[^，。；：,;:]{0,2}[快慢]")
# "The slower one", "较慢的那个进程": a name for one of the things compared, not a comparison.
REFERENCE = re.compile(r"(?i:\bthe (?:faster|slower) (?:one|process|thread|run|call|GPU)s?\b)|较[快慢]的")
NEGATED = re.compile(r"(?i:\b(?:no|not|never|nor|neither|hardly)\s+(?:\w+\s+)?$)"
                     r"|(?:不|没|未|并非|不是)[^，。；：]{0,6}$")
HEDGE = re.compile(r"(?i:\b(?:may|might|can|could|would|should|if|unless|whether|expect\w*|suppose|imagine)\b)"
                   r"|可能|也许|或许|如果|假如|若|是否|能否|预期|预计|应该|应当")
NOT_A_CLAIM = re.compile(r"(?i:\bpredict\b|\breason(?:ed|ing)\b|\bnot a recorded run\b)|预测|推理|推算|并非实际运行"
                         r"|⟨note \d+⟩")
# Words that put a clause back on the run on record (the stored outputs come from a CPU).
ON_RECORD = re.compile(r"(?i:\bwithout (?:a |an |any )?(?:CUDA )?(?:GPU|accelerator)s?\b|\bno GPU\b"
                       r"|\b(?:on|in) (?:a|the|this|your) CPU\b|\bCPUs?\b|\bhere\b|\bthis (?:machine|page|run)\b"
                       r"|\bstored outputs?\b)"
                       r"|没有\s*(?:CUDA\s*)?GPU|无\s*GPU|CPU|这台机器|本页|这里|存储的输出")
CLAUSE_END = re.compile(r"[,;:，；：]|(?<=[.!?。！？])\s+|(?<=[。！？])")
HEADING_LINE = re.compile(r"^#{1,6} .*$", re.MULTILINE)


@dataclass(frozen=True)
class Claim:
    cell: str  # the markdown cell
    kind: str  # "same" (no difference) or "differ"
    words: str  # as written: "close", "1.72× as long", "更快"
    sentence: str


def claims(markdown: str, cell_id: str = "") -> list[Claim]:
    """The comparative claims about the run on record in ``markdown``: the rule above. A
    parenthesised aside is read on its own, in the context of the sentence around it, and changes
    that context for nothing after it ("(an A100: ...; not measured here)")."""
    found = []
    prose = HEADING_LINE.sub("", CODE_OR_LINK.sub(" ", HTML.sub(" ", with_notes(markdown))))  # a title claims nothing
    for paragraph in PARAGRAPH.split(prose):
        on_gpu = False
        for sentence in SENTENCE_END.split(paragraph):
            text = sentence.strip()
            if not text or text.endswith(("?", "？")) or NOT_A_CLAIM.search(text):
                on_gpu = _clauses_on_gpu(_asides(text)[0], on_gpu)[1]
                continue
            main, asides = _asides(text)
            clauses, after = _clauses_on_gpu(main, on_gpu)
            for aside in asides:
                clauses += _clauses_on_gpu(aside.strip("()（）"), on_gpu)[0]
            on_gpu = after
            for clause, gpu in clauses:
                if gpu or HEDGE.search(clause):
                    continue
                names = [r.span() for r in REFERENCE.finditer(clause)]
                for kind, pattern in (("same", SAME_WORDS), ("differ", DIFFER_WORDS)):
                    found += [Claim(cell_id, kind, m.group(0), text) for m in pattern.finditer(clause)
                              if not NEGATED.search(clause[:m.start()])
                              and not any(i <= m.start() < j for i, j in names)]
    return found


def _clauses_on_gpu(text: str, on_gpu: bool) -> tuple[list[tuple[str, bool]], bool]:
    """The clauses of ``text``, each with whether it speaks of a GPU, and whether the last does."""
    out = []
    for clause in CLAUSE_END.split(text):
        gpu, cpu = GPU_WORD.search(clause) or NAMES_A_GPU.search(clause), ON_RECORD.search(clause)
        if cpu and (not gpu or cpu.start() >= gpu.start() or "GPU" in cpu.group(0)):
            on_gpu = False
        elif gpu:
            on_gpu = True
        out.append((clause, on_gpu))
    return out, on_gpu


def differ(a: Timing, b: Timing) -> bool:
    """The lesson's rule: two medians differ when they are further apart than their two IQRs together."""
    return abs(a.seconds - b.seconds) > a.iqr_seconds + b.iqr_seconds


def contradicts(claim: Claim, printed: list[Timing]) -> bool:
    """Whether timings printed by one cell say otherwise than ``claim`` (the rule above)."""
    pairs = [(a, b) for k, a in enumerate(printed) for b in printed[k + 1:]]
    if claim.kind == "same":
        return all(differ(a, b) for a, b in pairs)
    return not any(differ(a, b) for a, b in pairs)


def _beside(nb: nbformat.NotebookNode) -> dict[int, list[int]]:
    """For each markdown cell, the code cells beside it that print at least two timings."""
    cells, out = nb.cells, {}
    for k, cell in enumerate(cells):
        if cell.cell_type != "code" or len(timings(output_text(cell))) < 2:
            continue
        for step in (1, -1):
            j = k + step
            while 0 <= j < len(cells) and cells[j].cell_type == "code" and not cells[j].get("outputs"):
                j += step
            if 0 <= j < len(cells) and cells[j].cell_type == "markdown":
                out.setdefault(j, []).append(k)
    return out


def _section_part(markdown: str, after_cell: bool) -> str:
    """The part of a markdown cell that belongs with a code cell before it (up to its first heading)
    or after it (from its last heading on)."""
    starts = [m.start() for m in HEADING_LINE.finditer(markdown)]
    if not starts:
        return markdown
    return markdown[:starts[0]] if after_cell else markdown[starts[-1]:]


def contradicted_claims(nb: nbformat.NotebookNode) -> list[tuple[Claim, list[tuple[str, list[Timing]]]]]:
    """Each comparative claim beside cells that print timings which every one of those cells
    contradicts, with the cells (id, timings)."""
    out = []
    for j, ks in sorted(_beside(nb).items()):
        md = nb.cells[j]
        if md.get("id") in ("header", "footer", series.SOURCES_ID):
            continue
        by_cell = [(k, timings(output_text(nb.cells[k]))) for k in ks]
        found = {}
        for k, printed in by_cell:
            for claim in claims(_section_part(md.source, after_cell=k < j), md.get("id", "")):
                found.setdefault(claim, []).append((nb.cells[k].get("id"), printed))
        for claim, cells in found.items():
            if len(cells) == len(by_cell) and all(contradicts(claim, printed) for _, printed in cells):
                out.append((claim, cells))
    return out
