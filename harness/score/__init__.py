"""Score: pure functions of one finished record and its scenario.

Takes: a :class:`~harness.records.SampleRecord` and its
:class:`~harness.scenarios.Scenario` (and, when a judge ran, the judge's
verdicts). Gives: :class:`SampleScores`, every score of that sample, the only
thing aggregation reads. Nothing here calls the agent model; the judges
(``judge``: rubric scenarios; ``grounding``: unsupported specifics) call
their own model, cached, and are calibrated against labelled sets shipped
beside them.

By metric family: text matching (``matching``), abstention as selective
prediction (``abstention``), unsupported claims (``claims``, with the
supersession rule of ``superseded``), what the tools disclosed: tool leakage
and retrieval (``disclosure``), forgetting as its own property: forget
requests, calls and what came back after them (``forgetting``), the write path of agent-written memory
(``writes``), the published benchmarks' own metrics (``paper_metrics``:
LoCoMo's stemmed token F1 and BLEU-1, LongMemEval's session-level retrieval
and task average), the judges' prompts per benchmark protocol
(``judge_presets``), the pairwise judge that needs no gold (``pairwise``), and the composition of one sample's scores
(``scoring``, whose docstring states every convention).
"""

from harness.score.abstention import find_abstention, is_abstention, outside_abstention
from harness.score.document_risks import DocumentRisks, document_risks
from harness.score.forgetting import forgetting_table, retained_count
from harness.score.grounding import GroundingJudge, GroundingVerdict, visible_context
from harness.score.judge import DEFAULT_CACHE_DIR, Judge, JudgeError, JudgeVerdict, calibrate, expected_facts
from harness.score.judge_calls import calibrating, usage_block
from harness.score.judge_presets import PRESETS as JUDGE_PRESETS
from harness.score.judge_presets import JudgePrompt, JudgePromptError, judge_prompt
from harness.score.judge_watch import judging
from harness.score.matching import check_answer, contains, normalize_text, token_f1
from harness.score.models import (
    CLAIM_KINDS,
    CORRECT_OUTCOMES,
    Outcome,
    RetainedFact,
    SampleScores,
    Score,
    ToolLeak,
    UnsupportedClaim,
)
from harness.score.pairwise import PairComparison, PairwiseJudge, PairwiseVerdict, judge_context
from harness.score.pairwise import calibrate as calibrate_pairwise
from harness.score.paper_metrics import (
    SESSION_KS,
    PaperMetricsError,
    bleu1,
    locomo_f1,
    ranked_session_metrics,
    session_figures,
    session_metric_order,
    task_averaged,
)
from harness.score.scoring import GROUNDING_UNREADABLE, score_sample
from harness.score.writes import failure_stage, write_path_blocks

__all__ = [
    "DocumentRisks",
    "document_risks",
    "judging",
    "session_figures",
    "session_metric_order",
    "CLAIM_KINDS",
    "CORRECT_OUTCOMES",
    "SESSION_KS",
    "PaperMetricsError",
    "DEFAULT_CACHE_DIR",
    "GroundingJudge",
    "calibrating",
    "usage_block",
    "JUDGE_PRESETS",
    "GROUNDING_UNREADABLE",
    "GroundingVerdict",
    "Judge",
    "JudgeError",
    "JudgePrompt",
    "JudgePromptError",
    "JudgeVerdict",
    "Outcome",
    "RetainedFact",
    "PairComparison",
    "PairwiseJudge",
    "PairwiseVerdict",
    "SampleScores",
    "Score",
    "ToolLeak",
    "UnsupportedClaim",
    "bleu1",
    "calibrate",
    "calibrate_pairwise",
    "check_answer",
    "contains",
    "expected_facts",
    "find_abstention",
    "forgetting_table",
    "is_abstention",
    "judge_context",
    "judge_prompt",
    "locomo_f1",
    "normalize_text",
    "outside_abstention",
    "ranked_session_metrics",
    "retained_count",
    "score_sample",
    "task_averaged",
    "token_f1",
    "visible_context",
    "failure_stage",
    "write_path_blocks",
]
