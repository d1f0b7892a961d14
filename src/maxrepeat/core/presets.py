"""Named grader presets: the config the inline flags start from (``--preset NAME``).

``seed`` is the seed framework's own defaults (``match: observation``, cycles off, no
``max``: the flags must give it): what ``maxrepeat grade`` uses when no preset is named.

``live`` is the setting ``maxrepeat hook install`` writes when no grader is given. It
was chosen for guarding a running agent, by measurement on the loop benchmark
(``bench/loops/run.py``: labelled real runs, recorded agent logs and constructed runs;
the figures are in ``bench/RESULTS.md``, "The live preset"):

* ``match: name-args``: the same tool with the same arguments. A repeat is known before
  it runs, so the guard can refuse it; agents wrap each shell output in per-call
  counters, so exact observations of the same command are rarely equal;
* ``max_cycle_period: 3``: an A B A B (or A B C A B C) cycle counts too; the benchmark
  flags no more legitimate spans with 3 than with 1;
* ``normalize: [volatile]`` and ``ignore_arguments: [description, summary]``: a
  timestamp in an argument, or a reworded description of the same command, does not
  make a repeat new; together they flag no legitimate span exact ``name-args`` does not;
* ``max: 3``: the fourth occurrence in a row is the first one above it.

A flag given with a preset replaces that key. A preset's near-duplicate keys are kept
only where the chosen ``match`` takes them (``ignore_arguments`` in ``name-args``,
``normalize`` in ``observation`` and ``name-args``).

>>> preset_mapping("live", {"max": 2})["max"]
2
>>> sorted(preset_mapping("live", {"match": "observation"}))
['match', 'max', 'max_cycle_period', 'normalize']
>>> preset_mapping("seed", {"max": 2})
{'max': 2}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = ["PRESETS", "PRESET_NAMES", "preset_mapping"]

PRESETS: Final[Mapping[str, Mapping[str, Any]]] = {
    "seed": {},
    "live": {
        "max": 3,
        "max_cycle_period": 3,
        "match": "name-args",
        "normalize": ["volatile"],
        "ignore_arguments": ["description", "summary"],
    },
}
PRESET_NAMES: Final = tuple(PRESETS)

#: near-duplicate keys -> the match modes that take them
_TAKEN_BY: Final = {
    "ignore_arguments": ("name-args",),
    "with_observation": ("name-args",),
    "normalize": ("observation", "name-args"),
    "replace": ("observation", "name-args"),
    "similarity": ("observation", "name-args"),
    "similarity_min_length": ("observation", "name-args"),
}


def preset_mapping(name: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """The ``config:`` mapping of preset ``name`` with the keys in ``given`` replaced;
    the preset's own near-duplicate keys are dropped where the resulting ``match`` does
    not take them (a key in ``given`` is always kept: the rules then say what is wrong).
    ``name`` must be one of `PRESET_NAMES` (KeyError otherwise)."""
    base = PRESETS[name]
    out = {**base, **given}
    match = out.get("match", "observation")
    for key, modes in _TAKEN_BY.items():
        if key in base and key not in given and match not in modes:
            del out[key]
    return out
