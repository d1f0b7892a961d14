"""A griffe extension for the API reference: docstring examples as code blocks.

The package's docstrings are plain text with doctest examples (``>>>`` lines, run by
tests/project/test_docs.py). Markdown would read ``>>>`` as a quotation and ``[...]`` in the shown
output as links, so each example (from its first ``>>>`` line to the next blank line)
is fenced as a ``pycon`` block before mkdocstrings renders it.
"""

from __future__ import annotations

from typing import Any

import griffe


def fence_examples(text: str) -> str:
    """Wrap every doctest example of ``text`` in a ```pycon fence.

    >>> print(fence_examples("Adds.\\n\\n>>> 1 + 1\\n2\\n\\nMore."))
    Adds.
    <BLANKLINE>
    ```pycon
    >>> 1 + 1
    2
    ```
    <BLANKLINE>
    More.
    """
    out: list[str] = []
    inside = False
    for line in text.splitlines():
        if not inside and line.lstrip().startswith(">>>"):
            out.append("```pycon")
            inside = True
        elif inside and not line.strip():
            out.append("```")
            inside = False
        out.append(line)
    if inside:
        out.append("```")
    return "\n".join(out)


class DoctestFences(griffe.Extension):
    """Fences the doctest examples of every docstring griffe loads."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None and ">>>" in obj.docstring.value:
            obj.docstring.value = fence_examples(obj.docstring.value)
