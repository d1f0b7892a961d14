// The framework's side of the value tests: how JavaScript compares JSON numbers and what
// String.prototype.trim() calls blank. Reads JSON {numbers: [[a, b]...], strings: [...]}
// (numbers as JSON literal text) on stdin; writes {equal: [bool...], blank: [bool...]}.
"use strict";
const chunks = [];
process.stdin.on("data", (c) => chunks.push(c));
process.stdin.on("end", () => {
  const input = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  const equal = input.numbers.map(([a, b]) => JSON.parse(a) === JSON.parse(b));
  const blank = input.strings.map((s) => s.trim() === "");
  process.stdout.write(JSON.stringify({ equal, blank }));
});
