// The framework's side of the differential test: how JavaScript itself reads a `tools`
// pattern. Reads JSON [{pattern, names}] on stdin; writes JSON [{ok, error, matches}].
// A leading inline flags group of i, m, s (each once) becomes RegExp flags, as the seed
// framework does with "(?i)"; the rest is compiled by `new RegExp(source, flags)`.
"use strict";
const chunks = [];
process.stdin.on("data", (c) => chunks.push(c));
process.stdin.on("end", () => {
  const cases = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  const out = cases.map(({ pattern, names }) => {
    let flags = "";
    let source = pattern;
    const m = /^\(\?([ims]+)\)/.exec(pattern);
    if (m && new Set(m[1]).size === m[1].length) {
      flags = m[1];
      source = pattern.slice(m[0].length);
    }
    let re;
    try {
      re = new RegExp(source, flags);
    } catch (e) {
      return { ok: false, error: String(e.message), matches: [] };
    }
    return { ok: true, empty: re.source === "(?:)", matches: names.map((n) => re.test(n)) };
  });
  process.stdout.write(JSON.stringify(out));
});
