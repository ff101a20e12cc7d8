"""Finding, reading and validating scenario files.

A suite is a folder of ``*.yaml``/``*.yml`` files searched recursively. A
file holds one story (one scenario), or a conversation whose ``probes:``
each become a scenario ``<conversation>/<probe>``
(:mod:`harness.scenarios.conversation`); a folder holding
``_conversation.yaml`` is one conversation whose probes are spread over the
``*.yaml`` files beside it. A ``_defaults.yaml`` in a folder is deep-merged
under every scenario in that folder and below, up to the suite root named on
the command line (never above it): the nearest folder's defaults win over
outer ones, mappings merge key by key, and a list or scalar in the scenario
replaces the default. Files whose name starts with ``_`` are never
scenarios.

A selection (ids, categories, tags) is applied to what the files say before
anything is validated: a file or probe not selected is parsed, never checked
(``validate`` selects everything). Loading collects every problem of every
selected file (YAML syntax, schema, cross-field checks, duplicate ids)
before raising one :class:`ScenarioError`, each problem placed at its file
and line.

Example:
    >>> scenarios = load_scenarios(["scenarios/smoke"], categories=["preference"])
"""

from __future__ import annotations

import concurrent.futures
import concurrent.futures.process
import functools
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from harness.bulk_allocation import bulk_allocation
from harness.defaults import worker_context
from harness.scenarios import limits
from harness.scenarios.conversation import (
    PROBE_FILE_KEYS,
    PROBES_KEY,
    ProbeSource,
    entry_identity,
    load_conversation,
    probe_entries,
    shared_data,
)
from harness.scenarios.discovery import CONVERSATION_FILE, DEFAULTS_FILE, discover_files, resolved_folder
from harness.scenarios.documents import Document, display_path, parse_document, read_text
from harness.scenarios.locating import locate, merge_defaults, schema_findings
from harness.scenarios.models import Category, Scenario
from harness.scenarios.problems import Finding, Problem, ScenarioError, format_value
from harness.scenarios.quotes import quote_problems
from harness.scenarios.selection import EVERYTHING, Selection, names_selected, ruled_out
from harness.scenarios.shelf import ScenarioShelf
from harness.scenarios.validation import check_partial, check_scenario


@dataclass
class SuiteLoad:
    """Everything :func:`load_suite` found: what loaded, and what is wrong.

    Attributes:
        files: Scenario files read, sorted.
        scenarios: Scenarios that passed every check, sorted by id.
        paths: Scenario id -> the file it came from.
        problems: Errors and warnings, sorted by file and line.
        skipped: Files not selected, or unreadable while a selection was active (never validated).
        passed: Scenarios that passed every check (``len(scenarios)``, also when they were not kept).
    """

    files: list[Path] = field(default_factory=list)
    scenarios: list[Scenario] = field(default_factory=list)
    paths: dict[str, Path] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    skipped: int = 0
    passed: int = 0

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]


@functools.cache
def _defaults_for(folder: Path, root: Path) -> tuple[tuple[Document, ...], tuple[Problem, ...]]:
    """The ``_defaults.yaml`` documents that apply in ``folder``, outermost first.

    Defaults are looked up from the folder upwards to ``root``, the suite root
    named on the command line (included), never above it.
    """
    parent_docs: tuple[Document, ...] = ()
    parent_problems: tuple[Problem, ...] = ()
    if folder != root and folder.parent != folder and root in folder.parents:
        parent_docs, parent_problems = _defaults_for(folder.parent, root)
    path = folder / DEFAULTS_FILE
    if not path.is_file():
        return parent_docs, parent_problems
    path = display_path(path)
    document, problems = parse_document(path)
    if document is not None and document.data is not None and not isinstance(document.data, dict):
        problems.append(Problem(str(path), 1, "", f"defaults must be a mapping, not a {type(document.data).__name__}"))
        document = None
    docs = parent_docs + ((document,) if document is not None and document.data is not None else ())
    return docs, parent_problems + tuple(problems)


