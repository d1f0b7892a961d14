"""The text the plug-ins and extensions maxrepeat writes share (OpenClaw, OpenCode, Pi):
their first lines (what the file is, the command's marker line, the command) and the
JavaScript function ``ask`` that runs the guard command with one payload and reads its
answer (``null`` when the command fails or says nothing: the call goes on)."""

from __future__ import annotations

import json
from typing import Final

from ..shimfiles import marker_line

__all__ = ["ask_function", "head"]

_ASK: Final = r"""function ask(payload@payload@)@returns@ {
  return new Promise((resolve) => {
    const say = (why@string@) => {
      process.stderr.write(`maxrepeat guard: ${why} (the call goes on)\n`);
      resolve(null);
    };
    let child@any@;
    try {
      child = spawn(COMMAND, { shell: true, stdio: ["pipe", "pipe", "pipe"] });
    } catch (e) {
      return say(String(e));
    }
    let out = "";
    let err = "";
    const timer = setTimeout(() => child.kill("SIGKILL"), @wait@);
    child.stdout.on("data", (d@buffer@) => { out += d; });
    child.stderr.on("data", (d@buffer@) => { err += d; });
    child.on("error", (e@error@) => { clearTimeout(timer); say(String(e)); });
    child.on("close", (code@code@) => {
      clearTimeout(timer);
      if (code !== 0) return say(`${COMMAND} exited ${code}: ${err.trim()}`);
      try {
        resolve(out.trim() ? JSON.parse(out) : null);
      } catch (e) {
        say(`answer is not JSON: ${out.slice(0, 200)}`);
      }
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(payload));
  });
}
"""

#: the TypeScript annotations of `_ASK`'s slots (plain JavaScript leaves them empty)
_TYPES: Final = {"payload": ": Record<string, unknown>", "returns": ": Promise<any>",
                 "string": ": string", "any": ": any", "buffer": ": Buffer",
                 "error": ": Error", "code": ": number | null"}


def ask_function(wait: str, typescript: bool = False) -> str:
    """The ``ask`` function, its kill timer ``wait`` milliseconds (a number or a constant's
    name), in TypeScript when ``typescript``."""
    text = _ASK.replace("@wait@", wait)
    for slot, annotation in _TYPES.items():
        text = text.replace(f"@{slot}@", annotation if typescript else "")
    return text


def head(title: str, agent: str, command: str) -> str:
    """The first lines of a plug-in for ``title`` (``maxrepeat hook install agent``
    writes it) running ``command``: what it is, the marker line, ``COMMAND``."""
    return (f"// The maxrepeat loop guard for {title}: hands each tool call to the command "
            f"below.\n// Written by `maxrepeat hook install {agent}`; `maxrepeat hook "
            f"uninstall {agent}` removes it.\n" + marker_line(command, "//") + "\n"
            + f"\nconst COMMAND = {json.dumps(command, ensure_ascii=False)};\n")
