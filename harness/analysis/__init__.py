"""Analysis: the scores of a run aggregated, compared arm against arm, and the verdict decided.

Takes: every :class:`~harness.score.SampleScores` of a run. Gives: the
aggregate tables (per model, arm and category, with bootstrap intervals
clustered by scenario: ``aggregate``), the paired statistics (differences,
the exact McNemar test, the flip table, the minimum detectable effect:
``stats``), the one decision rule every page reads (the exact sign-flip test and the interval
inverted from it: ``decision``), the pairwise judge's sign test over conversations (``pairwise``) and the verdict
with its reasons and exit code (``verdict``).
The unit of inference is the scenario: epochs refine each scenario's
estimate, they never add independent pairs.
"""

from harness.analysis.aggregate import ALL, APART, HEADLINE, AggregateConfig, aggregate
from harness.analysis.decision import (
    Decision,
    PairedEvidence,
    decide_paired,
    describe,
    evidence_fields,
    evidence_from_row,
    p_text,
    paired_evidence,
)
from harness.analysis.pairwise import JudgedPair, clopper_pearson, conversation_of, sign_test
from harness.analysis.stats import (
    Interval,
    cluster_mean_ci,
    cluster_quantile_cis,
    cluster_ratio_ci,
    paired_diff_ci,
    quantile,
)
from harness.analysis.verdict import RunHealth, VerdictConfig, decide, exit_code, terminal_lines

__all__ = ["ALL", "APART", "HEADLINE", "AggregateConfig", "Decision", "Interval", "PairedEvidence", "decide_paired",
           "describe", "evidence_fields", "evidence_from_row", "p_text", "paired_evidence", "JudgedPair", "RunHealth", "VerdictConfig", "aggregate",
           "clopper_pearson", "cluster_mean_ci", "cluster_quantile_cis", "cluster_ratio_ci", "conversation_of", "decide",
           "exit_code", "paired_diff_ci", "quantile", "sign_test", "terminal_lines"]
