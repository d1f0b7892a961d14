"""Model turns from a trace tree: what the span-based scorers (MLflow, Phoenix, LangSmith)
share with the readers of those platforms' exports. The rule lives in
`maxrepeat.readers._spantree` (readers cannot import scorers), so that ``maxrepeat grade``
of an export and the platform's scorer group calls alike.
"""

from __future__ import annotations

from ..readers._spantree import Node, model_turns

__all__ = ["Node", "model_turns"]
