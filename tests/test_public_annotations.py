"""The public API of each stage is fully annotated (issue 48): every function and public method that ``memory_tools``
and each ``harness`` stage package export names the type of each parameter and of what it returns.

mypy (tests/test_types.py) checks the annotations that are there; under harness's default settings it does not ask
for them, so this test does, for what other stages and plug-ins call.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import harness

OURS = ("harness", "memory_tools")


def stage_packages() -> list[str]:
    """``memory_tools`` and each package directly under ``harness`` (the stages)."""
    return ["memory_tools", *(f"harness.{m.name}" for m in pkgutil.iter_modules(harness.__path__) if m.ispkg)]


def exported(package: str) -> Iterator[tuple[str, Any]]:
    """What a package exports: its ``__all__``, else its public names; only objects defined in our code."""
    module = importlib.import_module(package)
    names = getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]
    for name in names:
        value = getattr(module, name, None)
        if str(getattr(value, "__module__", "")).startswith(OURS) and (inspect.isfunction(value) or inspect.isclass(value)):
            yield f"{package}.{name}", value


def missing(function: Callable[..., Any], name: str, *, method: bool) -> list[str]:
    """The parameters (and the return) of ``function`` without an annotation, named for the failure message."""
    signature = inspect.signature(function)
    gaps = [f"{name}({p.name})" for i, p in enumerate(signature.parameters.values())
            if p.annotation is inspect.Parameter.empty and not (method and i == 0)]
    if signature.return_annotation is inspect.Signature.empty:
        gaps.append(f"{name} -> ?")
    return gaps


def public_callables(name: str, value: Any) -> Iterator[tuple[str, Callable[..., Any], bool]]:
    """A function itself; a class's own public methods and ``__init__`` written in our code (a Protocol's generated
    ``__init__`` and a dataclass field whose default is a library function are not)."""
    if inspect.isfunction(value):
        yield name, value, False
        return
    for attribute, member in vars(value).items():
        function = member.__func__ if isinstance(member, (staticmethod, classmethod)) else member
        if (attribute.startswith("_") and attribute != "__init__") or not inspect.isfunction(function):
            continue
        if str(function.__module__).startswith(OURS):
            yield f"{name}.{attribute}", function, not isinstance(member, staticmethod)


def unannotated(packages: list[str]) -> list[str]:
    return [gap for package in packages for name, value in exported(package)
            for label, function, method in public_callables(name, value) for gap in missing(function, label, method=method)]


def test_every_stages_public_functions_and_methods_are_fully_annotated() -> None:
    assert unannotated(stage_packages()) == []


def test_an_unannotated_parameter_or_return_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Planted: a package exporting a function without annotations and a class with an unannotated method (its
    name begins with ``harness``, so it counts as ours)."""
    package = tmp_path / "harness_planted"
    package.mkdir()
    (package / "__init__.py").write_text(
        "__all__ = ['f', 'C', 'g']\n"
        "def f(a, b: int):\n    return b\n"
        "def g(a: int) -> int:\n    return a\n"
        "class C:\n    def m(self, x: int):\n        return x\n    def _private(self, y):\n        return y\n",
        encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert unannotated(["harness_planted"]) == ["harness_planted.f(a)", "harness_planted.f -> ?", "harness_planted.C.m -> ?"]
