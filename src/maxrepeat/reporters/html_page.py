"""The page of ``--output html``: its style, its script and the document around the data.

The data (`reporters.html`) is embedded once, as JSON inside a
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
from typing import Any, Final

from ..core.summary import Summary
from ._tally import verdict_line

__all__ = ["page"]


def page(doc: Any, summary: Summary) -> str:
    """The whole HTML document for the report data ``doc``."""
    data = _script_json(doc)
    csp = (
        f"default-src 'none'; script-src '{_sha256(_JS)}'; style-src '{_sha256(_CSS)}'; "
        "img-src 'none'; connect-src 'none'; form-action 'none'; base-uri 'none'"
    )
    verdict = verdict_line(summary)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        "<title>maxrepeat report</title>\n"
        f"<style>{_CSS}</style>\n</head>\n<body>\n"
        "<header><h1>maxrepeat report</h1>"
        f'<div class="muted">{verdict}</div></header>\n'
        '<main>\n<section id="summary"></section>\n'
        "<h2>Trajectories (failing first)</h2>\n"
        '<div id="controls" class="controls"></div>\n<section id="list"></section>\n'
        "<noscript><p>This report draws its content with JavaScript; "
        "enable it to see the results.</p></noscript>\n</main>\n"
        f'<script type="application/json" id="report-data">{data}</script>\n'
        f"<script>{_JS}</script>\n"
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


_CSS: Final = """
:root{--pass:#1a7f37;--fail:#cf222e;--error:#8250df;--line:#d0d7de;--muted:#57606a;
--bg:#ffffff;--panel:#f6f8fa;font-family:system-ui,-apple-system,"Segoe UI",sans-serif}
body{margin:0;background:var(--bg);color:#1f2328;font-size:14px}
header{padding:16px 24px;border-bottom:1px solid var(--line)}
h1{font-size:20px;margin:0 0 8px}h2{font-size:16px;margin:20px 0 8px}
main{padding:0 24px 32px}
.cards{display:flex;gap:12px;flex-wrap:wrap}
.card{border:1px solid var(--line);border-radius:6px;padding:8px 14px;min-width:90px;background:var(--panel)}
.card b{display:block;font-size:20px}
.pass{color:var(--pass)}.fail{color:var(--fail)}.error{color:var(--error)}
.row{display:flex;gap:32px;flex-wrap:wrap;align-items:flex-start}
table{border-collapse:collapse}th,td{border:1px solid var(--line);padding:4px 8px;text-align:left}
td.n{text-align:right;font-variant-numeric:tabular-nums}
.rate{display:inline-block;width:80px;height:8px;background:#ffd8d3;border-radius:4px;overflow:hidden;vertical-align:middle;margin-right:6px}
.rate i{display:block;height:100%;background:var(--pass)}
.hist{display:flex;align-items:flex-end;gap:6px;height:130px;padding:4px 0;border-bottom:1px solid var(--line)}
.bar{display:flex;flex-direction:column;align-items:center;justify-content:flex-end;height:100%;min-width:26px}
.bar i{display:block;width:22px;background:#0969da;border-radius:3px 3px 0 0}
.bar span{font-size:11px;color:var(--muted)}
.axis{display:flex;gap:6px}.axis span{min-width:26px;text-align:center;font-size:11px;color:var(--muted)}
.controls{display:flex;gap:8px;align-items:center;flex-wrap:wrap;margin:8px 0}
.controls input,.controls select,.controls button{font:inherit;padding:3px 6px}
details.traj{border:1px solid var(--line);border-radius:6px;margin:6px 0}
details.traj>summary{cursor:pointer;padding:6px 10px;display:flex;gap:10px;align-items:center;flex-wrap:wrap}
.badge{font-size:11px;font-weight:600;border-radius:10px;padding:1px 8px;color:#fff}
.badge.pass{background:var(--pass)}.badge.fail{background:var(--fail)}.badge.error{background:var(--error)}
.label{font-weight:600;word-break:break-all}
.result{padding:8px 12px;border-top:1px solid var(--line)}
.evidence{margin:4px 0 8px;word-break:break-word}
.tl{overflow-x:auto;padding-bottom:4px}
.grid{display:grid;grid-auto-rows:auto;row-gap:3px;column-gap:2px;width:max-content}
.step{width:16px;height:22px;border:1px solid rgba(0,0,0,.25);border-radius:3px;padding:0;cursor:pointer}
.step.inrun{box-shadow:0 -3px 0 var(--fail) inset}
.step.sel{outline:3px solid #0969da;outline-offset:1px}
.run{height:14px;background:rgba(207,34,46,.18);border:1px solid var(--fail);border-radius:3px;font-size:10px;line-height:14px;color:var(--fail);overflow:hidden;white-space:nowrap;cursor:pointer;padding:0 2px}
.tick{font-size:10px;color:var(--muted);white-space:nowrap}
.legend{display:flex;gap:10px;flex-wrap:wrap;font-size:12px;margin:6px 0}
.legend i{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:4px;vertical-align:middle}
.detail{background:var(--panel);border:1px solid var(--line);border-radius:6px;padding:8px 10px;margin-top:8px}
.detail h4{margin:0 0 6px;font-size:13px}
.call{margin:6px 0}.call .k{color:var(--muted);font-size:12px}
pre{margin:2px 0 6px;white-space:pre-wrap;word-break:break-word;background:#fff;border:1px solid var(--line);border-radius:4px;padding:6px;max-height:320px;overflow:auto;font-size:12px}
.muted{color:var(--muted)}
"""

_JS: Final = r"""
(function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("report-data").textContent);
  // No reds: red marks loops and failures.
  var PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#76b7b2", "#edc948", "#b07aa1",
                 "#9c755f", "#bab0ac", "#17becf", "#bcbd22", "#a0cbe8", "#8cd17d"];
  var PAGE = 50, OPEN = 20;
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function colour(tool) { return PALETTE[tool % PALETTE.length]; }
  function stepTools(step) {
    var seen = [];
    step.c.forEach(function (c) { if (seen.indexOf(c[0]) < 0) seen.push(c[0]); });
    return seen;
  }
  function stepFill(step) {
    var t = stepTools(step);
    if (t.length === 1) return colour(t[0]);
    var parts = t.map(function (x, i) {
      return colour(x) + " " + (100 * i / t.length) + "% " + (100 * (i + 1) / t.length) + "%";
    });
    return "linear-gradient(" + parts.join(",") + ")";
  }

  function summary() {
    var s = DATA.summary, root = document.getElementById("summary");
    var cards = el("div", "cards");
    [["trajectories", s.trajectories, ""], ["results", s.results, ""], ["passed", s.passed, "pass"],
     ["failed", s.failed, "fail"], ["errors", s.errors, "error"]].forEach(function (c) {
      var card = el("div", "card " + c[2]);
      card.appendChild(el("b", null, c[1]));
      card.appendChild(el("span", null, c[0]));
      cards.appendChild(card);
    });
    root.appendChild(cards);
    var row = el("div", "row");
    var left = el("div"), table = el("table");
    left.appendChild(el("h2", null, "Pass rate per grader"));
    var head = el("tr");
    ["grader", "passed", "failed", "errors", "pass rate"].forEach(function (h) { head.appendChild(el("th", null, h)); });
    table.appendChild(head);
    DATA.graders.forEach(function (g) {
      var tr = el("tr");
      tr.appendChild(el("td", null, g.name));
      tr.appendChild(el("td", "n pass", g.passed));
      tr.appendChild(el("td", "n fail", g.failed));
      tr.appendChild(el("td", "n error", g.errors));
      var td = el("td", "n"), bar = el("span", "rate"), fill = el("i");
      fill.style.width = (100 * g.rate) + "%";
      bar.appendChild(fill); td.appendChild(bar);
      td.appendChild(document.createTextNode(Math.round(100 * g.rate) + "%"));
      tr.appendChild(td); table.appendChild(tr);
    });
    left.appendChild(table); row.appendChild(left);
    var right = el("div");
    right.appendChild(el("h2", null, "Largest repeat per result (occurrences)"));
    var keys = Object.keys(s.figures).map(Number).sort(function (a, b) { return a - b; });
    if (!keys.length) right.appendChild(el("p", "muted", "no graded results"));
    else {
      var most = Math.max.apply(null, keys.map(function (k) { return s.figures[k]; }));
      var hist = el("div", "hist"), axis = el("div", "axis");
      hist.setAttribute("role", "img");
      hist.setAttribute("aria-label", "histogram of the figure");
      keys.forEach(function (k) {
        var n = s.figures[k], bar = el("div", "bar"), b = el("i");
        b.style.height = Math.max(2, Math.round(100 * n / most)) + "px";
        bar.title = n + " result(s) with " + k + " occurrence(s)";
        bar.appendChild(el("span", null, n)); bar.appendChild(b); hist.appendChild(bar);
        axis.appendChild(el("span", null, k));
      });
      right.appendChild(hist); right.appendChild(axis);
    }
    row.appendChild(right);
    root.appendChild(row);
  }

  function showStep(res, panel, buttons, idx) {
    buttons.forEach(function (b, i) {
      b.classList.toggle("sel", i === idx);
      b.setAttribute("aria-pressed", i === idx ? "true" : "false");
    });
    var step = res.steps[idx];
    panel.textContent = "";
    var events = step.c.map(function (c) { return c[1]; });
    panel.appendChild(el("h4", null, "step " + step.i + " (event" + (events.length > 1 ? "s " : " ") +
      events.join(", ") + "): " + step.c.length + " call" + (step.c.length > 1 ? "s" : "")));
    step.c.forEach(function (c) {
      var box = el("div", "call");
      var name = el("div");
      var sw = el("i"); sw.style.display = "inline-block"; sw.style.width = "10px";
      sw.style.height = "10px"; sw.style.marginRight = "6px"; sw.style.background = colour(c[0]);
      name.appendChild(sw);
      name.appendChild(el("b", "tool", DATA.tools[c[0]]));
      if (c[2] !== null) name.appendChild(el("span", "muted", "  id " + c[2]));
      box.appendChild(name);
      if (c[5]) {
        box.appendChild(el("div", "muted", "arguments and observation left out: the report " +
          "keeps its size bounded (failing results are served first)"));
        panel.appendChild(box);
        return;
      }
      box.appendChild(el("div", "k", "arguments"));
      box.appendChild(el("pre", "args", c[3]));
      box.appendChild(el("div", "k", "observation"));
      box.appendChild(el("pre", "obs", c[4] === null ? "(no result)" : c[4]));
      panel.appendChild(box);
    });
  }

  function resultBlock(res) {
    var box = el("div", "result");
    var head = el("div");
    head.appendChild(el("span", "badge " + res.status, res.status));
    head.appendChild(document.createTextNode(" "));
    head.appendChild(el("b", null, res.grader));
    head.appendChild(el("span", "muted", "  figure " + res.occ + " (max " + res.max + ", match " +
      res.match + ") · loop steps " + res.loopSteps + " of " + res.watched));
    box.appendChild(head);
    box.appendChild(el("div", "evidence", res.evidence));
    if (res.runsTotal > res.runs.length) box.appendChild(el("div", "muted runs-total",
      "runs above max: " + res.runsTotal + " (the largest " + res.runs.length + " listed)"));
    if (res.src) box.appendChild(el("div", "muted", "read from " + res.src +
      (res.fmt ? " as " + res.fmt : "")));
    if (!res.steps) {
      res.runs.forEach(function (r) {
        box.appendChild(el("div", "muted", "run: steps " + r[0] + "-" + r[1] + ", period " + r[2] +
          ", " + r[3] + " occurrences: " + r[6]));
      });
      return box;
    }
    if (!res.steps.length) return box;
    var legend = el("div", "legend"), used = [];
    res.steps.forEach(function (s) { stepTools(s).forEach(function (t) { if (used.indexOf(t) < 0) used.push(t); }); });
    used.forEach(function (t) {
      var item = el("span"), sw = el("i"); sw.style.background = colour(t);
      item.appendChild(sw); item.appendChild(document.createTextNode(DATA.tools[t]));
      legend.appendChild(item);
    });
    box.appendChild(legend);
    var scroller = el("div", "tl"), grid = el("div", "grid");
    grid.style.gridTemplateColumns = "repeat(" + res.steps.length + ", 16px)";
    var inRun = {};
    res.runs.forEach(function (r) { for (var s = r[0]; s <= r[1]; s++) inRun[s] = true; });
    var panel = el("div", "detail");
    panel.appendChild(el("span", "muted", "select a step to see its calls"));
    var buttons = [];
    res.steps.forEach(function (s, i) {
      var b = el("button", "step" + (inRun[s.i] ? " inrun" : ""));
      b.type = "button";
      b.style.gridRow = "1"; b.style.gridColumn = String(i + 1);
      b.style.background = stepFill(s);
      b.title = "step " + s.i + ": " + stepTools(s).map(function (t) { return DATA.tools[t]; }).join(" + ");
      b.setAttribute("aria-label", b.title);
      b.setAttribute("aria-pressed", "false");
      b.dataset.step = String(s.i);
      b.addEventListener("click", function () { showStep(res, panel, buttons, i); });
      b.addEventListener("keydown", function (ev) {
        var j = ev.key === "ArrowRight" ? i + 1 : ev.key === "ArrowLeft" ? i - 1 : -1;
        if (j >= 0 && j < buttons.length) { ev.preventDefault(); buttons[j].focus(); buttons[j].click(); }
      });
      buttons.push(b); grid.appendChild(b);
    });
    res.runs.forEach(function (r, k) {
      if (r[0] >= res.steps.length) return;
      var bar = el("div", "run", "×" + r[3] + (r[2] > 1 ? " (period " + r[2] + ")" : ""));
      bar.style.gridRow = String(k + 2);
      bar.style.gridColumn = (r[0] + 1) + " / " + (Math.min(r[1], res.steps.length - 1) + 2);
      bar.title = "steps " + r[0] + "-" + r[1] + " (events " + r[4] + "-" + r[5] + "): " + r[3] +
        " occurrences of period " + r[2] + ": " + r[6];
      bar.addEventListener("click", function () { buttons[r[0]].focus(); buttons[r[0]].click(); });
      grid.appendChild(bar);
    });
    res.steps.forEach(function (s, i) {
      if (i % 5) return;
      var tick = el("div", "tick", s.i);
      tick.style.gridRow = String(res.runs.length + 2); tick.style.gridColumn = String(i + 1);
      grid.appendChild(tick);
    });
    scroller.appendChild(grid); box.appendChild(scroller);
    if (res.hidden) box.appendChild(el("div", "muted", res.hidden + " more steps not drawn"));
    box.appendChild(panel);
    return box;
  }

  function card(t, open) {
    var d = el("details", "traj"), s = el("summary");
    var worst = ["error", "fail", "pass"][t.worst];
    s.appendChild(el("span", "badge " + worst, worst));
    s.appendChild(el("span", "label", t.label));
    t.results.forEach(function (r) { s.appendChild(el("span", r.status, r.grader + ": " + r.occ)); });
    d.appendChild(s);
    var built = false;
    function build() {
      if (built) return; built = true;
      t.results.forEach(function (r) { d.appendChild(resultBlock(r)); });
    }
    d.addEventListener("toggle", function () { if (d.open) build(); });
    if (open) { build(); d.open = true; }
    return d;
  }

  var state = { page: 0, filter: "all", query: "" };
  function visible() {
    var q = state.query.toLowerCase();
    return DATA.trajectories.filter(function (t) {
      if (state.filter === "failing" && t.worst === 2) return false;
      if (state.filter === "passing" && t.worst !== 2) return false;
      return !q || t.label.toLowerCase().indexOf(q) >= 0;
    });
  }
  function list() {
    var root = document.getElementById("list"), items = visible();
    var pages = Math.max(1, Math.ceil(items.length / PAGE));
    if (state.page >= pages) state.page = pages - 1;
    root.textContent = "";
    items.slice(state.page * PAGE, (state.page + 1) * PAGE).forEach(function (t, i) {
      root.appendChild(card(t, t.worst < 2 && state.page === 0 && i < OPEN));
    });
    if (!items.length) root.appendChild(el("p", "muted", "no trajectory matches"));
    document.getElementById("pageinfo").textContent = "page " + (state.page + 1) + " of " + pages +
      " (" + items.length + " trajectories)";
    document.getElementById("prev").disabled = state.page === 0;
    document.getElementById("next").disabled = state.page >= pages - 1;
  }
  function controls() {
    var c = document.getElementById("controls");
    var search = el("input"); search.type = "search"; search.placeholder = "filter by trajectory";
    search.setAttribute("aria-label", "filter by trajectory");
    var sel = el("select");
    sel.setAttribute("aria-label", "which trajectories");
    [["all", "all"], ["failing", "failing or error"], ["passing", "passing"]].forEach(function (o) {
      var opt = el("option", null, o[1]); opt.value = o[0]; sel.appendChild(opt);
    });
    var prev = el("button", null, "◀ prev"), next = el("button", null, "next ▶"), info = el("span", "muted");
    prev.id = "prev"; next.id = "next"; info.id = "pageinfo"; prev.type = next.type = "button";
    search.addEventListener("input", function () { state.query = search.value; state.page = 0; list(); });
    sel.addEventListener("change", function () { state.filter = sel.value; state.page = 0; list(); });
    prev.addEventListener("click", function () { state.page--; list(); });
    next.addEventListener("click", function () { state.page++; list(); });
    [search, sel, prev, next, info].forEach(function (x) { c.appendChild(x); });
  }
  summary(); controls(); list();
  document.body.dataset.ready = "1";
})();
"""
