"""The script of the ``--output html`` page (`html_page`): it reads the report data
from the page's JSON block and builds the DOM with ``textContent`` only (never markup
from the data); admitted by its hash in the page's Content-Security-Policy."""

from __future__ import annotations

from typing import Final

__all__ = ["SCRIPT"]

SCRIPT: Final = r"""
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
