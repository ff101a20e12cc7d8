"""Gold answers as deterministic answer checks: normalized variants, list groups, salient words.

A benchmark's gold is a short free-text answer ("7 May 2023", "Sweden, Canada",
"2", "She wanted to help people who struggle"). Exact matching of the whole
gold would fail correct answers worded differently, so the check is built as:

- a short gold (a date, a number, or at most :data:`SHORT_WORDS` words):
  ``must_contain_any`` of the gold and its variants (dates in the usual
  orders, numbers as digits and words up to twenty);
- a list gold (comma or "and"-separated short parts; always tried for
  LoCoMo's multi-hop category): one ``must_contain_groups`` group per part,
  each with the part's variants, matched in any order;
- a longer gold: one group per date or number in it and per salient content
  word (the longest words that are not stop words, at most
  :data:`MAX_SALIENT`), so the answer must state the gold's key terms.

Very short golds ("No", "2") are matched word-bounded by the scorer, so "no"
is not found inside "know". Every check is an approximation of the gold: the
importers also write the gold as a rubric for a judge model, which scores
paraphrases properly, and LoCoMo's importer writes the published gold verbatim
as ``f1_reference`` (:func:`published_gold`: the papers' metrics score it).
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any

SHORT_WORDS = 4
MAX_SALIENT = 3

MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december"]
_MONTH_NUMBER = {name: i + 1 for i, name in enumerate(MONTHS)} | {name[:3]: i + 1 for i, name in enumerate(MONTHS)}
_MONTH_NUMBER["sept"] = 9
_MONTH_RE = "(?:" + "|".join(sorted(_MONTH_NUMBER, key=len, reverse=True)) + r")\.?"
"""A month's name or abbreviation (``Sept.``), never a word that only starts like one (``Mayor``, ``Marathon``)."""
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MONTH_RE}),?\s+(\d{{4}})\b", re.IGNORECASE)
_MONTH_DAY_YEAR = re.compile(rf"\b({_MONTH_RE})\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.IGNORECASE)
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_MONTH_YEAR = re.compile(rf"\b({_MONTH_RE}),?\s+(\d{{4}})\b", re.IGNORECASE)

NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
                "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"]
_NUMBER_OF_WORD = {word: i for i, word in enumerate(NUMBER_WORDS)}

STOP_WORDS = frozenset("""
a an the and or but if then than that this these those there their them they he she it its his her hers him
i me my mine we us our ours you your yours who whom whose which what when where why how is am are was were be
been being do does did done have has had having to of in on at by for with about from into onto over under
up down out off again further once here all any both each few more most other some such no nor not only own
same so too very can will just should would could may might must shall also as because while during before
after above below between through until against among per via yes ok okay like get got go went going one
really lot lots thing things something anything nothing everything much many well still even ever never
always often sometimes maybe perhaps just already yet since around near want wants wanted likely probably
feel feels felt
make makes made take takes took say says said think thinks thought know knows knew see sees saw use uses used
""".split())


def gold_text(value: Any) -> str:
    """The gold as text: numbers and lists written out, whitespace collapsed, a final full stop dropped.

    Callers that take golds from a file check :func:`unusable_gold` first: a
    dict (or a list holding one) has no text form a check could match.
    """
    if isinstance(value, list):
        value = ", ".join(gold_text(v) for v in value)
    text = " ".join(str(value).split()) if value is not None else ""
    return text[:-1].rstrip() if text.endswith(".") and not text.endswith("..") else text


def published_gold(value: Any) -> str:
    """The gold exactly as the benchmark's scorer reads it (LoCoMo's ``str(answer)``): for the papers' metrics.

    Nothing repaired: a trailing full stop, glued words and spacing stay as
    published, since the published procedure scores against them (``filmmaker.``
    gives BLEU-1 credit for an answer's final full stop). Our own checks use
    :func:`gold_text` and the importer's repairs instead. A list (not in
    LoCoMo) is joined as :func:`gold_text` joins it.

    Example:
        >>> published_gold("filmmaker."), published_gold(2022)
        ('filmmaker.', '2022')
    """
    return gold_text(value) if isinstance(value, list) else str(value)


def unusable_gold(value: Any) -> str | None:
    """Why ``value`` cannot be a gold answer (a dict, a boolean, a list holding one), or None when it can.

    Text and numbers are golds (``3`` -> ``"3"``); a list of them is a list
    gold. A dict would become the text ``"{'a': 1}"``, which no answer states.

    Example:
        >>> unusable_gold({"a": 1}), unusable_gold(3), unusable_gold(["7 days", "one week"])
        ('a dict', None, None)
    """
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, dict):
        return "a dict"
    if isinstance(value, list):
        return next((f"a list holding {why}" for v in value if (why := unusable_gold(v))), None)
    if value is None or isinstance(value, (str, int, float)):
        return None
    return f"a {type(value).__name__}"


