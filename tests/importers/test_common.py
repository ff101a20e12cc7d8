"""The importers' shared parts: gold-answer checks, the baseline extractor, the streaming reader, the output folder and the CLI."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.cli import main
from harness.importers import ImporterError, extract, output, run_import
from harness.importers.answers import (
    STOP_WORDS,
    alternatives,
    answer_check,
    list_parts,
    unglue_dates,
    unusable_gold,
    variants,
)
from harness.importers.extract import MAX_KEYS, fact_chunks, keys_for
from harness.importers.jsonstream import iter_array
from harness.importers.output import IMPORTER_VERSION, dump_yaml, safe_id
from harness.importers.times import parse_time
from tests.importers.importer_fixtures import LOCOMO, LONGMEMEVAL, imported, passes

ROOT = Path(__file__).resolve().parents[2]


# --- gold answers -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("gold", ["7 May 2023", "May 7, 2023", "7th May 2023", "2023-05-07", "May 7 2023"])
def test_a_date_gold_in_any_order_gives_every_order(gold: str) -> None:
    assert {"7 May 2023", "May 7, 2023", "2023-05-07"} <= set(variants(gold))


def test_a_month_year_gold_gives_its_variants() -> None:
    assert variants("June 2023") == ["June 2023", "June, 2023", "2023-06"]


def test_a_date_inside_a_longer_gold_is_one_group_with_its_variants() -> None:
    check = answer_check("The week before 9 June 2023")
    assert check["must_contain_groups"][0][:2] == ["9 June 2023", "June 9, 2023"]
    assert passes("It was the week before June 9, 2023.", check)
    assert not passes("It was on June 9, 2023.", check)  # "week" is missing


def test_numbers_up_to_twenty_get_their_word_and_back() -> None:
    assert variants("3") == ["3", "three"] and variants("three") == ["three", "3"] and variants("42") == ["42"]


def test_a_list_gold_is_split_but_a_date_with_a_comma_is_not() -> None:
    assert list_parts("Sweden, Canada and Peru") == ["Sweden", "Canada", "Peru"]
    assert list_parts("May 7, 2023") is None
    assert list_parts("Pottery and camping") is None
    assert list_parts("Pottery and camping", force=True) == ["Pottery", "camping"]
    assert list_parts("She said yes, because she was tired of waiting for the bus") is None


def test_a_long_gold_needs_its_salient_words_not_its_wording() -> None:
    check = answer_check("She wanted to help people who struggle with mental health")
    assert "must_contain_any" not in check
    assert passes("Helping people who struggle with their mental health.", check)
    assert not passes("She wanted to help.", check)


def test_a_short_gold_matches_word_bounded_through_the_scorer() -> None:
    assert passes("Yes, she did.", answer_check("Yes")) and not passes("Yesterday.", answer_check("Yes"))
    assert passes("Two.", answer_check(2)) and not passes("22", answer_check(2))


def test_a_comma_inside_a_date_or_a_grouped_number_does_not_split_a_list() -> None:
    assert list_parts("on 9 April, 2023") is None and list_parts("Thursday before December 17, 2023") is None
    assert list_parts("$25,000", force=True) is None and list_parts("April, 2023", force=True) is None
    assert list_parts("$1,200, $25,000") == ["$1,200", "$25,000"]
    assert list_parts("May 7, 2023, June 9, 2023 and 1 July 2023") == ["May 7, 2023", "June 9, 2023", "1 July 2023"]


def test_a_date_with_filler_words_is_answered_by_the_date_alone_but_not_a_date_with_content() -> None:
    assert passes("April 9, 2023", answer_check("on 9 April, 2023"))
    assert passes("Around 9 April 2023", answer_check("around April 9, 2023"))
    assert not passes("April 9, 2023", answer_check("hiking on 9 April, 2023"))  # "hiking" is part of the answer


def test_a_weekday_or_day_before_or_after_a_date_is_also_that_date() -> None:
    assert passes("It was on 14 December 2023.", answer_check("Thursday before December 17, 2023"))
    assert passes("July 16, 2023", answer_check("the day after 15 July 2023"))
    assert passes("2023-07-21", answer_check("the Friday after 15 July 2023"))
    assert not passes("July 13, 2023", answer_check("The Friday before 15 July 2023"))


def test_a_month_glued_to_a_number_is_spaced_and_nothing_else_is() -> None:
    assert unglue_dates("15April, 2022") == "15 April, 2022" and unglue_dates("June2023") == "June 2023"
    assert unglue_dates("2nd place at 3pm, 4may") == "2nd place at 3pm, 4 may"
    assert unglue_dates("15Mayday") == "15Mayday"


def test_also_acceptable_answers_are_alternatives() -> None:
    assert alternatives("7 days. 8 days (including the last day) is also acceptable.") == ["7 days", "8 days"]
    assert alternatives("Is it ok. Yes.") == ["Is it ok. Yes"]
    check = answer_check("$12. $15 is also acceptable")
    assert passes("$15", check) and passes("$12", check) and not passes("$13", check)


def test_a_gold_that_is_no_text_is_named_unusable() -> None:
    assert unusable_gold({"a": 1}) == "a dict" and unusable_gold(True) == "a boolean"
    assert unusable_gold([1, {"a": 1}]) == "a list holding a dict"
    assert unusable_gold(2.5) is None and unusable_gold("x") is None and unusable_gold(["a", 3]) is None


def test_no_gold_gives_no_check() -> None:
    assert answer_check(None) == {} and answer_check("  ") == {}


# --- the baseline extractor -------------------------------------------------------------------------------------

def test_keys_are_entities_then_frequent_content_words_all_deterministic() -> None:
    keys = keys_for("We drove to Lake Tahoe. The lake was cold, the lake was clear. Tahoe rocks.")
    assert keys[0] == {"key": "Lake Tahoe", "type": "entity", "origin": "deterministic"}
    concepts = [k["key"] for k in keys if k.get("type", "concept") == "concept"]
    assert concepts[0] == "lake"  # the most frequent content word first
    assert all(k["origin"] == "deterministic" for k in keys) and "the" not in concepts and "was" not in concepts


def test_a_lone_word_opening_a_sentence_is_no_entity_unless_capitalized_elsewhere() -> None:
    assert [k["key"] for k in keys_for("Noted, thanks.") if k.get("type") == "entity"] == []
    assert [k["key"] for k in keys_for("Pixel is cute. I love Pixel.") if k.get("type") == "entity"] == ["Pixel"]


def test_keys_are_capped_and_never_empty() -> None:
    many = "alpha bravo charlie delta echoes foxtrot golfing hotel india juliet kilos lima mike november oscar papa"
    keys = keys_for(many)
    assert len(keys) == MAX_KEYS and keys[0]["key"] == "alpha" and keys[-1]["key"] == "lima"
    assert keys_for("ok") == [{"key": "ok", "origin": "deterministic"}]


def _reference_keys(text: str) -> list[str | dict[str, str]]:
    """The extractor's rules written plainly, one step at a time (its first version): what the fast one must give."""
    def initial(start: int) -> bool:
        i = start - 1
        while i >= 0 and text[i].isspace():
            i -= 1
        return i < 0 or text[i] in ".!?:\"'("

    matches = list(extract._ENTITY.finditer(text))
    inside = {m[0] for m in matches if len(m[0].split()) == 1 and not initial(m.start())}
    names: list[str] = []
    for m in matches:
        words = m[0].split()
        name = " ".join(words)
        if len(words) == 1 and (name.lower() in STOP_WORDS or len(name) < 2 or (initial(m.start()) and name not in inside)):
            continue
        if len(words) > 1 and words[0].lower() in STOP_WORDS:
            name = " ".join(words[1:])
        name = name[:extract.MAX_KEY_CHARS].strip()
        if name and name.casefold() not in {n.casefold() for n in names}:
            names.append(name)
    names = [n for n in names if extract.storable_key(n)][:extract.MAX_ENTITIES]
    taken = {n.casefold() for n in names}
    words = [w.strip("'-") for w in extract._WORD.findall(text.lower())]
    counts: dict[str, int] = {}
    for word in words:
        if len(word) <= extract.MAX_KEY_CHARS and len(word) >= 4 and word not in STOP_WORDS and word not in taken:
            counts[word] = counts.get(word, 0) + 1
    order = {word: i for i, word in reversed(list(enumerate(words)))}
    ranked = sorted(counts, key=lambda w: (-counts[w], order[w]))[: MAX_KEYS - len(names)]
    keys: list[str | dict[str, str]] = [{"key": n, "type": "entity", "origin": "deterministic"} for n in names]
    keys += [{"key": w, "origin": "deterministic"} for w in ranked]
    if not keys:
        first = (text.split() or ["conversation"])[0][:extract.MAX_KEY_CHARS]
        keys.append({"key": first if extract.storable_key(first) else "conversation", "origin": "deterministic"})
    return keys


