"""Writing an imported suite: the output folder's guards, the YAML files, ``_suite.json`` and ``SUITE.md``.

An imported suite holds licensed third-party data (LoCoMo is CC BY-NC 4.0),
so the importer refuses to write inside a git work tree unless told
``--force``: a suite written into a checkout is one ``git add -A`` away from
being committed. It also never mixes its files with someone else's: the output
folder must be empty, new, or an earlier import (its ``_suite.json``), whose
files it replaces.

Output is deterministic: the same source file gives byte-identical files (no
timestamps), so two imports can be compared with ``diff``.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import __version__
from harness.atomic import write_atomic
from harness.importers.audit import MAX_LISTED, AuditResult
from harness.importers.faults import FaultLog, ImporterError

IMPORTER_VERSION = "3"
"""Bumped whenever an importer's output for the same source file changes."""
SUITE_JSON = "_suite.json"
SUITE_MD = "SUITE.md"
DEFAULTS = "_defaults.yaml"

_ID_BAD = re.compile(r"[^A-Za-z0-9._:-]+")


def safe_id(text: str, fallback: str) -> str:
    """``text`` as a scenario identifier (letters, digits, ``._:-``; starting with a letter or digit).

    Example:
        >>> safe_id("sharegpt_yywfJrU_0", "s1"), safe_id("  ", "s1"), safe_id("é/x", "s1")
        ('sharegpt_yywfJrU_0', 's1', 'x')
    """
    cleaned = _ID_BAD.sub("-", str(text)).strip("-._:")
    return cleaned[:200] if cleaned else fallback


def file_sha256(path: Path) -> str:
    """SHA-256 of the file's bytes, read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def source_sha256(path: Path) -> str:
    """SHA-256 of a source file, or of a folder's ``*.json`` files (each name, then its bytes, sorted by name)."""
    if not path.is_dir():
        return file_sha256(path)
    digest = hashlib.sha256()
    for file in sorted(p for p in path.iterdir() if p.is_file() and p.suffix == ".json"):
        digest.update(file.name.encode("utf-8") + b"\0" + bytes.fromhex(file_sha256(file)))
    return digest.hexdigest()


def _size(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.iterdir() if p.is_file() and p.suffix == ".json")
    return path.stat().st_size


def git_work_tree(path: Path) -> Path | None:
    """The root of the git work tree holding ``path`` (which may not exist yet), or None."""
    current = path.resolve()
    for folder in (current, *current.parents):
        if (folder / ".git").exists():
            return folder
    return None


def prepare_out(out: Path, *, force: bool) -> None:
    """Check and create the output folder, removing an earlier import's files.

    Raises:
        ImporterError: ``out`` is inside a git work tree (without ``force``), is
            a file, or holds files that are not an earlier import.
    """
    tree = git_work_tree(out)
    if tree is not None and not force:
        raise ImporterError(
            f"{out}: inside the git work tree {tree}; the imported dataset must never be committed "
            "(LoCoMo is CC BY-NC 4.0). Write it outside the checkout, or pass --force if the folder is git-ignored"
        )
    if out.exists() and not out.is_dir():
        raise ImporterError(f"{out}: exists and is not a folder; name a new or empty folder")
    if out.is_dir():
        entries = list(out.iterdir())
        if entries and not (out / SUITE_JSON).is_file():
            raise ImporterError(
                f"{out}: holds {len(entries)} entries and no {SUITE_JSON}, so it is not an earlier import; "
                "name a new or empty folder"
            )
        for entry in entries:
            if entry.is_file() and (entry.suffix in (".yaml", ".yml") or entry.name in (SUITE_JSON, SUITE_MD)):
                entry.unlink()
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ImporterError(f"{out}: cannot create the folder: {exc.strerror or exc}") from None


# Characters a YAML reader refuses in a stream (C0/C1 controls, U+FFFE/U+FFFF) or folds as line breaks (NEL,
# U+2028, U+2029) inside a quoted string: written as escapes, so they load back unchanged.
_NOT_PRINTABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ufffe\uffff]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_NOT_PRINTABLE_CHARS = tuple(
    chr(code) for code in (*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), *range(0x7F, 0xA0), 0x2028, 0x2029, 0xFFFE, 0xFFFF)
)
"""What :data:`_NOT_PRINTABLE` matches (a test holds the two equal)."""
_ENCODER = json.JSONEncoder(ensure_ascii=False)  # one encoder: ``json.dumps`` with an option builds one per call
HEADER = "# Written by `recall-eval import` in JSON syntax (valid YAML, and fast to write); see docs/importers.md.\n"


