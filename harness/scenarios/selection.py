"""Which scenarios a load keeps, and the cheap look at a file's text that rules it out before it is parsed.

A selection is applied to what the files say before anything is validated: a file whose top-level id
shows that nothing in it can be selected is never parsed (a LongMemEval S question is ~1.3 MB).
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from harness.scenarios.discovery import CONVERSATION_FILE


@dataclass(frozen=True)
class Selection:
    """Which scenarios to load: any id glob, any category and any tag (an empty filter matches all)."""

    ids: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()

    @property
    def active(self) -> bool:
        return bool(self.ids or self.categories or self.tags)

    def matches(self, ident: Any, category: Any, tags: Any) -> bool:
        """Whether a scenario with these (possibly raw, unvalidated) values is selected."""
        tags = tags if isinstance(tags, list) else []
        return (
            (not self.ids or (isinstance(ident, str) and self._id_matches(ident)))
            and (not self.categories or category in self.categories)
            and (not self.tags or any(tag in tags for tag in self.tags))
        )

    def _id_matches(self, ident: str) -> bool:
        exact, globs = self._split_ids
        return ident in exact or any(fnmatch.fnmatchcase(ident, glob) for glob in globs)

    @cached_property
    def _split_ids(self) -> tuple[frozenset[str], tuple[str, ...]]:
        """Plain ids (a set lookup: a report names thousands) apart from the globs, split once per selection."""
        globs = tuple(i for i in self.ids if any(ch in i for ch in "*?["))
        return frozenset(self.ids) - frozenset(globs), globs


EVERYTHING = Selection()


_TOP_ID = re.compile(r"^id:[ \t]+([A-Za-z0-9][A-Za-z0-9._:-]*)[ \t]*(?:#.*)?$", re.MULTILINE)


_TOP_CATEGORY = re.compile(r"^category:[ \t]+['\"]?([A-Za-z0-9_.-]+)['\"]?[ \t]*(?:#.*)?$", re.MULTILINE)


def names_selected(selection: Selection, path: Path, text: str | None) -> bool:
    """Whether an unloadable file is, by what can be read of it without parsing, one the selection asks for.

    Its candidate ids are its top-level ``id:`` lines and its file name
    (``my-01-x.yaml`` is ``my-01-x``; a conversation's shared file, its
    folder's name); a glob with a ``/`` is matched against the conversation
    part. Every filter that can be read must match; one that cannot (tags,
    or a category the text does not show) does not count either way.
    """
    stem = path.parent.name if path.name == CONVERSATION_FILE else path.stem
    candidates = {stem, *_TOP_ID.findall(text or "")}
    checks = []
    if selection.ids:
        conversation_globs = [g.split("/", 1)[0] for g in selection.ids if "/" in g]
        checks.append(any(selection._id_matches(c) or any(fnmatch.fnmatchcase(c, g) for g in conversation_globs)
                          for c in candidates))
    categories = _TOP_CATEGORY.findall(text or "")
    if selection.categories and categories:
        checks.append(any(c in selection.categories for c in categories))
    return bool(checks) and all(checks)


#: The first line of a file an importer wrote in JSON syntax (``harness.importers.output.HEADER``): one top-level
#: field per line at one space of indent, every element of a list at two, so `` "id": ...`` is the top-level id.
_IMPORTED_JSON = "# Written by `recall-eval import` in JSON syntax"


_TOP_JSON_ID_LINE = '\n "id": '


_TOP_JSON_ID = re.compile(r' "id": "([A-Za-z0-9][A-Za-z0-9._:-]*)",?$', re.MULTILINE)


def imported_json_ids(text: str) -> list[str]:
    """The top-level ids of an importer's JSON-syntax file: a substring count, not a regex over every line (~1 ms a MB)."""
    if text.count(_TOP_JSON_ID_LINE) != 1:
        return []
    match = _TOP_JSON_ID.match(text, text.index(_TOP_JSON_ID_LINE) + 1)
    return [match.group(1)] if match is not None else []


def ruled_out(text: str, selection: Selection) -> bool:
    """True when the file's text alone shows that nothing in it can be selected, so it need not be parsed.

    Only for selections by id: a file with exactly one top-level ``id: <plain
    id>`` line holds that story, or that conversation's probes ``<id>/...``;
    when no glob can match either, parsing is skipped (a 100 kB conversation
    costs about 0.1 s to parse). A file an importer wrote in JSON syntax is
    read the same way from its one-space-indented `` "id": ...`` line (a
    LongMemEval S question is ~1.3 MB: 0.15 s to parse, 500 of them for a
    ``run --filter`` of one). Anything less certain is parsed.
    """
    if not selection.ids or selection.categories or selection.tags:
        return False
    found = imported_json_ids(text) if text.startswith(_IMPORTED_JSON) else _TOP_ID.findall(text)
    if len(found) != 1:
        return False
    ident = found[0]
    return not selection.matches(ident, None, []) and not any(may_match_probe(ident, glob) for glob in selection.ids)


def may_match_probe(conversation: str, glob: str) -> bool:
    """Whether ``glob`` may match some ``<conversation>/<probe>`` id (conservatively True when unsure)."""
    if "[" in glob:
        return True
    if "/" not in glob:  # only a wildcard can stand for the '/', after a literal start the id must begin with
        literal = re.split(r"[*?]", glob, maxsplit=1)
        return len(literal) > 1 and (conversation + "/").startswith(literal[0])
    if glob.count("/") > 1:
        return False  # a scenario id holds one '/'
    return fnmatch.fnmatchcase(conversation, glob.split("/", 1)[0])  # the glob's '/' is the id's '/'
