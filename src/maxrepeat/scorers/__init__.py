"""Scorers: the ``max-repeat`` grader inside the eval platforms people already run.

A scorer here grades one finished agent run where an eval platform grades it, and
returns that platform's own score object (Inspect's ``Score``, MLflow's ``Feedback``,
DeepEval's metric result, Braintrust's ``Score``, ...). Each platform is one module
(``maxrepeat.scorers.<platform>``) needing its extra (``pip install 'maxrepeat[<extra>]'``);
the platform is imported inside the module's functions, so importing this package imports
none of them.

Every scorer reads the run's tool calls from the platform's record (messages, trace
spans, a test case's tool list), lays them out as maxrepeat events (the calls of one
model turn between ``turn_start`` and ``turn_end``, each followed by its result) with
`maxrepeat.scorers._common`, and runs `maxrepeat.grade` with the given configs: the
verdict is exactly ``grade()``'s on the same events. Guards (``maxrepeat.guards``) watch
a run live; scorers grade it when it ends.
"""