def dump_yaml(data: dict[str, Any]) -> str:
    """``data`` as YAML text in JSON syntax: one top-level field per line, and one line per element of a list.

    PyYAML's representer writes about 1 MB of YAML a second, which would make
    a LongMemEval S import take many minutes; JSON is valid YAML and ``json``'s
    C encoder writes it in milliseconds. One element per line keeps the
    loader's ``file:line`` messages pointing at the session, item or probe at
    fault. Characters a YAML reader refuses are escaped, and a lone surrogate
    (only a broken source has one) becomes U+FFFD.
    """
    one = _ENCODER.encode

    fields = []
    for key, value in data.items():
        if isinstance(value, list) and value:
            body = ",\n  ".join(one(element) for element in value)
            fields.append(f" {one(key)}: [\n  {body}\n ]")
        else:
            fields.append(f" {one(key)}: {one(value)}")
    text = "{\n" + ",\n".join(fields) + "\n}\n"
    # The regexes only where they have work: a character-class scan costs ~25 ms a MB, an `in` (memchr) almost nothing
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate
            text = _SURROGATE.sub("\ufffd", text)
    if any(char in text for char in _NOT_PRINTABLE_CHARS):
        text = _NOT_PRINTABLE.sub(lambda m: f"\\u{ord(m[0]):04x}", text)
    return HEADER + text


def write_text(path: Path, text: str) -> None:
    try:
        write_atomic(path, text)
    except OSError as exc:
        raise ImporterError(f"{path}: cannot write: {exc.strerror or exc}") from None


@dataclass
class SuiteInfo:
    """What ``_suite.json`` and ``SUITE.md`` record about an import."""

    importer: str
    source: Path
    licence: str
    licence_url: str
    dataset_url: str
    notes: list[str]
    conversations: int = 0
    probes: int = 0
    items: int = 0
    categories: dict[str, int] = field(default_factory=dict)
    #: Answerable probes with no relevant item (no item cites their evidence turns), by category.
    no_relevant: dict[str, int] = field(default_factory=dict)


def write_provenance(out: Path, info: SuiteInfo, faults: FaultLog, sha256: str, *, complete: bool,
                     audit: AuditResult | None = None, extra: dict[str, Any] | None = None) -> None:
    """Write ``_suite.json`` (machine-readable) and ``SUITE.md`` (for people) into ``out``, with the gold audit.

    ``extra`` fields are added to ``_suite.json`` (a transcripts import: ``sensitive`` and its ``redaction``).
    """
    record = {
        "schema_version": 1,
        "importer": info.importer,
        "importer_version": IMPORTER_VERSION,
        "recall_eval_version": __version__,
        "complete": complete,
        "source": {
            "file": info.source.name,
            "sha256": sha256,
            "bytes": _size(info.source),
            "licence": info.licence,
            "licence_url": info.licence_url,
            "dataset_url": info.dataset_url,
        },
        "counts": {"conversations": info.conversations, "probes": info.probes, "items": info.items,
                   "probes_by_category": dict(sorted(info.categories.items())),
                   "answerable_probes_without_relevant_item_by_category": dict(sorted(info.no_relevant.items()))},
        **faults.as_json(),
        "notes": info.notes,
    }
    if audit is not None:
        record["audit"] = audit.as_json()
    record.update(extra or {})
    write_text(out / SUITE_JSON, json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    lines = [
        f"# Imported suite: {info.importer}",
        "",
        f"Imported by `recall-eval import {info.importer}` (importer version {IMPORTER_VERSION}, "
        f"recall-eval {__version__}) from `{info.source.name}` (sha256 `{sha256}`).",
        "",
        f"**Licence: {info.licence}** ({info.licence_url}); dataset: {info.dataset_url}. "
        "These files are the dataset in another shape: keep them out of version control and honour the licence.",
        "",
        f"{info.conversations} conversations, {info.probes} probes, {info.items} memory items.",
        "",
        *[f"- {note}" for note in info.notes],
        "",
        *_no_relevant_lines(info),
        "## What the importer repaired and dropped",
        "",
        "```",
        *faults.lines(),
        "```",
        "",
        f"Details (counts and first examples): `{SUITE_JSON}`. Format and rules: docs/importers.md.",
        "",
    ]
    if audit is not None:
        lines += [
            "## Gold audit: checks that look unpassable",
            "",
            "Run again with `recall-eval audit` on this folder; the kinds are described in docs/importers.md.",
            "",
            "```",
            *audit.lines(limit=MAX_LISTED),
            "```",
            "",
        ]
    if not complete:
        lines.insert(2, "**Incomplete: the import stopped before the end; import again.**\n")
    write_text(out / SUITE_MD, "\n".join(lines))


def _no_relevant_lines(info: SuiteInfo) -> list[str]:
    """SUITE.md's paragraph on answerable probes without a relevant item (retrieval recall cannot score them)."""
    total = sum(info.no_relevant.values())
    if not total:
        return []
    by_category = ", ".join(f"{name} {n}" for name, n in sorted(info.no_relevant.items()))
    return [f"**{total} answerable probes have no relevant item** ({by_category}): no memory item cites their "
            "evidence turns, so retrieval recall has nothing to find for them and leaves them out of its n; "
            "the report counts them as \"no relevant item\" per category.", ""]
