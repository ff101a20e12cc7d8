"""The suites that ship with recall-eval (``scenarios/starter``, ``smoke``, ``acceptance``), found from any folder.

The checkout's ``scenarios/`` folder is the one copy in git; a wheel carries
it as the data package ``harness.suites`` (``setup.py`` maps the folder, no
file is duplicated). A suite path a user gives or the default
(``scenarios/starter``) is used as written when it exists below the working
folder; when it does not and it names a shipped suite, the installed copy is
used instead, so ``recall-eval run`` works outside the checkout.

Example: from ``/tmp``, ``recall-eval list scenarios/smoke`` lists the smoke
suite inside the installed package.
"""

from __future__ import annotations

import argparse
from pathlib import Path, PurePosixPath

SHIPPED_FOLDER = "scenarios"
#: The suite whose folder marks a copy of ``scenarios/`` (every folder of it ships: pyproject's package-data).
MARKER_SUITE = "starter"
# The argparse destinations that hold suite paths: `validate`/`list`/`audit` PATH..., `run`/`report` --scenarios.
_PATH_ARGUMENTS = ("paths", "scenarios")


def shipped_root() -> Path | None:
    """The folder holding the shipped suites: the installed ``harness.suites`` package, else the checkout's ``scenarios/``."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("harness.suites")  # a data package: no __init__.py, one folder (or an editable mapping)
    except (ImportError, ValueError):
        spec = None
    for location in (spec.submodule_search_locations or []) if spec is not None else []:
        if (Path(location) / MARKER_SUITE).is_dir():
            return Path(location)
    checkout = Path(__file__).resolve().parents[2] / SHIPPED_FOLDER  # running from a source tree that is not installed
    return checkout if (checkout / MARKER_SUITE).is_dir() else None


def shipped_path(path: str) -> str:
    """``path`` itself when it exists (or is not a shipped suite's name); else the installed copy it names.

    Only ``scenarios`` and the paths below it that the installed copy holds
    are looked up: any other missing path stays as given, so its command
    reports it missing as before.
    """
    given = Path(path).expanduser()
    if given.is_absolute() or given.exists():
        return path
    parts = PurePosixPath(path.replace("\\", "/")).parts
    if not parts or parts[0] != SHIPPED_FOLDER or ".." in parts:
        return path
    root = shipped_root()
    if root is None:
        return path
    candidate = root.joinpath(*parts[1:])
    return str(candidate) if candidate.exists() else path


def use_shipped_suites(args: argparse.Namespace) -> argparse.Namespace:
    """Point every suite path of the parsed command line that is missing here at the shipped copy it names."""
    for name in _PATH_ARGUMENTS:
        value = getattr(args, name, None)
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            setattr(args, name, [shipped_path(item) for item in value])
    return args
