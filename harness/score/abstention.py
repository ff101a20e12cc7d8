"""Does a final answer abstain (say it does not know), and why we think so.

Real models abstain in many phrasings ("I don't have the billing staging
hostname", "That isn't recorded anywhere I can see", "没有找到相关记录"), and
real answers contain abstention-like words ("you don't have to restart it",
"no record is kept of retries, so the job retries", "there's no information
loss"). Both errors bias the comparison between arms, so the rule is explicit,
sentence-based and conservative:

1. The answer is normalized (NFKC, casefold, typographic apostrophes) and text
   inside double quotes (``"..."``, ``“...”``, ``「...」``, ``『...』``) is removed:
   a quoted user message ("Earlier you said: \\"I'm not sure which port\\"") is
   not the agent's own claim.
2. It is split into sentences (``.``/``!``/``?`` before a space or the end,
   CJK sentence marks, ``;``, line breaks).
3. A **strong cue** in any sentence makes the answer an abstention. Strong cues
   state that the agent's knowledge or records lack the answer
   (:data:`STRONG_CUES`): negated knowing/finding ("I don't know", "I couldn't
   find", "I'm not able to tell"), negated possession with an object ("I don't
   have the hostname", "I have no information"; not "I don't have to ..."),
   absent records ("there's no record of ...", "nothing in my notes", "not
   recorded anywhere", "no decision on that has been recorded", "no number
   recorded", "no finish time was given", "not yet read or discussed"; not
   "no errors recorded", "no notice was given"), the user never
   having said it ("you haven't told me"), and their Chinese forms (我不知道,
   没有找到相关记录, 我没有这方面的信息).
4. A **hedge cue** ("I'm not sure", "I'm not certain", "I can't say for sure",
   我不确定) counts only in the lead sentence: the first sentence that is not a
   preamble (a restated question ending in ``?``, "Let me check.", "I searched
   memory.", "Good question!"). A hedge later in the answer qualifies a claim
   already made.
5. A cue is ignored when its sentence is a **trap** (:data:`TRAP_CUES`): the
   absence is a fact about the system used as a reason ("no record of failures
   means it's healthy", 日志没有错误记录，说明服务正常), or the negation belongs to a
   condition (如果没有找到配置文件…).
6. A cue after the lead sentence is ignored when it is scoped to a **part**
   (:data:`PARTIAL_CUES`: "about the second part", "the rest", "beyond that"):
   "It's Postgres 15. I'm not sure about the second part." answered.

What the detector does not decide: a hedged answer that still states the
expected fact ("I'm not sure, but I think it's Postgres 15") is reported as an
abstention here and counted as *answered* by :func:`harness.score.scoring.score_sample`,
which knows the expected fact. For that it looks for the fact in
:func:`outside_abstention`, the answer without its abstention clauses (a
clause holding a strong cue; hedges are kept), so the words of an abstention
never state a fact: "I don't know — I have no record of that" does not say
"no", while "No, you never mentioned that" does. A claim that a value does not exist yet in the
world ("hosting is undecided", "Globex has not given a budget yet", "no decision yet") is a claim,
not an abstention: only the rubric can tell whether it concerns the asked
subject. Labelled examples: ``tests/score/abstention_cases.yaml``.

All patterns are compiled once at import; a literal gate (negation words:
``n't``, ``no``, ``not``, ``never``, 不, 没, ...) skips answers and sentences
that cannot hold a cue before the cue patterns run.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from memory_tools import strip_format_characters

_NOT = r"(?:don't|do not|dont|didn't|did not)"
_RECORD_NOUN = (
    r"(?:record|records|memory|memories|information|info|details|detail|mention|mentions|note|notes|entry|entries"
    r"|trace|data|knowledge|decision|answer|indication|reference)"
)
#: After a record noun: end of clause, a preposition or a record verb, never another noun ("information loss").
_AFTER_NOUN = (
    r"(?=\s*(?:$|[.,;:!?)\u2014\u2013]|-\s|of\b|about\b|on\b|for\b|regarding\b|concerning\b|as to\b|in\b|that\b"
    r"|yet\b|so far\b|anywhere\b|here\b|available\b|i\b|which\b|to (?:go|work|share)\b"
    r"|(?:was|were|has been|have been|is|are) (?:ever )?(?:recorded|saved|stored|mentioned|noted|found|made|given)\b))"
)
_MEMORY_PLACE = (
    r"(?:(?:my|the|our|your|stored|saved|these|those)\s+)?(?:memory|memories|notes|records|stored items|saved items"
    r"|history|conversation|conversations|chat|sessions|search results|context|items)(?![\w_])"
)
#: "No decision yet", "no decision has been made": the world's status (what the user said), not a record's gap.
_WORLD_STATUS = r"(?!decisions?\s+(?:yet|(?:was|were|has been|have been|had been|is|are)\s+(?:ever\s+|yet\s+)?made)\b)"
_RECORD_VERB = r"(?:recorded|noted|mentioned|told|shared|discussed|covered|brought up|written down|specified|stated)"
_STORE_VERB = r"(?:saved|stored|logged|captured|documented|kept)"
_UNABLE = (
    r"(?:can't|cannot|can not|couldn't|could not|unable to|failed to"
    r"|(?:wasn't|was not|weren't|haven't been|have not been|hasn't been|am not|'m not|'ve not been) able to)"
)
_FIND_VERB = (
    r"(?:find|locate|determine|recall|tell|say|confirm|answer|retrieve|look up|look (?:that|it|this) up|pull up"
    r"|work out|figure out"
    r"|pin down|see)"
)
_NOT_A_GAP = r"(?! why\b| how\b| (?:a|any) reason\b| (?:any |an? )?(?:issues?|problems?|errors?|bugs?|harm)\b)"

#: Cues that say the agent's knowledge or records lack the answer; any sentence.
STRONG_CUES: dict[str, str] = {
    "not know": rf"\bi\b[^.?!]{{0,12}}?\b(?:{_NOT}|can't|cannot|can not|couldn't|could not) "
    r"(?:really |honestly |actually )?(?:know|recall|remember)\b(?! (?:of )?(?:any|a|the)? ?reason\b| why\b| how\b)",
    "unable": rf"(?:\bi\b[^.?!]{{0,20}}?\b|^(?:sorry|unfortunately)?,? ?)"
    rf"(?:{_UNABLE} (?:seem to |actually )?{_FIND_VERB}|{_NOT} (?:seem to |actually )?(?:find|locate|see))"
    rf"\b{_NOT_A_GAP}",
    "not aware": r"\b(?:i'm|i am|i was|i'm just)\s+(?:not |un)aware\b"
    r"|\bnot that i(?:'m| am)? (?:know|aware|recall|remember|can see|can find|could find|see)\b",
    "no possession": rf"\bi (?:{_NOT}|still {_NOT}) (?:seem to |appear to |actually |currently )?have "
    r"(?!to\b|access\b|time\b|permission\b|a preference\b|any preference\b|strong\b|an opinion\b|a problem\b)\S+"
    rf"|\bwe {_NOT} have (?:any |a |the )?(?:stored |saved |recorded )?{_RECORD_NOUN}{_AFTER_NOUN}",
    "have no": r"\bi(?:'ve| have| had|'ve got| have got) (?:no|nothing)\b(?! doubt\b| objection| problem| issue"
    r"| concern| preference| strong| opinion| reason to| access\b)|\bi haven't got\b",
    "no record": r"(?:^|[,:\u2014\u2013-] |(?<=\bbut |\band )|\bthere(?:'s| is| are| was| were|'re) |\bthere's still "
    r"|\bi (?:found|see|can find|could find|have found|'ve found) |\bwith )(?:no|not any|not a single)\s+"
    r"(?:stored |saved |relevant |such |matching |recorded |prior |existing |explicit |clear |written |specific )?"
    rf"{_WORLD_STATUS}{_RECORD_NOUN}{_AFTER_NOUN}",
    "no recorded": r"\bthere(?:'s| is| are| was| were) (?:still )?no "
    r"(?:recorded|saved|stored|documented|agreed|noted) \w"
    # "(no number recorded)", "no phone number was recorded.": the record lacks the thing; not "no errors recorded"
    r"|\bno (?!(?:issues?|problems?|errors?|bugs?|failures?|incidents?|changes?|complaints?|cases?)\b)\w+(?: \w+)?"
    r" (?:was |were |has been |have been |had been |is |are )?(?:recorded|on record|on file)"
    r"(?=\s*(?:$|[.,;:!?)\u2014\u2013]))"
    # "no finish time was given", "no date was mentioned": a value the record lacks; not "no notice was given"
    r"|(?<!because )(?<!since )\bno (?:\w+ )?(?:time|date|number|name|figure|amount|price|address|count|size|id"
    r"|total|deadline|dose|score|result|value)s? (?:was|were|has been|have been|had been) (?:given|mentioned|stated"
    r"|specified|provided|shared)(?=\s*(?:$|[.,;:!?)\u2014\u2013]))",
    "record absent": r"\b(?:isn't|is not|wasn't|was not|aren't|are not|weren't|were not|hasn't|has not|haven't"
    rf"|have not|never|not)(?: (?:ever|yet|actually|been|ever been|explicitly|once))*(?: (?:read|seen|checked|opened) or)?"
    rf" {_RECORD_VERB}"
    r"(?=\s*(?:$|[.,;:!?)\u2014\u2013]|anywhere|yet|so far|(?:that|which) i\b|to me|by you|here|explicitly|either"
    rf"|before|in {_MEMORY_PLACE}))"
    rf"|\b(?:isn't|is not|wasn't|was not|aren't|are not|never|not) (?:been )?{_STORE_VERB}"
    rf" (?:anywhere|in {_MEMORY_PLACE})",
    "not in memory": r"\b(?:isn't|is not|wasn't|was not|aren't|are not|not|nothing)"
    rf"(?: anywhere| mentioned| recorded| stored)? (?:in|from|across) {_MEMORY_PLACE}"
    # "this chat is incognito, so I have no access to your saved notes": the agent cannot read its record
    rf"|\b(?:no|without|not have|n't have) access to {_MEMORY_PLACE}"
    r"|\b(?:my|our|your|the) (?:memory|memories|notes|conversation|chat|history|search results)"
    rf" (?:{_NOT}|doesn't|does not|never) (?:say|mention|contain|include|cover|record|show|have)\b",
    "nothing found": r"\bnothing (?:relevant|recorded|stored|saved|matching|came up|turned up|about (?:that|this|it)\b"
    r"|on (?:that|this|it)\b|i can find|i could find|that (?:covers|mentions|answers))"
    r"|\b(?:found|turned up|came up with|returned|gave|yielded|came back with)"
    r" (?:nothing|no (?:results|matches|hits|items))\b"
    r"|\bcame (?:up|back) empty\b",
    "not told": r"\byou (?:haven't|have not|never|didn't|did not|hadn't)(?: yet| ever| actually)? "
    r"(?:told|tell|mentioned|mention|said|say|shared|share|given|give|specified|specify|provided|provide|noted|note)\b"
    r"(?! me to\b| to\b)",
    "not known": r"\b(?:is|are|remains?|was) (?:still |currently )?(?:unknown|not known)"
    r"(?=\s*(?:$|[.,;:!?(\u2014\u2013]|to me|yet|so far|here))"
    r"|\bunknown to me\b|\bnot (?:something|anything) i (?:know|have|can find|can see|can tell)\b",
    "no idea": r"\bno (?:idea|clue)\b|\bno way (?:of|to) know",
    "zh not know": r"我(?:并|也|真的|确实|实在|目前|暂时|还)?(?:不知道|不清楚|不记得|记不得|记不清|无从得知|没有印象)"
    r"|(?:^|[，,：:])(?:抱歉|很抱歉|不好意思)?[，,]?(?:不知道|不清楚)",
    "zh no record": r"没有(?:找到|查到)?(?:任何)?(?:相关|这方面|关于[^，。,]{0,12})?的?(?:记录|信息|记忆|资料|笔记|内容)"
    r"|(?:未|没)(?:有)?(?:记录|提及|提到)|(?:找不到|没有找到|没找到|未找到|查不到|没查到|无法(?:确定|找到|回答|得知|判断))",
    "zh not told": r"你(?:没有|没|并没有|从未|还没有?|未曾)(?:告诉|提到|提过|说过|说明)",
}
#: Cues that hedge; they count only in the lead sentence.
HEDGE_CUES: dict[str, str] = {
    "not sure": r"\b(?:i'm|i am|im)\s+(?:really |honestly |just |still |also )?not\s+(?:100% |completely |entirely "
    r"|totally |fully |quite |too |very |so )?(?:sure|certain|positive|confident)\b|^not (?:sure|certain)\b",
    "cannot say for sure": r"\bi (?:can't|cannot|can not|couldn't) (?:say|tell) "
    r"(?:for sure|for certain|with certainty|definitively)\b",
    "zh not sure": r"我(?:并|也|真的)?不(?:确定|太确定|敢确定)",
}
#: A sentence with one of these is a fact that uses absence as a reason; its cues do not count.
TRAP_CUES: dict[str, str] = {
    "consequence": r"\b(?:means|meaning|implies|indicates|which is why|that's why|so the (?:job|service|worker|system"
    r"|app|api|check|script|pipeline|cron|retry|queue|task|deploy|build))\b|\bis kept\b|\bare kept\b",
    "zh consequence": r"说明|意味着|表示|因此服务|所以服务",
}
#: A non-lead sentence with one of these abstains on a part only ("I'm not sure about the second part").
PARTIAL_CUES: dict[str, str] = {
    "part": r"\b(?:the )?(?:second|other|last|third|remaining|latter|former)"
    r" (?:part|question|one|bit|half|item|point)s?\b",
    "rest": r"\bthe rest\b|\bbeyond that\b|\banything else\b|\bother than that\b",
    "zh part": r"第二部分|其余部分|其他部分|后半部分",
}
#: Every cue holds one of these (negation words); a sentence without any is skipped before the cue patterns run.
#: A cue starts at most :data:`_CUE_REACH` characters before its sentence's first gate word ("there's still no").
_CUE_REACH = 40
_GATE_RE = re.compile(r"n't|no(?:t|thing)?(?![a-z])|never|unknown|unable|unaware|empty|failed|[不没未无]")
_PREAMBLE_RE = re.compile(
    r"^(?:sure|ok|okay|right|hmm+|good question|great question|thanks|thank you|let me (?:check|look|see|search)"
    r"|i (?:checked|searched|looked|went through|scanned|reviewed)|i've (?:checked|searched|looked|gone through)"
    r"|checking|searching|looking)\b"
)


@dataclass(frozen=True)
class AbstentionCue:
    """Why an answer was judged an abstention.

    Attributes:
        kind: the cue's name in :data:`STRONG_CUES` or :data:`HEDGE_CUES`.
        text: the matched words (normalized).
        sentence: 1-based index of the sentence that holds them.
        hedge: True when the cue only hedges (counted in the lead sentence only).
    """

    kind: str
    text: str
    sentence: int
    hedge: bool = False

    def describe(self) -> str:
        """One line for a human: ``sentence 1: "i don't know" (not know)``."""
        label = f"hedge: {self.kind}" if self.hedge else self.kind
        return f'sentence {self.sentence}: "{self.text}" ({label})'


#: Where a cue can start: every cue begins at one of these (checked by the tests). Python's ``re`` tries each
#: alternative at every position; this one look-ahead rejects most positions first (about 2.5x faster).
CUE_START = (
    r"(?=\b[iwntamoyfcrgu]|[,:\u2014\u2013\-\uff0c\uff1a"
    r"\u6211\u6ca1\u672a\u627e\u67e5\u65e0\u4f60\u62b1\u5f88\u4e0d]|^)"  # 我没未找查无你抱很不
)


def _named(cues: dict[str, str], *, start: str = CUE_START) -> re.Pattern[str]:
    branches = "|".join(f"(?P<{_group(name)}>{pattern})" for name, pattern in cues.items())
    return re.compile(f"{start}(?:{branches})")


def _group(name: str) -> str:
    return re.sub(r"\W", "_", name)


_STRONG_RE = _named(STRONG_CUES)
_HEDGE_RE = _named(HEDGE_CUES)
_TRAP_RE = re.compile("|".join(f"(?:{p})" for p in TRAP_CUES.values()))
_PARTIAL_RE = re.compile("|".join(f"(?:{p})" for p in PARTIAL_CUES.values()))
_NAMES = {_group(n): n for n in (*STRONG_CUES, *HEDGE_CUES)}
_QUOTED_RE = re.compile(r'"[^"\n]*"|\u201c[^\u201d\n]*\u201d|\u300c[^\u300d]*\u300d|\u300e[^\u300f]*\u300f')
#: A conditional clause up to its comma ("if the port is not specified, ..."): its negation states no abstention.
_CONDITION_RE = re.compile(r"\b(?:if|when|whenever|unless|in case)\b[^,.;:\u2014]*|(?:如果|若|假如|要是|一旦)[^，。,；;]*")
#: A sentence end: ``.``/``!``/``?`` before a space or the end ("3.10" and hostnames never split), or a CJK mark,
#: ``;`` or a line break. It starts with a character class so ``re`` scans for it quickly.
_END_RE = re.compile(r"[.!?\n;\u3002\uff01\uff1f\uff1b](?:(?<=[.!?])(?=\s|$)|(?<![.!?]))")
_WS_RE = re.compile(r"[ \t\r\f\v]{2,}|[\t\r\f\v]")


def _normalize(text: str) -> str:
    folded = unicodedata.normalize("NFKC", strip_format_characters(text)).casefold().replace("\u2019", "'").replace("\u2018", "'")
    return _WS_RE.sub(" ", folded)


def _sentences(text: str) -> list[str]:
    parts: list[str] = []
    start = 0
    for match in _END_RE.finditer(text):
        parts.append(text[start:match.end()].strip())
        start = match.end()
    parts.append(text[start:].strip())
    return [part for part in parts if part]


def _is_preamble(sentence: str) -> bool:
    return sentence.endswith(("?", "\uff1f")) or _PREAMBLE_RE.match(sentence) is not None


def _cue(pattern: re.Pattern[str], sentence: str, gate: int, index: int, *, hedge: bool) -> AbstentionCue | None:
    match = pattern.search(sentence, max(0, gate - _CUE_REACH))
    if match is None or match.lastgroup is None:
        return None
    return AbstentionCue(kind=_NAMES[match.lastgroup], text=match.group(0).strip(" ,:"), sentence=index, hedge=hedge)


def _sentence_cue(sentence: str, index: int, *, is_lead: bool, hedges: bool = True) -> AbstentionCue | None:
    """The cue of one sentence, after its conditional clauses are removed; None for traps and partial hedges.

    ``hedges=False`` looks for strong cues only.
    """
    gate = _GATE_RE.search(sentence)
    if gate is None:
        return None
    found = _cue(_STRONG_RE, sentence, gate.start(), index, hedge=False)
    if found is None and is_lead and hedges:
        found = _cue(_HEDGE_RE, sentence, gate.start(), index, hedge=True)
    if found is None:  # the checks below only remove cues, so most sentences stop here
        return None
    if _CONDITION_RE.search(sentence):
        return _sentence_cue(_CONDITION_RE.sub(" ", sentence), index, is_lead=is_lead, hedges=hedges)
    if _TRAP_RE.search(sentence) or (not is_lead and _PARTIAL_RE.search(sentence)):
        return None
    return found


@lru_cache(maxsize=8192)
def find_abstention(answer: str | None) -> AbstentionCue | None:
    """The cue that makes ``answer`` an abstention, or None when it answers (see the module rule).

    Example:
        >>> find_abstention("I don't have the billing staging hostname.").describe()
        'sentence 1: "i don\\'t have the" (no possession)'
        >>> find_abstention("You don't have to restart it; the worker reloads .env.") is None
        True
    """
    if not answer:
        return None
    text = _QUOTED_RE.sub(" ", _normalize(answer))
    if _GATE_RE.search(text) is None:
        return None
    lead: int | None = None
    for index, sentence in enumerate(_sentences(text), start=1):
        is_lead = lead is None and not (_is_preamble(sentence) and _HEDGE_RE.search(sentence) is None)
        if is_lead:
            lead = index
        found = _sentence_cue(sentence, index, is_lead=is_lead)
        if found is not None:
            return found
    return None


def is_abstention(answer: str | None) -> bool:
    """True when the answer says it does not know (see the module rule)."""
    return find_abstention(answer) is not None


def abstention_reason(answer: str | None) -> str | None:
    """A one-line reason when the answer abstains (``sentence 1: "i don't know" (not know)``), else None."""
    cue = find_abstention(answer)
    return None if cue is None else cue.describe()


#: Where a sentence splits into clauses: ``,``/``;``/``:`` before a space, dashes, CJK commas and colons.
_CLAUSE_END_RE = re.compile(r"[,;:](?=\s|$)|\s-\s|[\u2014\u2013\uff0c\uff1a\uff1b\u3001]")
_MASK = "\ue000"  # stands in for quoted text, keeping offsets; never a cue, never a sentence end
_MASK_RUN_RE = re.compile(_MASK + "+")
#: Put where an abstention clause was removed, so the words on either side never join into a match.
ABSTENTION_GAP = " \u00b6 "


def _spans(text: str, end_re: re.Pattern[str], start: int = 0, stop: int | None = None) -> list[tuple[int, int]]:
    """(start, end) of each piece of ``text[start:stop]`` up to and including a match of ``end_re``."""
    stop = len(text) if stop is None else stop
    pieces, begin = [], start
    for match in end_re.finditer(text, start, stop):
        pieces.append((begin, match.end()))
        begin = match.end()
    pieces.append((begin, stop))
    return [(a, b) for a, b in pieces if text[a:b].strip()]


def _view(masked: str, start: int, end: int) -> str:
    """What :func:`find_abstention` would see of ``masked[start:end]``: quoted text as one space."""
    return _MASK_RUN_RE.sub(" ", masked[start:end]).strip()


@lru_cache(maxsize=8192)
def outside_abstention(answer: str | None) -> str:
    """The answer (normalized) without its abstention clauses: what it states besides "I don't know".

    A clause is a piece of a sentence between ``,``/``;``/``:`` (before a
    space) or dashes. An abstention clause holds a strong cue (by the rules of
    :func:`find_abstention`, lead-sentence status included); when a sentence's
    cue spans several clauses, the whole sentence goes. Hedges ("I'm not sure,
    but I think it's X") are kept: a hedged answer still states X. Quoted text
    is kept unless it sits inside an abstention clause. Removed clauses leave
    :data:`ABSTENTION_GAP`.

    Example:
        >>> outside_abstention("No, you never mentioned that.")
        'no, \u00b6 '
        >>> outside_abstention("I don't know \u2014 I have no record of that.")
        ' \u00b6  \u00b6 '
    """
    if not answer:
        return ""
    text = _normalize(answer)
    masked = _QUOTED_RE.sub(lambda m: _MASK * len(m.group(0)), text)
    if _GATE_RE.search(masked) is None:
        return text
    removed: list[tuple[int, int]] = []
    lead: int | None = None
    for index, (start, end) in enumerate(_spans(masked, _END_RE), start=1):
        sentence = _view(masked, start, end)
        is_lead = lead is None and not (_is_preamble(sentence) and _HEDGE_RE.search(sentence) is None)
        if is_lead:
            lead = index
        if _sentence_cue(sentence, index, is_lead=is_lead, hedges=False) is None:
            continue
        clauses = [(a, b) for a, b in _spans(masked, _CLAUSE_END_RE, start, end)
                   if _sentence_cue(_view(masked, a, b), index, is_lead=is_lead, hedges=False) is not None]
        removed += clauses or [(start, end)]
    if not removed:
        return text
    kept, last = [], 0
    for start, end in removed:
        kept += [text[last:start], ABSTENTION_GAP]
        last = end
    return "".join(kept + [text[last:]])
