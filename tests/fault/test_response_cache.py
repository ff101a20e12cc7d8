"""Faults of the on-disk response cache that a run survives: it logs them and goes on without the cache."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.run.cache import CachedResponse, ResponseCache, cache_key

KEY = cache_key(model="m", messages=[{"role": "user", "content": "hi"}], tools=[], parameters={}, epoch=0)
ENTRY = CachedResponse(message={"role": "assistant", "content": "héllo ☕"}, prompt_tokens=3, completion_tokens=1)


def test_a_failed_cache_write_is_logged_with_the_path_and_error_and_leaves_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A cache write that fails (disk full at the rename) is logged with the file and the error, never raised, and leaves no temp file."""
    cache = ResponseCache(tmp_path)

    def disk_full(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", disk_full)
    with caplog.at_level(logging.WARNING, logger="harness.run.cache"):
        cache.put(KEY, ENTRY)
    assert caplog.records[-1].getMessage() == (
        f"response cache: cannot write {cache.path(KEY)} ([Errno 28] No space left on device)")
    assert list(cache.path(KEY).parent.iterdir()) == []
    monkeypatch.undo()
    assert cache.get(KEY) is None


def test_a_cache_directory_that_cannot_be_created_is_logged_not_raised(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A cache folder blocked by a plain file is logged as a failed write and the run goes on uncached."""
    blocker = tmp_path / "cache"
    blocker.write_text("not a folder", encoding="utf-8")
    cache = ResponseCache(blocker)
    with caplog.at_level(logging.WARNING, logger="harness.run.cache"):
        cache.put(KEY, ENTRY)
        assert cache.get(KEY) is None
    assert f"cannot write {cache.path(KEY)}" in caplog.text
    assert blocker.read_text(encoding="utf-8") == "not a folder"


def test_an_unreadable_cache_entry_is_a_logged_miss(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """An entry that cannot be read (here a folder in its place) is logged with its path and treated as a miss."""
    cache = ResponseCache(tmp_path)
    cache.path(KEY).mkdir(parents=True)
    with caplog.at_level(logging.WARNING, logger="harness.run.cache"):
        assert cache.get(KEY) is None
    assert caplog.records[-1].getMessage() == (
        f"response cache: cannot read {cache.path(KEY)} ([Errno 21] Is a directory: '{cache.path(KEY)}'); ignoring it")


def test_a_corrupt_cache_entry_is_logged_with_its_path_and_error_kind(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A torn or hand-edited entry is logged by path and error kind, treated as a miss and overwritten by the next put."""
    cache = ResponseCache(tmp_path)
    cache.path(KEY).parent.mkdir(parents=True)
    cache.path(KEY).write_text('{"message": 5}', encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="harness.run.cache"):
        assert cache.get(KEY) is None
    assert caplog.records[-1].getMessage() == (
        f"response cache: corrupt entry {cache.path(KEY)} (ValidationError); ignoring and overwriting it")
    cache.put(KEY, ENTRY)
    assert cache.get(KEY) == ENTRY


def test_an_entry_without_its_optional_fields_replays_with_empty_defaults(tmp_path: Path) -> None:
    """An entry holding only the message (an older or hand-written one) replays with no usage, no cost and zero latency."""
    cache = ResponseCache(tmp_path)
    cache.path(KEY).parent.mkdir(parents=True)
    cache.path(KEY).write_text('{"message": {"role": "assistant", "content": "hi"}, "extra": 1}', encoding="utf-8")
    entry = cache.get(KEY)
    assert entry is not None and entry.message["content"] == "hi"
    assert (entry.prompt_tokens, entry.completion_tokens, entry.finish_reason, entry.latency_s, entry.cost_usd,
            entry.format_version) == (None, None, None, 0.0, None, 1)


def test_an_entry_of_another_format_version_is_a_miss(tmp_path: Path) -> None:
    """An entry written by another cache format is ignored (a miss), not replayed."""
    cache = ResponseCache(tmp_path)
    cache.put(KEY, ENTRY.model_copy(update={"format_version": 0}))
    assert cache.path(KEY).exists() and cache.get(KEY) is None


def test_a_cache_entry_round_trips_non_ascii_text_as_utf8(tmp_path: Path) -> None:
    """An entry with non-ASCII text is stored as UTF-8 and replayed unchanged."""
    cache = ResponseCache(tmp_path)
    cache.put(KEY, ENTRY)
    assert "héllo ☕" in cache.path(KEY).read_bytes().decode("utf-8")
    assert cache.get(KEY) == ENTRY


_ROUND_TRIP = r"""
import sys
from harness.run.cache import CachedResponse, ResponseCache
cache = ResponseCache(sys.argv[1])
entry = CachedResponse(message={"role": "assistant", "content": "h\u00e9llo \u2615"})
cache.put("ab12", entry)
assert cache.get("ab12") == entry, cache.get("ab12")
sys.stdout.buffer.write(cache.path("ab12").read_bytes())
"""


def test_the_cache_round_trips_non_ascii_text_under_a_c_locale(tmp_path: Path) -> None:
    """Under a C (ASCII) locale, as on many CI machines, entries with non-ASCII text are still written and read as UTF-8."""
    import harness

    env = {**os.environ, "LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0",
           "PYTHONPATH": str(Path(harness.__file__).resolve().parent.parent)}
    done = subprocess.run([sys.executable, "-c", _ROUND_TRIP, str(tmp_path)], env=env, capture_output=True,
                          text=True, encoding="utf-8", timeout=120)
    assert done.returncode == 0, done.stderr
    assert "héllo ☕" in done.stdout


@pytest.mark.skipif(bool(sys.flags.utf8_mode), reason="in UTF-8 mode the locale cannot change the default encoding")
def test_the_cache_round_trips_non_ascii_text_with_an_ascii_ctype_in_this_process(tmp_path: Path) -> None:
    """The same fault in-process: LC_CTYPE switched to C makes the default text encoding ASCII here too.

    The subprocess test above is the real fault. This one exists because mutmut names its mutants with
    U+01C1, which a child process under a C locale cannot read from its environment, so it could not see
    that test catch ``read_text``/``write_text`` without ``encoding="utf-8"``.
    """
    import locale

    before = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")
    try:
        assert locale.getpreferredencoding(False).lower() in {"ascii", "ansi_x3.4-1968", "us-ascii"}
        cache = ResponseCache(tmp_path)
        cache.put(KEY, ENTRY)
        assert cache.get(KEY) == ENTRY
    finally:
        locale.setlocale(locale.LC_CTYPE, before)
    assert "héllo ☕" in cache.path(KEY).read_bytes().decode("utf-8")
