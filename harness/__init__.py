"""recall-eval harness: scenarios, arms, the agent loop, scoring and reports."""

__version__ = "0.1.0"