_CHAT_WORDS = ["I", "The", "the", "Oslo", "New York", "of", "Bank of", "lake", "lakes", "Lake", "Pixel", "pixel", "we",
               "went", "to", "it's", "don't", "a", "Ab", "x-ray", "O'Neil", "McDonald's", "café", "Zürich", "and"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_CHAT_WORDS), st.sampled_from([".", "!", "?", ":", '"', "'", "(", ",", "\n", "\t", "  "]),
                          st.text(alphabet="abcXYZ'-. \n", max_size=8)), max_size=60))
def test_the_extractor_gives_the_keys_its_plain_rules_give(parts: list[str]) -> None:
    """The counted, one-pass extractor (a third of a LongMemEval S import before) against its rules written plainly."""
    text = " ".join(parts)
    assert keys_for(text) == _reference_keys(text)


def test_fact_chunks_cut_at_sentence_ends_and_lose_no_text() -> None:
    text = " ".join(f"Sentence {i} is here." for i in range(300))
    chunks = fact_chunks(text, limit=200)
    assert all(len(c) <= 200 for c in chunks) and all(c.endswith(".") for c in chunks)
    assert " ".join(chunks) == text
    assert fact_chunks("x" * 450, limit=200) == ["x" * 200, "x" * 200, "x" * 50]


