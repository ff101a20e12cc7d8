"""Reading the command line without punishing a typo: no abbreviations, a did-you-mean, one model per ``--model``.

argparse would take ``--max-conc 4`` as ``--max-concurrency`` (an
abbreviation that silently changes meaning when a flag is added) and answer
an unknown flag of a command with the top-level usage. Here abbreviations
are off, and an unknown flag gets the command's own usage and the closest
flag it has (``--max-conections``: did you mean ``--max-connections``?),
exit 2 as every wrong flag.
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Iterator, Sequence


def model_value(text: str) -> str:
    """An argparse type: one litellm model string. A comma is refused: litellm names have none, and ``--model a,b``
    would be one model that fails only at call time, leaving a run folder of error records."""
    name = text.strip()
    if not name:
        raise argparse.ArgumentTypeError("empty model name; give a litellm model string such as openai/gpt-4o-mini")
    if "," in name:
        parts = [part.strip() for part in name.split(",") if part.strip()]
        again = " ".join(f"--model {part}" for part in parts) or "--model NAME"
        raise argparse.ArgumentTypeError(f"{text!r} holds a comma: one model per --model; to run several give the flag "
                                         f"once per model: {again}")
    return name


def _parsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """``parser`` and every command parser below it."""
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                yield from _parsers(child)


def without_abbreviations(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Turn argparse's prefix matching off everywhere (``--max-conc`` is no flag; a did-you-mean names the right one)."""
    for each in _parsers(parser):
        each.allow_abbrev = False
    return parser


def _command_parser(parser: argparse.ArgumentParser, command: str | None) -> argparse.ArgumentParser:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and command in action.choices:
            return action.choices[command]
    return parser


def suggestion(flag: str, parser: argparse.ArgumentParser) -> str | None:
    """The flag of ``parser`` closest to the unknown ``flag`` (``--max-conections=4`` -> ``--max-connections``), if any is close."""
    name = flag.split("=", 1)[0]
    known = [option for action in parser._actions for option in action.option_strings if option.startswith("--")]
    if len(name) > 3 and (longer := [option for option in known if option.startswith(name)]):
        return longer[0]  # what argparse's abbreviation would have meant, said rather than guessed
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return close[0] if close else None


def parse_command_line(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """``parser.parse_args(argv)``, except that an unknown argument is reported by its command's parser, with the
    closest flag it has; exits 2 (argparse's own exit for a wrong flag)."""
    args, extras = parser.parse_known_args(argv)
    if not extras:
        return args
    command = _command_parser(parser, getattr(args, "command", None))
    unknown = extras[0]
    if unknown.startswith("-"):
        close = suggestion(unknown, command)
        hint = f"; did you mean {close}?" if close else f"; `{command.prog} --help` lists the flags"
        command.error(f"unrecognized argument {unknown}{hint}")
    command.error(f"unrecognized arguments: {' '.join(extras)}")
    raise AssertionError("unreachable: argparse's error() exits")
