"""The series' own messages in the edition's language (i18n/language.py): the Chinese edition's setup
cell sets GPU_LESSONS_LANGUAGE=zh, and the helpers' texts (localized) and the exercise checks' messages
then come from i18n/zh/messages.po, which `make sync` writes into utils.py."""

from __future__ import annotations

import ast
import itertools
import re

import pytest

import exercises.core
import exercises.messages
import utils
from tools import i18n, sync_notebooks
from tools.series import lessons

CJK = re.compile(r"[\u4e00-\u9fff]")
# What stays English in a Chinese message: code, commands, URLs, names of products and of settings.
ENGLISH_WORDS = re.compile(r"\b[A-Za-z]{2,}(?:[ '’-]+[A-Za-z]{2,}){3,}\b")  # four English words in a row


def english_left(text: str) -> list[str]:
    """Runs of four or more English words in ``text``, once commands, code and URLs are taken out."""
    text = re.sub(r"https?://\S+|`[^`]*`|'[^']*'|\"[^\"]*\"|^\s+pip install.*$", "", text, flags=re.MULTILINE)
    return ENGLISH_WORDS.findall(text)


@pytest.fixture
def zh(monkeypatch):
    monkeypatch.setenv("GPU_LESSONS_LANGUAGE", "zh")


def test_english_is_the_default_and_another_language_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("GPU_LESSONS_LANGUAGE", raising=False)
    assert utils.language() == "en" and utils.localized("No GPU found.") == "No GPU found."
    monkeypatch.setenv("GPU_LESSONS_LANGUAGE", "ZH ")
    assert utils.language() == "zh"
    monkeypatch.setenv("GPU_LESSONS_LANGUAGE", "fr")
    with pytest.raises(ValueError, match="GPU_LESSONS_LANGUAGE is 'fr'"):
        utils.localized("No GPU found.")


def test_a_template_is_split_into_text_and_fields_as_str_format_reads_it():
    assert i18n.template_parts("got {kind}: {x!r} {{not a field}}") == [
        ("got ", False), ("{kind}", True), (": ", False), ("{x!r}", True), (" {not a field}", False)]
    assert i18n.template_parts("{a}.{v:.1f}") == [("{a}", True), (".", False), ("{v:.1f}", True)]
    source = 'localized("on {device}, got {kind!r:>4}" " {{x}}").format(device=d, kind=k)\nlocalized(text)\n' \
             'localized(f"no {device}")'
    assert i18n.localized_calls(source) == [("on {device}, got {kind!r:>4} {{x}}", 1), (None, 2), (None, 3)]


def test_a_chinese_template_takes_the_values_of_the_english_fields_in_any_order(zh, monkeypatch):
    texts = utils.zh_tables()["texts"]
    monkeypatch.setitem(texts, "{name} must be at least 1, got {value}", "{name} 至少为 1，而传入的是 {value}")
    monkeypatch.setitem(texts, "{what} on {device}: {why}", "{device} 上的{what}：{why}")
    assert utils.localized("{name} must be at least 1, got {value}").format(name="nproc", value=0) == \
        "nproc 至少为 1，而传入的是 0"
    assert utils.localized("{what} on {device}: {why}").format(what="error", device="cuda:1", why="x") == \
        "cuda:1 上的error：x"
    assert utils.localized("a text nobody translated") == "a text nobody translated"  # English, never a wrong text


def test_every_translated_helper_text_fills_its_fields(zh):
    assert utils.zh_tables()["texts"], "no helper text is translated (i18n/zh/messages.po)"
    for english, chinese in utils.zh_tables()["texts"].items():
        fields = [piece for piece, field in i18n.template_parts(english) if field]
        names = {re.match(r"\{(\w*)", f).group(1) for f in fields}
        assert utils.localized(english) == chinese
        assert english.format(**dict.fromkeys(names, 1)) and chinese.format(**dict.fromkeys(names, 1)), english


