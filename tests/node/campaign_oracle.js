// The framework's side of the differential campaigns (tests/**/test_campaign_*.py): one
// long-lived process answering batches, one JSON request per line on stdin, one JSON
// answer per line on stdout.
//   {"kind": "regexp", "cases": [{pattern, names}]} -> [{ok, error, empty, matches, ms}]
//     a leading inline flags group of i, m, s (each once) becomes RegExp flags, as the
//     seed framework does with "(?i)"; a match that throws (V8's stack overflow) is the
//     string "throws" ("timeout" when V8 took over 2 s on one name); ms is the time V8
//     took for all the names.
//   {"kind": "yaml", "cases": [text]} -> [{ok, error, value}], YAML.parse of the npm
//     `yaml` package (pinned by scripts/test.sh into .npm-agents/), with the value in
//     the tagged JSON of encodeValue below
//   {"kind": "isInteger", "cases": [json text]} -> [bool], Number.isInteger(JSON.parse(t))
//   {"kind": "maxRule", "cases": [yaml text]} -> [bool | "error"]: whether the document's
//     graders[0].config.max is a number that Number.isInteger accepts and is >= 1
"use strict";
const { seedRegExp } = require("./seed_regexp.js");
const path = require("path");
const readline = require("readline");
const vm = require("vm");

// One name's test, stopped after TEST_TIMEOUT_MS: V8 backtracks some random patterns for
// many minutes (catastrophic backtracking), and a campaign must end. The answer is then
// "timeout": V8 gave none, so there is nothing to compare.
const TEST = new vm.Script("re.test(n)");
const TEST_CONTEXT = vm.createContext({ re: null, n: "" });
const TEST_TIMEOUT_MS = 2000;

const yamlDir = process.env.MAXREPEAT_NPM_YAML ||
  path.join(__dirname, "..", "..", ".npm-agents", "node_modules", "yaml");
let YAML = null;

function regexp({ pattern, names }) {
  let re;
  try {
    re = seedRegExp(pattern);
  } catch (e) {
    return { ok: false, error: String(e.message).slice(0, 200), matches: [] };
  }
  const start = process.hrtime.bigint();
  const matches = names.map((n) => {
    TEST_CONTEXT.re = re;
    TEST_CONTEXT.n = n;
    try {
      return TEST.runInContext(TEST_CONTEXT, { timeout: TEST_TIMEOUT_MS });
    } catch (e) {
      return e && e.code === "ERR_SCRIPT_EXECUTION_TIMEOUT" ? "timeout" : "throws";
    }
  });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  return { ok: true, empty: re.source === "(?:)", matches, ms };
}

// JSON for a parsed YAML value: numbers that JSON cannot hold, and the values of the
// YAML 1.1 types, tagged so the Python side compares them exactly.
function encodeValue(v, seen) {
  if (typeof v === "number") {
    if (Number.isNaN(v)) return { $num: "NaN" };
    if (!Number.isFinite(v)) return { $num: v > 0 ? "Infinity" : "-Infinity" };
    if (Object.is(v, -0)) return { $num: "-0" };
    return v;
  }
  if (typeof v === "bigint") return { $num: String(v) };
  if (v === null || typeof v !== "object") return v;
  if (seen.has(v)) return { $circular: true };
  seen.add(v);
  let out;
  if (v instanceof Date) out = { $date: Number.isNaN(v.getTime()) ? "Invalid" : v.toISOString() };
  else if (v instanceof Uint8Array) out = { $bytes: Array.from(v) };
  else if (v instanceof Set) out = { $set: Array.from(v, (x) => encodeValue(x, seen)) };
  else if (v instanceof Map) {
    out = { $map: Array.from(v, ([k, x]) => [encodeValue(k, seen), encodeValue(x, seen)]) };
  } else if (Array.isArray(v)) out = v.map((x) => encodeValue(x, seen));
  else {
    out = { $obj: Object.keys(v).map((k) => [k, encodeValue(v[k], seen)]) };
  }
  seen.delete(v);
  return out;
}

function yaml(text) {
  if (YAML === null) YAML = require(yamlDir);
  try {
    return { ok: true, value: encodeValue(YAML.parse(text, { logLevel: "error" }), new Set()) };
  } catch (e) {
    return { ok: false, error: String(e.message).split("\n")[0] };
  }
}

function isInteger(text) {
  return Number.isInteger(JSON.parse(text));
}

function maxRule(text) {
  if (YAML === null) YAML = require(yamlDir);
  let max;
  try {
    max = YAML.parse(text, { logLevel: "error" }).graders[0].config.max;
  } catch (e) {
    return "error";
  }
  return typeof max === "number" && Number.isInteger(max) && max >= 1;
}

const kinds = { regexp, yaml, isInteger, maxRule };
const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on("line", (line) => {
  const { kind, cases } = JSON.parse(line);
  process.stdout.write(JSON.stringify(cases.map(kinds[kind])) + "\n");
});
