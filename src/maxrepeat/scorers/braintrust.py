"""The ``max-repeat`` grader as a Braintrust scorer (the ``maxrepeat[braintrust]`` extra).

``max_repeat(graders)`` returns a scorer function for ``braintrust.Eval(...,
scores=[...])``. It grades the task's **output**: the agent's messages in the OpenAI
chat-completions shape (a list of messages, or an object with ``messages``), which is
what an agent loop over the OpenAI SDK (or Braintrust's wrapped client) accumulates.
Each assistant message with ``tool_calls`` is one turn, its calls the calls, and the
``role: tool`` messages answering them (by ``tool_call_id``) the results: the
conversion of the ``openai-messages`` reader, so the score equals ``maxrepeat grade`` of
the output saved as JSON.

The score is a ``braintrust.Score``: ``score`` 1 when the run passes and 0 when it loops
(or the grader could not run), and in ``metadata`` the evidence, the config, the figure
and each result's metadata. ``braintrust`` is imported only when a scorer is made.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..core.errors import MissingExtraError
from ..core.events import Trajectory
from ._common import Graders, load_graders, verdict

if TYPE_CHECKING:
    from braintrust import Score

__all__ = ["max_repeat", "trajectory_from_output"]

_EXTRA = "braintrust"


def trajectory_from_output(output: Any, *, id: str | None = None) -> Trajectory:
    """The `Trajectory` of a task's output: OpenAI chat messages (a list, or an object
    with ``messages``). Raises `TypeError` for any other output."""
    from ..readers._chatruns import Run
    from ..readers.openai_messages import trajectory_from_messages

    messages = output.get("messages") if isinstance(output, Mapping) else output
    if not isinstance(messages, list):
        raise TypeError("the max_repeat scorer grades the agent's messages: the task's output "
                        "must be a list of chat messages or an object with 'messages' (got "
                        f"{type(output).__name__})")
    path = "output.messages" if isinstance(output, Mapping) else "output"
    return trajectory_from_messages(Run(id, "braintrust output", messages, path))


def max_repeat(graders: Graders, *, name: str = "max_repeat") -> Callable[..., Score]:
    """A Braintrust scorer failing a run whose agent repeats a tool call (or a cycle of
    calls) more than ``max`` times in a row: ``Eval(..., scores=[max_repeat(config)])``.

    ``graders`` is a `MaxRepeatConfig`, several, or a config file path (read now; a bad
    one raises `ConfigError`). Raises `MissingExtraError` without ``braintrust``.
    """
    configs = load_graders(graders)
    try:
        from braintrust import Score
    except ImportError as exc:
        raise MissingExtraError(_EXTRA, "braintrust") from exc

    def scorer(input: Any = None, output: Any = None, expected: Any = None,
               **kwargs: Any) -> Score:
        found = verdict(trajectory_from_output(output), configs)
        made: Score = Score(name=name, score=found.score,
                            metadata={"evidence": found.evidence, **found.metadata})
        return made

    scorer.__name__ = scorer.__qualname__ = name
    return scorer