# --- dates and ids ----------------------------------------------------------------------------------------------

def test_both_benchmarks_date_formats_parse_to_utc() -> None:
    assert parse_time("10:37 am on 27 June, 2023").isoformat() == "2023-06-27T10:37:00+00:00"
    assert parse_time("12:05 am on 1 Jan, 2024").isoformat() == "2024-01-01T00:05:00+00:00"
    assert parse_time("12:30 pm on 3 Sept, 2023").isoformat() == "2023-09-03T12:30:00+00:00"
    assert parse_time("2023/05/20 (Sat) 02:21").isoformat() == "2023-05-20T02:21:00+00:00"
    assert parse_time("1:56 pm on 31 Feb, 2023") is None and parse_time("sometime") is None and parse_time(None) is None


def test_safe_id_keeps_benchmark_ids_and_replaces_the_rest() -> None:
    assert safe_id("sharegpt_yywfJrU_0", "x") == "sharegpt_yywfJrU_0"
    assert safe_id("a b/c", "x") == "a-b-c" and safe_id("///", "fallback") == "fallback"


# --- the streaming reader ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("chunk", [1, 7, 64, 1 << 20])
def test_the_stream_reader_gives_what_json_load_gives(chunk: int) -> None:
    for path in (LOCOMO, LONGMEMEVAL):
        assert list(iter_array(path, chunk=chunk)) == json.loads(path.read_text(encoding="utf-8"))


def test_the_stream_reader_continues_a_number_split_across_reads() -> None:
    assert list(iter_array(Path("n.json"), chunk=2, stream=io.StringIO("[12345, 6, true, \"a\\u00e9\"]"))) == [12345, 6, True, "aé"]
    assert list(iter_array(Path("n.json"), stream=io.StringIO(" [ ] "))) == []


def test_the_stream_reader_holds_about_one_element_not_the_file() -> None:
    element = {"question": "x" * 5000, "haystack_sessions": [[{"role": "user", "content": "y" * 5000}]]}
    text = json.dumps([element] * 100)
    stream = io.StringIO(text)
    reader = iter_array(Path("big.json"), chunk=4096, stream=stream)
    next(reader)
    assert stream.tell() < 3 * len(json.dumps(element)) < len(text) / 10
    assert sum(1 for _ in reader) == 99


# --- the output folder ------------------------------------------------------------------------------------------

def test_provenance_records_source_hash_licence_and_importer_version(tmp_path: Path) -> None:
    for kind, source, licence in (("locomo", LOCOMO, "CC BY-NC 4.0"), ("longmemeval", LONGMEMEVAL, "MIT")):
        out, _ = imported(kind, tmp_path)
        record = json.loads((out / "_suite.json").read_text(encoding="utf-8"))
        assert record["source"]["file"] == source.name
        assert record["source"]["sha256"] == hashlib.sha256(source.read_bytes()).hexdigest()
        assert record["source"]["licence"] == licence and record["importer_version"] == IMPORTER_VERSION
        assert record["importer"] == kind and record["complete"] is True
        md = (out / "SUITE.md").read_text(encoding="utf-8")
        assert record["source"]["sha256"] in md and f"**Licence: {licence}**" in md


def test_the_fault_counts_are_recorded_with_examples(tmp_path: Path) -> None:
    out, lines = imported("locomo", tmp_path)
    record = json.loads((out / "_suite.json").read_text(encoding="utf-8"))
    stray = record["repairs"]["evidence id with a stray colon (D:11:26), repaired"]
    assert stray["count"] == 2 and stray["examples"][0].endswith("'D:1:3' -> 'D1:3'")
    assert record["drops"]["evidence id pointing at no turn"]["count"] == 2
    assert record["counts"]["probes_by_category"]["adversarial"] == 2
    assert "dropped: 14" in lines and "repaired: 10" in lines


def test_an_import_is_deterministic_byte_for_byte(tmp_path: Path) -> None:
    for kind in ("locomo", "longmemeval"):
        first, _ = imported(kind, tmp_path / "a")
        second, _ = imported(kind, tmp_path / "b")
        names = sorted(p.name for p in first.iterdir())
        assert names == sorted(p.name for p in second.iterdir())
        assert all((first / n).read_bytes() == (second / n).read_bytes() for n in names)


