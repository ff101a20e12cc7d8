"""recall-eval: does long-term memory make an agent better across sessions?

One package per stage of the flow, each importing only the stages below it:
``scenarios`` (files -> validated scenarios; ``importers`` turn public
benchmarks into suites) -> ``memory_systems`` (every arm's memory) ->
``run`` (the agent loop through litellm, writing ``records``) -> ``score``
(pure functions of one record) -> ``analysis`` (aggregates, statistics,
verdict) -> ``report`` (pages and outputs) and ``runs`` (compare, merge,
history), with ``cli`` on top; ``memory_tools`` and ``offline_model`` lie
beneath everything. ``README.md`` ("Layout") says where a new piece goes.
"""

__version__ = "0.1.0"