_GLUED_DATE = re.compile(
    r"\b(\d{1,4})((?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?)(?=[\s,.;]|$)"
    r"|\b((?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?)(\d{1,4})\b",
    re.IGNORECASE,
)


def unglue_dates(text: str) -> str:
    """``15April, 2022`` -> ``15 April, 2022``; ``May2023`` -> ``May 2023``: a day or year glued to a month name.

    Only a real month name is split off (``2nd``, ``3pm``, ``mp3`` stay): the
    digit-letter boundary is safe to repair there, as no word glues a month to a number.

    Example:
        >>> unglue_dates("15April, 2022 and March2021; 2nd at 3pm")
        '15 April, 2022 and March 2021; 2nd at 3pm'
    """
    def split(match: re.Match[str]) -> str:
        if match[1]:
            return f"{match[1]} {match[2]}" if _is_month(match[2]) else match[0]
        return f"{match[3]} {match[4]}" if _is_month(match[3]) else match[0]

    return _GLUED_DATE.sub(split, text)


def _is_month(word: str) -> bool:
    key = word.lower().rstrip(".")
    return key in _MONTH_NUMBER or (len(key) >= 3 and any(m == key for m in MONTHS))


_ALSO_ACCEPTABLE = re.compile(
    r"^(.+?)\s*(?:\([^)]*\)\s*)?(?:is|are)\s+also\s+(?:acceptable|accepted|correct|fine|ok)\b\W*$", re.IGNORECASE)


def alternatives(gold: Any) -> list[str]:
    """A gold that names other acceptable answers, as its alternatives, the main answer first.

    LongMemEval writes ``30 days. 31 days (including the last day) is also
    acceptable.``: the check must accept either, not ask for every word of both.

    Example:
        >>> alternatives("30 days. 31 days (including the last day) is also acceptable.")
        ['30 days', '31 days']
        >>> alternatives("Lake Tahoe")
        ['Lake Tahoe']
    """
    text = gold_text(gold)
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z0-9$£€])", text) if s.strip()]
    main: list[str] = []
    more: list[str] = []
    for sentence in sentences:
        match = _ALSO_ACCEPTABLE.match(sentence)
        if match and main:
            more.append(gold_text(match[1]))
        else:
            main.append(sentence)
    if not more:
        return [text] if text else []
    return [gold_text(" ".join(main)), *[m for m in more if m]]


def _date_forms(day: int, month: int, year: int) -> list[str]:
    try:
        _dt.date(year, month, day)
    except ValueError:
        return []
    name = MONTHS[month - 1].capitalize()
    return [f"{day} {name} {year}", f"{name} {day}, {year}", f"{name} {day} {year}", f"{day} {name}, {year}",
            f"{year}-{month:02d}-{day:02d}"]


def _dates_in(text: str) -> list[tuple[str, list[str]]]:
    """Each date written in ``text`` (as written) with all its forms; month-year dates too."""
    found: list[tuple[str, list[str]]] = []
    taken: list[tuple[int, int]] = []
    for pattern, order in ((_DAY_MONTH_YEAR, "dmy"), (_MONTH_DAY_YEAR, "mdy"), (_ISO_DATE, "iso")):
        for match in pattern.finditer(text):
            if order == "dmy":
                day, month, year = int(match[1]), _MONTH_NUMBER.get(match[2].lower().rstrip(".")[:3]), int(match[3])
            elif order == "mdy":
                day, month, year = int(match[2]), _MONTH_NUMBER.get(match[1].lower().rstrip(".")[:3]), int(match[3])
            else:
                day, month, year = int(match[3]), int(match[2]), int(match[1])
            forms = _date_forms(day, month or 0, year) if month else []
            if forms:
                found.append((match[0], forms))
                taken.append(match.span())
    for match in _MONTH_YEAR.finditer(text):
        if any(start <= match.start() < end for start, end in taken):
            continue
        month = _MONTH_NUMBER.get(match[1].lower().rstrip(".")[:3])
        if month:
            name = MONTHS[month - 1].capitalize()
            found.append((match[0], [f"{name} {match[2]}", f"{name}, {match[2]}", f"{match[2]}-{month:02d}"]))
    return found