def test_the_importer_refuses_a_git_work_tree_without_force(tmp_path: Path) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    out = tmp_path / "repo" / "suites" / "locomo"
    with pytest.raises(ImporterError, match=r"inside the git work tree .*repo.*--force"):
        run_import("locomo", LOCOMO, out, echo=lambda line: None)
    assert not out.exists()
    run_import("locomo", LOCOMO, out, force=True, echo=lambda line: None)
    assert (out / "conv-1.yaml").is_file()


def test_a_git_worktree_file_counts_as_a_work_tree(tmp_path: Path) -> None:
    (tmp_path / ".git").write_text("gitdir: /elsewhere\n")
    with pytest.raises(ImporterError, match="git work tree"):
        run_import("longmemeval", LONGMEMEVAL, tmp_path / "out", echo=lambda line: None)


def test_the_importer_never_mixes_its_files_with_foreign_ones(tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(ImporterError, match="not an earlier import"):
        run_import("locomo", LOCOMO, out, echo=lambda line: None)
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]


def test_importing_again_replaces_the_earlier_import(tmp_path: Path) -> None:
    out, _ = imported("longmemeval", tmp_path)
    run_import("longmemeval", LONGMEMEVAL, out, limit=2, echo=lambda line: None)
    assert sorted(p.name for p in out.glob("*.yaml")) == ["_defaults.yaml", "e47becba.yaml", "gpt4_2655b836_abs.yaml"]
    assert json.loads((out / "_suite.json").read_text())["counts"]["conversations"] == 2


# --- the command line -------------------------------------------------------------------------------------------

def test_the_import_command_writes_the_suite_and_prints_the_faults(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import", "locomo", str(LOCOMO), str(tmp_path / "s")]) == 0
    out = capsys.readouterr().out
    assert "imported 2 conversations" in out and "evidence id pointing at no turn, e.g." in out
    assert (tmp_path / "s" / "conv-2.yaml").is_file()


def test_a_bad_input_is_one_error_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import", "longmemeval", str(tmp_path / "missing.json"), str(tmp_path / "s")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "missing.json: no such file" in err and "Traceback" not in err


def test_a_limit_below_one_is_refused_before_anything_is_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import", "locomo", str(LOCOMO), str(tmp_path / "s"), "--limit", "0"]) == 2
    assert "--limit 0: give 1 or more" in capsys.readouterr().err and not (tmp_path / "s").exists()


def test_import_never_imports_litellm(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from harness.cli import main\n"
        f"assert main(['import', 'locomo', {str(LOCOMO)!r}, {str(tmp_path / 'out')!r}]) == 0\n"
        "assert 'litellm' not in sys.modules, 'import imported litellm'\n"
        "print('clean')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("clean")


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40))
def test_any_text_written_by_the_importer_loads_back_unchanged(text: str) -> None:
    data = {"content": text, "keys": [text, {"key": text}], "n": 3}
    assert yaml.load(dump_yaml(data), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) == data


def test_a_lone_surrogate_from_a_broken_source_becomes_a_replacement_character() -> None:
    assert yaml.safe_load(dump_yaml({"content": "a\ud800b"})) == {"content": "a\ufffdb"}


def test_the_characters_the_writer_looks_for_first_are_exactly_those_it_escapes() -> None:
    """The quick ``in`` checks before the regexes of ``dump_yaml`` skip no character those regexes would change."""
    escaped = {chr(code) for code in range(0x110000) if not 0xD800 <= code <= 0xDFFF and output._NOT_PRINTABLE.match(chr(code))}
    assert set(output._NOT_PRINTABLE_CHARS) == escaped


@pytest.mark.parametrize("text", ["plain", "x\x7fy", "\x85 and \u2028", "é\ud800", "\udfff", "😀\x9f", "ascii\x01"])
def test_the_writer_escapes_what_yaml_refuses_in_ascii_and_other_text_alike(text: str) -> None:
    written = dump_yaml({"content": text, "keys": [text]})
    assert not any(char in written for char in output._NOT_PRINTABLE_CHARS)
    assert not any(0xD800 <= ord(char) <= 0xDFFF for char in written)
    expected = "".join("\ufffd" if 0xD800 <= ord(char) <= 0xDFFF else char for char in text)
    assert yaml.safe_load(written) == {"content": expected, "keys": [expected]}


@pytest.mark.parametrize("module", ["answers", "extract", "times", "output", "locomo", "audit", "gold_words"])
def test_the_docstring_examples_hold(module: str) -> None:
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(f"harness.importers.{module}"))
    assert result.attempted > 0 and result.failed == 0