def test_every_message_a_helper_raises_is_written_in_place_and_goes_through_localized():
    """A raise in a #@save cell gives localized(...) of a string written in place, its values filled in after
    (`.format`), so that `make sync` finds its English for the translation file; every localized() call is
    such a string, with words (an f-string would be looked up with its values in it, and never be found)."""
    for _, cell_id, source in sync_notebooks.saved_cells(lessons()):
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args:
                arg = node.exc.args[0]
                assert not isinstance(arg, ast.JoinedStr | ast.Constant), \
                    f"{cell_id}, line {node.lineno}: raise ...(localized(...)), for the Chinese edition to translate it"
        for template, line in i18n.localized_calls(source):
            assert template is not None and re.search(r"[A-Za-z]{2}", "".join(
                p for p, field in i18n.template_parts(template) if not field)), f"{cell_id}, line {line}: {template!r}"


def test_a_sentence_a_lessons_own_cell_prints_through_localized_is_translated_and_found(zh):
    """A lesson's or a solution's cell prints a sentence for the reader with localized(...) of a string written
    in place: `make sync` puts it in the translation file (print/<cell id>), and the Chinese edition prints
    its translation, while the code stays the same in both editions."""
    cells = sync_notebooks.printing_cells(sync_notebooks.read(path) for lesson in lessons()
                                          for path in (lesson.path, lesson.solutions) if path.exists())
    ids = {cell_id for cell_id, _ in cells}
    assert {"models-10", "practice-07"} <= ids, ids  # 04's guarded .cuda(), 14's comparison line
    po = {e.msgid: e for e in i18n.load(i18n.MESSAGES_PO) if not e.obsolete and e.msgctxt.startswith("print/")}
    for cell_id, source in cells:
        for template, line in i18n.localized_calls(source):
            assert template is not None, f"{cell_id}, line {line}: localized() of a string written in place"
            assert template in po and po[template].msgstr, f"{cell_id}: {template!r} is not in {i18n.MESSAGES_PO}"
            assert utils.localized(template) == po[template].msgstr and CJK.search(utils.localized(template))


def test_every_field_of_a_translated_message_is_kept():
    assert i18n.format_fields("{a} and {b!r} and {a}") == ["{a}", "{a}", "{b!r}"]
    assert set(utils.zh_tables()["messages"]) <= set(exercises.messages.MESSAGES)
    for key, chinese in utils.zh_tables()["messages"].items():
        assert i18n.format_fields(chinese) == i18n.format_fields(exercises.messages.MESSAGES[key]), key


FACTS = [dict(driver_cuda=d, torch_cuda=t, cuda_available=False, service=s, torch_version=v)
         for d, t, s, v in itertools.product((None, "11.4", "12.2", "12.8", "13.0"), (None, "12.6", "13.0"),
                                             (None, "Colab", "Kaggle"), ("2.13.0", "2.7.1", "2.4.1", "2.16.0"))]


def test_the_chinese_setup_advice_speaks_chinese_for_every_machine(zh):
    """What lesson 00 tells a reader of the Chinese edition: Chinese prose, the commands and names as they are."""
    said = 0
    for facts in FACTS:
        advice = utils.setup_advice(**facts)
        if advice is None:
            continue
        said += 1
        assert CJK.search(advice) and not english_left(advice), (facts, advice)
    assert said > 50
    summary = utils.hardware_summary()
    assert CJK.search(summary) and not english_left(summary), summary


def test_the_english_setup_advice_is_unchanged_by_the_translation(monkeypatch):
    monkeypatch.delenv("GPU_LESSONS_LANGUAGE", raising=False)
    advice = utils.setup_advice(driver_cuda="12.2", torch_cuda=None, cuda_available=False, torch_version="2.13.0")
    assert advice.startswith("This machine has an NVIDIA GPU (its driver serves CUDA 12.2), but this PyTorch has no"
                             " CUDA support: install the CUDA 12.6 build of PyTorch 2.13.0")
    assert not CJK.search(utils.hardware_summary())


def test_checks_and_hints_speak_chinese_and_english_where_a_message_is_untranslated(zh, monkeypatch, capsys):
    assert not exercises.check("setup.kaggle-no-gpu", ...)
    assert CJK.search(capsys.readouterr().out)
    exercises.hint("setup.kaggle-no-gpu")
    hint = capsys.readouterr().out
    assert CJK.search(hint) and not english_left(hint), hint
    monkeypatch.delitem(utils.zh_tables()["messages"], "setup.kaggle-no-gpu/hint")
    exercises.hint("setup.kaggle-no-gpu")
    assert capsys.readouterr().out.strip() == exercises.messages.MESSAGES["setup.kaggle-no-gpu/hint"]
