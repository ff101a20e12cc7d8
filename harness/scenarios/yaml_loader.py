"""The YAML loader every suite file is parsed with: PyYAML's safe loader, faster tag resolution, no crash on a bad date.

Two departures from ``yaml.CSafeLoader``, each exact where it matters:

- tag resolution skips the resolvers the safe loader never registers (a
  LoCoMo-sized file holds ~160,000 scalars; this is a tenth of loading it);
- a plain scalar that looks like a timestamp but is not a real date
  (``started_at: 2026-02-30T09:00:00Z``) stays the text it was written as.
  PyYAML raises ``ValueError: day is out of range for month`` from inside
  its constructor, a traceback for a typo; as text the value reaches the
  scenario's validation and gets the same ``file:line`` message as the
  quoted form.
"""

from __future__ import annotations

import datetime
from typing import Any

import yaml

_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"


class _FastResolveLoader(_BaseLoader):  # type: ignore[misc,valid-type]
    """The safe loader with PyYAML's tag resolution for plain scalars, minus the work it does for nothing here.

    libyaml's composer asks Python for the tag of every node; PyYAML's
    resolver also consults path resolvers and wildcard implicit resolvers,
    which the safe loader never registers (checked below), so only the
    implicit resolvers keyed by a scalar's first character can apply. Same
    tags as PyYAML's (a test compares them).
    """

    def resolve(self, kind: type[yaml.Node], value: Any, implicit: tuple[bool, bool]) -> str:
        if kind is yaml.ScalarNode:
            if implicit[0]:
                for tag, regexp in self.yaml_implicit_resolvers.get(value[:1], ()):
                    if regexp.match(value):
                        return tag
            return self.DEFAULT_SCALAR_TAG
        return self.DEFAULT_SEQUENCE_TAG if kind is yaml.SequenceNode else self.DEFAULT_MAPPING_TAG

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        return None

    def ascend_resolver(self) -> None:
        return None


# The shortcuts above are exact while no path resolver and no wildcard (None) implicit resolver is registered.
_Resolving = (_FastResolveLoader if not _BaseLoader.yaml_path_resolvers and None not in _BaseLoader.yaml_implicit_resolvers
              else _BaseLoader)


def timestamp_or_text(loader: Any, node: yaml.ScalarNode) -> datetime.date | datetime.datetime | str:
    """PyYAML's timestamp, or the scalar's own text when it names no real date or time (Feb 30, hour 25).

    Example: ``2026-03-02T10:00:00Z`` is a datetime as before;
    ``2026-02-30T09:00:00Z`` is the string ``'2026-02-30T09:00:00Z'``, which a
    timestamp field then refuses with the file and line.
    """
    try:
        return yaml.SafeLoader.construct_yaml_timestamp(loader, node)
    except (ValueError, OverflowError):
        return str(node.value)


class Loader(_Resolving):  # type: ignore[misc,valid-type]
    """The loader of scenario files (see the module docstring); its own class, so PyYAML's stays as it is."""


Loader.add_constructor(TIMESTAMP_TAG, timestamp_or_text)
