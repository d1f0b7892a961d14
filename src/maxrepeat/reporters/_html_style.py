"""The style sheet of the ``--output html`` page (`html_page`): one ``<style>`` block,
admitted by its hash in the page's Content-Security-Policy."""

from __future__ import annotations

from typing import Final

__all__ = ["STYLE"]

STYLE: Final = """
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
