"""The page of ``--output html``: its style, its script and the document around the data.

Its style and script are in `_html_style` and `_html_script`. The data
(`reporters.html`) is embedded once, as JSON inside a
``<script type="application/json">`` block with ``<``, ``>`` and ``&`` written as
``\\u003c`` etc., so it can never close the block; the page's own script builds the DOM
with ``textContent`` only. A Content-Security-Policy admits exactly the page's own
script and style (by hash) and no network at all, so even a mistake here could neither
run injected code nor fetch anything.
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

from ..core.summary import Summary
from ._html_script import SCRIPT
from ._html_style import STYLE
from ._tally import verdict_line

__all__ = ["page"]


def page(doc: Any, summary: Summary) -> str:
    """The whole HTML document for the report data ``doc``."""
    data = _script_json(doc)
    csp = (
        f"default-src 'none'; script-src '{_sha256(SCRIPT)}'; style-src '{_sha256(STYLE)}'; "
        "img-src 'none'; connect-src 'none'; form-action 'none'; base-uri 'none'"
    )
    verdict = verdict_line(summary)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        "<title>maxrepeat report</title>\n"
        f"<style>{STYLE}</style>\n</head>\n<body>\n"
        "<header><h1>maxrepeat report</h1>"
        f'<div class="muted">{verdict}</div></header>\n'
        '<main>\n<section id="summary"></section>\n'
        "<h2>Trajectories (failing first)</h2>\n"
        '<div id="controls" class="controls"></div>\n<section id="list"></section>\n'
        "<noscript><p>This report draws its content with JavaScript; "
        "enable it to see the results.</p></noscript>\n</main>\n"
        f'<script type="application/json" id="report-data">{data}</script>\n'
        f"<script>{SCRIPT}</script>\n"
        "</body>\n</html>\n"
    )




def _script_json(doc: Any) -> str:
    """JSON that cannot end the <script> element holding it, nor be read as markup."""
    text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    return (
        text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
        .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    )


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()
