// OpenClaw's own tool-loop detector (openclaw 2026.9.6, tools.loopDetection) run on the
// loop benchmark's calls: bench/loops/openclaw_compare.py writes one JSON object per
// labelled run on standard input ({"name", "calls": [{"step", "tool", "args", "output"}]})
// and reads back, per run, the step of every call the detector calls stuck and at which
// level. The detector is OpenClaw's code, imported from the installed package: for each
// call, as its before_tool_call path does, detectToolCallLoop first (a critical result
// refuses the call: it is not recorded), then recordToolCall and, once the call ran,
// recordToolCallOutcome with its result.
import { createInterface } from "node:readline";
import { readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const dist = process.argv[2];
const file = readdirSync(dist).find((f) => /^tool-loop-detection-.*\.mjs$/.test(f));
const mod = await import(pathToFileURL(join(resolve(dist), file)).href);
const detect = mod.t, record = mod.r, outcome = mod.i;  // the chunk's export names
const config = { enabled: true };

for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const run = JSON.parse(line);
  const state = { toolCallHistory: [] };
  const flagged = [];
  run.calls.forEach((c, i) => {
    const found = detect(state, c.tool, c.args, config, { runId: "bench" });
    if (found.stuck) flagged.push({ step: c.step, level: found.level, detector: found.detector });
    if (found.stuck && found.level === "critical") return;  // refused: not run, not recorded
    const id = `call-${i}`;
    record(state, c.tool, c.args, id, config, { runId: "bench" });
    const result = { content: [{ type: "text", text: String(c.output ?? "") }] };
    outcome(state, { toolName: c.tool, toolParams: c.args, toolCallId: id, result,
                     runId: "bench" });
  });
  process.stdout.write(JSON.stringify({ name: run.name, flagged }) + "\n");
}