_GROUPED_NUMBER = re.compile(r"(?<![\d,])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\d,]\d)")
"""A number with thousands separators (``25,000``, ``1,240.5``): one number, never a list of two."""
_DATE_FILLER = frozenset("on in at around about approximately roughly circa the of during sometime".split())
"""Words that leave a date's meaning unchanged around it: ``on 9 April, 2023`` is answered by ``April 9, 2023``."""


DATE_OR_NUMBER_PATTERNS = (_DAY_MONTH_YEAR, _MONTH_DAY_YEAR, _MONTH_YEAR, _GROUPED_NUMBER)
"""What a comma may sit inside without separating list parts: a date (``9 April, 2023``) or a number (``25,000``)."""


def _protected_spans(text: str) -> list[tuple[int, int]]:
    """Where ``text`` holds a date or a grouped number, whose commas are not list separators."""
    return [m.span() for pattern in DATE_OR_NUMBER_PATTERNS for m in pattern.finditer(text)]


def _split_list(text: str) -> list[str]:
    """``text`` split at commas and semicolons, except inside a date (``9 April, 2023``) or a number (``25,000``)."""
    spans = _protected_spans(text)
    pieces: list[str] = []
    start = 0
    for match in re.finditer(r"\s*[,;]\s*", text):
        if any(a <= match.start() < b for a, b in spans):
            continue
        pieces.append(text[start:match.start()])
        start = match.end()
    pieces.append(text[start:])
    return pieces


def _number_forms(text: str) -> list[str]:
    folded = text.lower()
    if _GROUPED_NUMBER.search(text):
        return [text, _GROUPED_NUMBER.sub(lambda m: m[0].replace(",", ""), text)]
    if folded.isdigit() and int(folded) < len(NUMBER_WORDS):
        return [text, NUMBER_WORDS[int(folded)]]
    if folded in _NUMBER_OF_WORD:
        return [text, str(_NUMBER_OF_WORD[folded])]
    return [text]


_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_RELATIVE = re.compile(r"(?i)\b(monday|tuesday|wednesday|thursday|friday|saturday|sunday|day)\s+(before|after)\s+$")


def _only_a_date(gold: str, written: str) -> bool:
    """Is ``gold`` the date ``written`` with at most filler words around it (``on 9 April, 2023``)?"""
    return all(word.lower() in _DATE_FILLER for word in _words(gold.replace(written, " ")))


def _date_phrase(gold: str) -> bool:
    """Is ``gold`` one date, alone, with filler words, or relative (``the Friday before 15 July 2023``)?

    Such a gold is matched as a whole (any spelling of its date), however many words it has.
    """
    dates = _dates_in(gold)
    return len(dates) == 1 and (_only_a_date(gold, dates[0][0]) or bool(_relative_date_forms(gold, dates[0])))


def _relative_date_forms(gold: str, date: tuple[str, list[str]]) -> list[str]:
    """``Thursday before December 17, 2023`` -> the forms of 14 December 2023 (also ``the day after``).

    Only when nothing but filler words surrounds the relative date, so the
    computed date is the whole answer (LoCoMo's temporal golds are written so).
    """
    written, forms = date
    iso_form = forms[-1] if forms and re.fullmatch(r"\d{4}-\d{2}-\d{2}", forms[-1]) else None
    at = gold.find(written)
    match = _RELATIVE.search(gold[:at]) if iso_form and at >= 0 else None
    if match is None:
        return []
    rest = _words(gold[:match.start()] + " " + gold[at + len(written):])
    if any(word.lower() not in _DATE_FILLER for word in rest):
        return []
    anchor = _dt.date.fromisoformat(iso_form)  # type: ignore[arg-type]
    sign = -1 if match[2].lower() == "before" else 1
    if match[1].lower() == "day":
        moment = anchor + _dt.timedelta(days=sign)
    else:
        target = _WEEKDAYS.index(match[1].lower())
        step = (anchor.weekday() - target) % 7 or 7 if sign < 0 else (target - anchor.weekday()) % 7 or 7
        moment = anchor + _dt.timedelta(days=sign * step)
    return _date_forms(moment.day, moment.month, moment.year)


