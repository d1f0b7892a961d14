"""The incremental max-repeat detector: `grade()`'s answer for every prefix, event by event.

`Monitor` keeps, instead of the events, a small state that each event updates. The design
(``docs/design/monitor.md``) in short:

* Steps are formed by the same turn rules as `grade()` (``core/rules.py``). A step is
  **pushed** into the pattern search once no further call can join it (its turn closed,
  or a call outside any turn). Only the open turn's step waits in the **tail**.
* For every period p the search keeps the stretch of equalities ``F[i] == F[i-p]`` that
  reaches the last pushed step and, once it holds two copies, the block it repeats
  (``search.py``). Only the last ``2 × max_cycle_period`` pushed steps are kept.
* In ``observation`` mode a step pushed while one of its calls still waits for its result
  is fingerprinted with what is known then, and the search state from before it is kept
  as a **checkpoint** with a **log** of the steps pushed since; the result's arrival
  replays the log from the checkpoint.
* `result()` runs the same search over the open step on copies of that state
  (``build.py``); the open step is compared through a running summary (``stepview.py``).

The parts: ``state.py`` (the saved state), ``stepview.py`` (incremental step state),
``search.py`` (incremental search), ``build.py`` (result building), ``monitor.py`` (the
class that routes events).
"""

from .monitor import Monitor
from .state import STATE_VERSION

__all__ = ["Monitor", "STATE_VERSION"]