def _defaults(folder: Path, root: Path) -> tuple[tuple[Document, ...], tuple[Problem, ...]]:
    return _defaults_for(resolved_folder(folder), resolved_folder(root))


@dataclass
class _Loaded:
    """What one file or conversation gave: scenarios with their file, id line and whether they passed, and problems."""

    scenarios: list[tuple[Scenario, Path, Callable[[], int | None], bool]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    skipped: bool = False


def _too_many_items(document: Document) -> Problem | None:
    """A file holding more ``items`` than :func:`limits.max_items`, refused before any of them is validated."""
    items = document.data.get("items") if isinstance(document.data, dict) else None
    if not isinstance(items, list):
        return None
    try:
        limit = limits.max_items()
    except limits.LimitSettingError as exc:
        return Problem(str(document.path), None, "", f"cannot check the item count: {exc}")
    if len(items) <= limit:
        return None
    return Problem(str(document.path), None, "items", f"{len(items):,} items is over the limit of {limit:,} for one "
                   f"scenario file; refused before validation (split it, or raise {limits.MAX_ITEMS_ENV})")


def _unreadable(problems: list[Problem], selection: Selection, path: Path, text: str | None) -> _Loaded:
    """A file whose scenario ids cannot be read: its errors, or (a selection active) a skip noted as warnings.

    A file the selection names all the same (:func:`names_selected`: its
    top-level ``id:`` line or its name matches an id glob, or its
    ``category:`` line a category) keeps its errors: a run of what was asked
    for must not quietly lose part of it.
    """
    if not selection.active or names_selected(selection, path, text):
        return _Loaded(problems=problems)
    note = " (skipped: a filter is active and this file cannot be read; `recall-eval validate` checks it)"
    return _Loaded(problems=[Problem(p.file, p.line, p.field, p.message + note, p.value, "warning") for p in problems], skipped=True)


def _load_file(path: Path, root: Path, selection: Selection) -> _Loaded:
    """Read one file (a story or a conversation), select, merge and check it."""
    text, problems = read_text(path)
    if text is None:
        return _unreadable(problems, selection, path, None)
    if ruled_out(text, selection):
        return _Loaded(skipped=True)
    document, problems = parse_document(path, text)
    if document is None:
        return _unreadable(problems, selection, path, text)
    if not isinstance(document.data, dict):
        kind = "an empty file" if document.data is None else f"a {type(document.data).__name__}"
        return _unreadable([*problems, Problem(str(path), 1, "", f"a scenario file must hold one mapping, not {kind}")], selection, path, text)
    if (too_many := _too_many_items(document)) is not None:
        return _unreadable([too_many], selection, path, text)
    if quoting := quote_problems(document):
        return _unreadable(quoting, selection, path, text)
    defaults, default_problems = _defaults(path.parent, root)
    if PROBES_KEY in document.data:
        return _load_conversation_parts(document, [document], defaults, [*problems, *default_problems], selection)
    data = document.data
    for default in reversed(defaults):
        data = merge_defaults(default.data, data)
    if not selection.matches(data.get("id"), data.get("category"), data.get("tags")):
        return _Loaded(skipped=True)
    problems.extend(default_problems)
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        findings = schema_findings(exc.errors(include_url=False))
        findings.extend(check_partial(data))  # one pass: the cross-field checks still run on what parsed
        problems.extend(locate(finding, document, defaults) for finding in findings)
        return _Loaded(problems=problems)
    findings = check_scenario(scenario)
    if "/" in scenario.id:
        findings.append(Finding(("id",), "'/' separates a conversation id from a probe id: a one-story file's id takes none", scenario.id))
    problems.extend(locate(finding, document, defaults) for finding in findings)
    passed = not any(p.severity == "error" for p in problems)
    return _Loaded([(scenario, path, document.line_getter(("id",)), passed)], problems)


def _load_folder(folder: Path, files: list[Path], root: Path, selection: Selection) -> _Loaded:
    """A conversation folder: ``_conversation.yaml`` (the shared part) and probe files each holding ``probes:``."""
    shared_path = display_path(folder / CONVERSATION_FILE)
    text, problems = read_text(shared_path)
    if text is None:
        return _unreadable(problems, selection, shared_path, None)
    if ruled_out(text, selection):
        return _Loaded(skipped=True)
    shared, problems = parse_document(shared_path, text)
    if shared is None:
        return _unreadable(problems, selection, shared_path, text)
    if not isinstance(shared.data, dict):
        kind = "an empty file" if shared.data is None else f"a {type(shared.data).__name__}"
        return _unreadable([*problems, Problem(str(shared_path), 1, "", "a conversation must be one mapping, not "
                                                                        f"{kind}")], selection, shared_path, text)
    if (too_many := _too_many_items(shared)) is not None:
        return _unreadable([too_many], selection, shared_path, text)
    if quoting := quote_problems(shared):
        return _unreadable(quoting, selection, shared_path, text)
    documents = [shared] if PROBES_KEY in shared.data else []
    for path in files:
        document, file_problems = parse_document(path)
        if document is None:
            problems.extend(file_problems)
            continue
        problems.extend(file_problems)
        if not isinstance(document.data, dict) or PROBES_KEY not in document.data:
            problems.append(Problem(str(path), 1, "", f"a file beside {CONVERSATION_FILE} holds `probes:` (a list of this conversation's probes)"))
            continue
        for key in document.data:
            if key not in PROBE_FILE_KEYS:
                line, _ = document.line_of((key,))
                problems.append(Problem(str(path), line, key, f"belongs in {CONVERSATION_FILE}: a probe file holds only `probes:`"))
        documents.append(document)
    defaults, default_problems = _defaults(folder, root)
    return _load_conversation_parts(shared, documents, defaults, [*problems, *default_problems], selection)


def _load_conversation_parts(
    shared: Document, documents: list[Document], defaults: Sequence[Document], problems: list[Problem], selection: Selection
) -> _Loaded:
    entries: list[ProbeSource] = []
    for document in documents:
        found, entry_problems = probe_entries(document)
        entries.extend(found)
        problems.extend(entry_problems)
    identity = shared_data(shared, defaults)
    chosen = {id(entry) for entry in entries if selection.matches(*entry_identity(entry, identity))}
    if selection.active and not chosen:
        return _Loaded(skipped=True)
    loaded = load_conversation(shared, entries, defaults, lambda entry: id(entry) in chosen)
    passed = not any(p.severity == "error" for p in problems)  # the probes' own errors already kept them out
    kept = [(scenario, source.document.path, line, passed) for scenario, source, line in loaded.scenarios]
    return _Loaded(kept, [*problems, *loaded.problems])


# One unit of loading: a story or conversation file (members None), or a conversation folder and its probe files;
# with the suite root of either.
_Unit = tuple[Path, "list[Path] | None", Path]

# Below this many bytes of scenario files, ``validate`` stays in one process: starting workers would cost more
# than it saves (the starter suite is ~0.5 MB; a LongMemEval S suite ~700 MB).
WORKER_MIN_BYTES = 8_000_000


def _load_unit(unit: _Unit, selection: Selection) -> _Loaded:
    path, members, root = unit
    with bulk_allocation():  # a file's models are hundreds of thousands of objects, kept: fewer collections
        return _load_file(path, root, selection) if members is None else _load_folder(path, members, root, selection)


@dataclass(frozen=True, slots=True)
class _Checked:
    """What a worker hands back of a scenario it checked: only its id (``validate`` keeps no scenario)."""

    id: str


def _load_unit_light(unit: _Unit, selection: Selection) -> _Loaded:
    """:func:`_load_unit` in a worker: each scenario reduced to its id before it is sent back."""
    loaded = _load_unit(unit, selection)
    loaded.scenarios = [(_Checked(scenario.id), path, line, passed) for scenario, path, line, passed in loaded.scenarios]  # type: ignore[misc]
    return loaded


def _total_bytes(files: Iterable[Path]) -> int:
    total = 0
    for path in files:
        try:
            total += path.stat().st_size
        except OSError:  # unreadable: its problem is reported when it is read
            continue
    return total


def _loads_in_workers(units: list[_Unit], selection: Selection, jobs: int) -> Iterator[_Loaded]:
    """Each unit's :func:`_load_unit_light`, in ``jobs`` worker processes, in the order of ``units``.

    The order is what makes the result the same as one process's: the first
    file to use an id keeps it, and the later ones are its duplicates. If a
    worker dies (killed, out of memory), the units it had not answered are
    checked in this process instead, after a warning: nothing goes unchecked.
    """
    done = 0
    try:
        with concurrent.futures.ProcessPoolExecutor(max_workers=min(jobs, len(units)), mp_context=worker_context()) as pool:
            for loaded in pool.map(functools.partial(_load_unit_light, selection=selection), units):
                done += 1
                yield loaded
    except concurrent.futures.process.BrokenProcessPool as exc:
        print(f"recall-eval: a validation worker stopped ({exc}); checking the other {len(units) - done} files here",
              file=sys.stderr)
        yield from (_load_unit(unit, selection) for unit in units[done:])


def load_suite(paths: Sequence[str | Path], selection: Selection = EVERYTHING, *, keep: bool = True, jobs: int = 1,
               shelf: ScenarioShelf | None = None) -> SuiteLoad:
    """Load the scenarios under ``paths`` that ``selection`` names and collect every problem; never raises for bad input.

    Files and probes the selection leaves out are parsed (to read their ids)
    but never validated, so a broken file elsewhere in the suite does not
    stop a filtered run; with the default selection everything is checked.
    ``keep=False`` (``validate``) checks each file and lets it go before the
    next is read, so memory holds one file, not the suite (a LongMemEval S
    suite is 500 files of ~1 MB, ~6 MB each once loaded): ``scenarios`` and
    ``paths`` stay empty, ``passed`` counts. With ``keep=False`` and
    ``jobs`` > 1, a suite of at least :data:`WORKER_MIN_BYTES` is checked by
    that many worker processes, each file in one of them (:func:`_loads_in_workers`);
    the problems, counts and duplicate ids are the same as in one process.
    With a ``shelf``, the scenarios kept go onto it file by file, packed
    (:mod:`harness.scenarios.shelf`), and ``scenarios`` stays empty: the suite is never held unpacked.
    """
    _defaults_for.cache_clear()
    resolved_folder.cache_clear()
    files, problems = discover_files(paths)
    suite = SuiteLoad(files=list(files))
    folders: dict[Path, list[Path]] = {}
    units: list[_Unit] = []
    for path, root in files.items():
        if (path.parent / CONVERSATION_FILE).is_file():
            folders.setdefault(path.parent, []).append(path)
        else:
            units.append((path, None, root))
    units += [(folder, members, files[members[0]]) for folder, members in folders.items()]
    if not keep and jobs > 1 and len(units) > 1 and _total_bytes(files) >= WORKER_MIN_BYTES:
        loads: Iterable[_Loaded] = _loads_in_workers(units, selection, jobs)
    else:  # one file at a time: what is not kept is gone before the next is read
        loads = (_load_unit(unit, selection) for unit in units)
    seen_problems: set[Problem] = set()
    first_seen: dict[str, tuple[Path, Callable[[], int | None]]] = {}
    for loaded in loads:
        shelved: list[Scenario] = []
        suite.skipped += loaded.skipped
        for problem in loaded.problems:  # defaults problems repeat for every file below them
            if problem not in seen_problems:
                seen_problems.add(problem)
                problems.append(problem)
        for scenario, path, id_line, passed in loaded.scenarios:
            if scenario.id in first_seen:
                other, other_id_line = first_seen[scenario.id]
                other_line = other_id_line()
                where = f"{other}:{other_line}" if other_line else str(other)
                problems.append(Problem(str(path), id_line(), "id", f"duplicate scenario id: {where} uses it too", format_value(scenario.id)))
                continue
            # id_line holds no document (a JSON-syntax file's re-reads the file, only if a duplicate asks), so
            # ``keep=False`` keeps it unasked: asking every file's id line cost a re-read, digest and scan each
            first_seen[scenario.id] = (path, id_line)
            if passed:
                suite.passed += 1
                if keep:
                    (shelved if shelf is not None else suite.scenarios).append(scenario)
                    suite.paths[scenario.id] = path
        if shelf is not None:
            shelf.add(shelved)
        loaded = scenario = shelved = None  # type: ignore[assignment]  # not kept: free before the next file is read
    suite.scenarios.sort(key=lambda s: s.id)
    if shelf is not None:
        shelf.seal()
    suite.problems = sorted(problems, key=Problem.sort_key)
    return suite


def _filter_problems(categories: Iterable[str], scenarios: Iterable[Scenario] = ()) -> list[Problem]:
    """A ``--category`` naming no built-in category, none a loaded suite declares and none a scenario uses."""
    known = {c.value for c in Category}
    for scenario in scenarios:
        known.add(scenario.category)
        known.update(scenario.categories)
    return [
        Problem("--category", None, "", f"unknown category; choose from {', '.join(sorted(known))}", format_value(c))
        for c in categories
        if c not in known
    ]


def select(scenarios: Iterable[Scenario], *, ids: Sequence[str] = (), categories: Sequence[str] = (), tags: Sequence[str] = ()) -> list[Scenario]:
    """Scenarios matching any id glob, any category and any tag (an empty filter matches all)."""
    selection = Selection(tuple(ids), tuple(categories), tuple(tags))
    return [s for s in scenarios if selection.matches(s.id, s.category, s.tags)]


def load_scenarios(
    paths: Sequence[str | Path],
    *,
    ids: Sequence[str] = (),
    categories: Sequence[str] = (),
    tags: Sequence[str] = (),
) -> list[Scenario]:
    """Load and check the scenarios under ``paths`` matching the filters, sorted by id.

    Files and probes the filters leave out are never validated (see :func:`load_suite`).

    Args:
        paths: Scenario files or suite folders (one path alone, str or Path, is one path).
        ids: fnmatch globs on scenario ids (any may match).
        categories: Category names (any may match).
        tags: Tags (a scenario matches when it has any of them).

    Raises:
        ScenarioError: with every error of every file (warnings alone never raise).
    """
    selection = Selection(tuple(ids), tuple(categories), tuple(tags))
    suite = load_suite(paths, selection)
    errors = suite.errors
    if categories and not suite.scenarios:
        errors += _filter_problems(categories, load_suite(paths).scenarios if not errors else [])
    if errors:
        raise ScenarioError(errors)
    return select(suite.scenarios, ids=ids, categories=categories, tags=tags)


def load_scenario_shelf(
    paths: Sequence[str | Path],
    *,
    ids: Sequence[str] = (),
    categories: Sequence[str] = (),
    tags: Sequence[str] = (),
) -> ScenarioShelf:
    """:func:`load_scenarios` onto a :class:`ScenarioShelf`, file by file: a run or a report never holds the suite unpacked.

    Raises:
        ScenarioError: with every error of every file (warnings alone never raise).
    """
    selection = Selection(tuple(ids), tuple(categories), tuple(tags))
    shelf = ScenarioShelf()
    suite = load_suite(paths, selection, shelf=shelf)
    errors = suite.errors
    if categories and not len(shelf):
        errors += _filter_problems(categories, load_suite(paths).scenarios if not errors else [])
    if errors:
        raise ScenarioError(errors)
    if not selection.active:
        return shelf
    chosen = [f.id for f in shelf.all_facts() if selection.matches(f.id, f.category, f.tags)]
    return shelf if len(chosen) == len(shelf) else shelf.subset(chosen)