def variants(gold: str) -> list[str]:
    """The gold and its normalized variants, first the gold itself, no duplicates (case-insensitive).

    Example:
        >>> variants("7 May 2023")[:3]
        ['7 May 2023', 'May 7, 2023', 'May 7 2023']
        >>> variants("2")
        ['2', 'two']
    """
    gold = gold_text(gold)
    out = [gold]
    dates = _dates_in(gold)
    for written, forms in dates:
        out += [gold.replace(written, form) for form in forms]
    if len(dates) == 1:
        if _only_a_date(gold, dates[0][0]):
            out += [dates[0][0], *dates[0][1]]
        out += _relative_date_forms(gold, dates[0])
    if not dates:
        out += _number_forms(gold)
    if re.match(r"(?i)(?:a|an|the)\s+\S", gold):
        out += [re.sub(r"(?i)^(?:a|an|the)\s+", "", text) for text in out]
    seen: set[str] = set()
    unique = []
    for text in out:
        if text and text.casefold() not in seen:
            seen.add(text.casefold())
            unique.append(text)
    return unique


def _words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z0-9][A-Za-z0-9'’-]*", text)


def is_short(gold: str) -> bool:
    """A date, a number, or at most :data:`SHORT_WORDS` words: matched as a whole."""
    gold = gold_text(gold)
    if any(written == gold for written, _ in _dates_in(gold)):
        return True
    return len(_words(gold)) <= SHORT_WORDS


def list_parts(gold: str, *, force: bool = False) -> list[str] | None:
    """The parts of a list gold ("Sweden, Canada and Peru" -> 3 parts), or None when it is not a list.

    A gold is a list when splitting on commas, semicolons and a final "and"
    gives at least two parts of at most :data:`SHORT_WORDS` words each and it
    is not a single date ("May 7, 2023"). ``force`` (LoCoMo's multi-hop
    category, which the paper scores part by part) also splits on a lone "and".
    """
    gold = gold_text(gold)
    if any(written == gold for written, _ in _dates_in(gold)):
        return None
    pieces = _split_list(gold)
    if len(pieces) < 2 and not force:
        return None
    parts: list[str] = []
    for piece in pieces:
        piece = re.sub(r"(?i)^(?:and|or)\s+", "", piece).strip()
        parts += [p.strip() for p in re.split(r"(?i)\s+and\s+", piece)] if (len(pieces) > 1 or force) else [piece]
    parts = [p for p in parts if p]
    if len(parts) < 2 or any(len(_words(p)) > SHORT_WORDS for p in parts):
        return None
    return parts


def salient_groups(gold: str) -> list[list[str]]:
    """Groups for a long gold: each date and number in it (with variants), then its longest content words."""
    gold = gold_text(gold)
    groups: list[list[str]] = []
    rest = gold
    for written, forms in _dates_in(gold):
        groups.append([written, *[f for f in forms if f != written]])
        rest = rest.replace(written, " ")
    for match in _GROUPED_NUMBER.finditer(rest):
        groups.append(_number_forms(match[0]))
    rest = _GROUPED_NUMBER.sub(" ", rest)
    words = _words(rest)
    for word in words:
        if word.isdigit() or word.lower() in _NUMBER_OF_WORD:
            groups.append(_number_forms(word))
    content = [w for w in words if w.lower() not in STOP_WORDS and not w.isdigit() and w.lower() not in _NUMBER_OF_WORD
               and len(w) >= 3]
    ranked = sorted(dict.fromkeys(content), key=lambda w: (-len(w), content.index(w)))[:MAX_SALIENT]
    groups += [[w] for w in sorted(ranked, key=content.index)]
    unique: list[list[str]] = []
    for group in groups:
        if group not in unique:
            unique.append(group)
    return unique


def answer_check(gold: Any, *, list_answer: bool = False) -> dict[str, list[Any]]:
    """The expect fields (``must_contain_any`` or ``must_contain_groups``) for a gold answer; empty for no gold.

    Example:
        >>> answer_check("Sweden, Canada")
        {'must_contain_groups': [['Sweden'], ['Canada']]}
    """
    text = gold_text(gold)
    if not text:
        return {}
    options = alternatives(text)
    if len(options) > 1:
        checks = [answer_check(option, list_answer=list_answer) for option in options]
        if all(set(check) == {"must_contain_any"} for check in checks):
            merged = [s for check in checks for s in check["must_contain_any"]]
            return {"must_contain_any": list(dict.fromkeys(merged))}
        return checks[0]  # alternatives that are not each one phrase cannot be OR-ed: the main answer's check
    parts = list_parts(text, force=list_answer)
    if parts:
        return {"must_contain_groups": [variants(p) for p in parts]}
    if is_short(text) or _date_phrase(text):
        return {"must_contain_any": variants(text)}
    groups = salient_groups(text)
    return {"must_contain_groups": groups} if groups else {"must_contain_any": variants(text)}
