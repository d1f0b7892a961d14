// The framework's side of the differential test: how JavaScript itself reads a `tools`
// pattern. Reads JSON [{pattern, names}] on stdin; writes JSON [{ok, error, matches}].
// A leading inline flags group of i, m, s (each once) becomes RegExp flags, as the seed
// framework does with "(?i)"; the rest is compiled by `new RegExp(source, flags)`.
"use strict";
const { seedRegExp } = require("./seed_regexp.js");
const chunks = [];
process.stdin.on("data", (c) => chunks.push(c));
process.stdin.on("end", () => {
  const cases = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  const out = cases.map(({ pattern, names }) => {
    let re;
    try {
      re = seedRegExp(pattern);
    } catch (e) {
      return { ok: false, error: String(e.message), matches: [] };
    }
    return { ok: true, empty: re.source === "(?:)", matches: names.map((n) => re.test(n)) };
  });
  process.stdout.write(JSON.stringify(out));
});
