"""Drive the real Codex CLI, Gemini CLI and Copilot CLI against a scripted model.

`ScriptedModel` is an HTTP server on 127.0.0.1 (`scripted_chat.ScriptedServer`) that
plays a fixed list of model turns, whatever the agent sends: each turn is a tool call or a
final text. It speaks the two wire APIs these agents use:

* the OpenAI Responses API, streamed (``POST .../responses``, server-sent events): Codex
  CLI (a custom model provider with ``base_url``) and Copilot CLI (its BYOK provider,
  ``COPILOT_PROVIDER_BASE_URL`` with ``COPILOT_PROVIDER_WIRE_API=responses``);
* the Gemini API (``POST /v1beta/models/<m>:streamGenerateContent?alt=sse``; other
  ``generateContent`` calls, for routing or summaries, get a short text): Gemini CLI
  (``GOOGLE_GEMINI_BASE_URL``).

Every request body is kept (``requests``) so that a test can check what the agent sent
the model after a hook spoke. `run_agent` runs one agent binary (from ``.npm-agents``,
installed by ``scripts/test.sh``) as a subprocess in a temporary HOME with telemetry and
updates off, the given hook commands registered, and returns where its session log is.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .scripted_chat import Answer, ScriptedServer, responses_stream, sse

ROOT = Path(__file__).resolve().parent.parent
NPM_BIN = (Path(os.environ.get("MAXREPEAT_NPM_AGENTS", ROOT / ".npm-agents"))
           / "node_modules" / ".bin")
BINARIES = {"codex": "codex", "gemini-cli": "gemini", "copilot-cli": "copilot"}
#: the shell tool each agent offers its model, and how it spells one command
SHELL_CALL = {
    "codex": lambda cmd: ("exec_command", {"cmd": cmd}),
    "gemini-cli": lambda cmd: ("run_shell_command", {"command": cmd}),
    "copilot-cli": lambda cmd: ("bash", {"command": cmd, "description": "run it"}),
}


def binary(agent: str) -> Path:
    """The agent's installed command (``.npm-agents/node_modules/.bin/...``)."""
    return NPM_BIN / BINARIES[agent]


@dataclass
class Turn:
    """One scripted model turn: a tool call (``name`` + ``arguments``) or a ``text``."""

    name: str | None = None
    arguments: dict[str, Any] | None = None
    text: str | None = None


def shell_turns(agent: str, commands: Sequence[str], final: str = "done") -> list[Turn]:
    """A script that runs each command with the agent's shell tool, then says ``final``."""
    turns = []
    for cmd in commands:
        name, args = SHELL_CALL[agent](cmd)
        turns.append(Turn(name=name, arguments=args))
    return [*turns, Turn(text=final)]


@dataclass
class ScriptedModel(ScriptedServer):
    """The scripted model server (see the module docstring)."""

    turns: list[Turn]

    def _next(self) -> Turn:
        turn = self.turns[self.served] if self.served < len(self.turns) else Turn(text="done")
        self.served += 1
        return turn

    def responses_events(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """One Responses API stream (created, the item, completed)."""
        i = self.served
        turn = self._next()
        if turn.name is not None:
            args = json.dumps(turn.arguments or {})
            item: dict[str, Any] = {"type": "function_call", "id": f"fc_{i}",
                                    "call_id": f"call_{i}", "name": turn.name,
                                    "arguments": "", "status": "in_progress"}
            events = [
                {"type": "response.output_item.added", "output_index": 0, "item": dict(item)},
                {"type": "response.function_call_arguments.delta", "output_index": 0,
                 "item_id": item["id"], "delta": args},
                {"type": "response.function_call_arguments.done", "output_index": 0,
                 "item_id": item["id"], "arguments": args},
            ]
            item = dict(item, arguments=args, status="completed")
        else:
            text = turn.text or ""
            item = {"type": "message", "id": f"msg_{i}", "role": "assistant",
                    "status": "in_progress", "content": []}
            part: dict[str, Any] = {"type": "output_text", "text": "", "annotations": []}
            ref = {"output_index": 0, "item_id": item["id"], "content_index": 0}
            events = [
                {"type": "response.output_item.added", "output_index": 0, "item": dict(item)},
                {"type": "response.content_part.added", **ref, "part": dict(part)},
                {"type": "response.output_text.delta", **ref, "delta": text},
                {"type": "response.output_text.done", **ref, "text": text},
            ]
            part = dict(part, text=text)
            events.append({"type": "response.content_part.done", **ref, "part": part})
            item = dict(item, content=[part], status="completed")
        events.append({"type": "response.output_item.done", "output_index": 0, "item": item})
        return responses_stream(i, body.get("model", "scripted"), [item], events)

    def gemini_chunk(self) -> dict[str, Any]:
        """One streamGenerateContent answer (a single chunk)."""
        turn = self._next()
        part = ({"functionCall": {"name": turn.name, "args": turn.arguments or {}}}
                if turn.name is not None else {"text": turn.text or ""})
        return {"candidates": [{"content": {"role": "model", "parts": [part]},
                                "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5,
                                  "totalTokenCount": 15}}

    def get_body(self) -> bytes:  # model lists and the like: nothing to offer
        return b'{"object": "list", "data": [], "models": []}'

    def answer(self, path: str, raw: bytes) -> Answer | int:
        try:
            body = json.loads(raw)
        except ValueError:
            body = {"raw": raw.decode("utf-8", "replace")}
        if path.rstrip("/").endswith("/responses"):
            self.requests.append({"path": path, "body": body})
            return 200, sse(self.responses_events(body), named=True), "text/event-stream"
        if ":streamGenerateContent" in path:
            self.requests.append({"path": path, "body": body})
            return 200, sse([self.gemini_chunk()]), "text/event-stream"
        if ":countTokens" in path:
            return 200, b'{"totalTokens": 10}', "application/json"
        if ":generateContent" in path:  # routing / next-speaker side questions
            text = json.dumps({"reasoning": "scripted", "model_choice": "flash",
                               "next_speaker": "user"})
            answer = {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
                                      "finishReason": "STOP"}]}
            return 200, json.dumps(answer).encode(), "application/json"
        return 404


@dataclass
class AgentRun:
    """What one agent run left: exit code, output, its HOME and its session log."""

    returncode: int
    stdout: str
    stderr: str
    home: Path
    log: Path | None
    #: the environment the agent ran with (for `maxrepeat hook status` as its user runs it)
    env: dict[str, str] = field(default_factory=dict)


def _env(home: Path) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items()
            if k in ("PATH", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")}
    return {**keep, "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_CONFIG_HOME": str(home / ".config"), "NO_COLOR": "1", "CI": "true",
            "TERM": "dumb"}


def _newest(root: Path, pattern: str) -> Path | None:
    found = sorted(root.glob(pattern), key=lambda p: p.stat().st_mtime)
    return found[-1] if found else None


def run_agent(agent: str, model: ScriptedModel, home: Path, hook_flags: list[str] | None,
              prompt: str = "fix the build", timeout: float = 120, scope: str = "user",
              trust: bool = True, bypass_hook_trust: bool = True,
              codex_config: str = "", executable: Path | None = None) -> AgentRun:
    """Run ``agent`` once (non-interactive) against ``model``, after
    ``maxrepeat hook install AGENT --user HOOK_FLAGS`` (None: no guard).

    ``scope="project"``: after ``maxrepeat hook install AGENT HOOK_FLAGS`` in the project
    folder (``home/work``) instead, exactly as written (no ``--preset seed`` added), and,
    with ``trust``, the step each agent's page gives for a project's hooks to load in a
    non-interactive run: ``codex exec --trust``, ``COPILOT_ALLOW_ALL=true``,
    ``GEMINI_CLI_TRUST_WORKSPACE=true`` (Gemini CLI's folder trust left on).
    ``bypass_hook_trust=False``: Codex runs only the hooks trusted in its config
    (``codex_config``: TOML added to the config.toml the run writes). ``executable``: the
    ``maxrepeat`` command the hooks run (the venv's by default)."""
    project = scope == "project"
    work = home / "work"
    work.mkdir(parents=True, exist_ok=True)
    env = _env(home)
    url = f"http://127.0.0.1:{model.port}"
    if agent == "codex":
        codex_home = home / ".codex"
        codex_home.mkdir(parents=True, exist_ok=True)
        (codex_home / "config.toml").write_text(
            'model = "scripted"\nmodel_provider = "scripted"\n'
            "check_for_update_on_startup = false\n"
            "[analytics]\nenabled = false\n"
            "[model_providers.scripted]\nname = \"scripted\"\n"
            f'base_url = "{url}/v1"\nwire_api = "responses"\n'
            "request_max_retries = 0\nstream_max_retries = 0\n" + codex_config,
            encoding="utf-8")
        env["CODEX_HOME"] = str(codex_home)
        cmd = [str(binary(agent)), "exec", "--skip-git-repo-check",
               "--dangerously-bypass-approvals-and-sandbox",
               # hooks written by a test are not reviewed in Codex's TUI
               *(["--dangerously-bypass-hook-trust"] if bypass_hook_trust else []),
               *(["--trust"] if project and trust else []), prompt]
    elif agent == "gemini-cli":
        gem = home / ".gemini"
        gem.mkdir(parents=True, exist_ok=True)
        settings = {"security": {"auth": {"selectedType": "gemini-api-key"},
                                 "folderTrust": {"enabled": project}},
                    "privacy": {"usageStatisticsEnabled": False},
                    "telemetry": {"enabled": False},
                    "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
                    # Gemini CLI's own fixed loop detector would end the run at 5 copies,
                    # before the guard under test gets there
                    "model": {"disableLoopDetection": True}}
        (gem / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
        env.update({"GOOGLE_GEMINI_BASE_URL": url, "GEMINI_API_KEY": "scripted",
                    "GEMINI_TELEMETRY_ENABLED": "false"})
        if trust or not project:
            env["GEMINI_CLI_TRUST_WORKSPACE"] = "true"
        cmd = [str(binary(agent)), "-p", prompt, "--yolo", "-m", "gemini-2.5-flash"]
    elif agent == "copilot-cli":
        env.update({"COPILOT_HOME": str(home / ".copilot"), "COPILOT_OFFLINE": "true",
                    "COPILOT_PROVIDER_BASE_URL": f"{url}/v1",
                    "COPILOT_PROVIDER_WIRE_API": "responses", "COPILOT_MODEL": "gpt-5.4",
                    "COPILOT_AUTO_UPDATE": "false"})
        # the binary unpacks its package (~200 MB) into a cache: share one across runs
        cache = os.environ.get("MAXREPEAT_COPILOT_CACHE", str(ROOT / ".npm-agents" / "cache"))
        env["COPILOT_CACHE_HOME"] = cache
        if project and trust:
            env["COPILOT_ALLOW_ALL"] = "true"  # --allow-all alone does not load repo hooks
        cmd = [str(binary(agent)), "-p", prompt, "--allow-all", "--no-auto-update"]
    else:
        raise ValueError(agent)
    if hook_flags is not None:
        # what a user runs: maxrepeat hook install AGENT --user FLAGS; the seed's
        # defaults under the flags (not the live preset's), so that the flags alone say
        # what the guard grades with
        exe = executable or Path(sys.executable).parent / "maxrepeat"
        seed = [] if "--config" in hook_flags or "--preset" in hook_flags or project else [
            "--preset", "seed"]
        where = [] if project else ["--user"]
        done = subprocess.run([str(exe), "hook", "install", agent, *where, *seed, *hook_flags,
                               "--executable", str(exe)], cwd=work, env=env,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
    proc = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)
    if agent == "codex":
        log = _newest(home / ".codex" / "sessions", "**/rollout-*.jsonl")
    elif agent == "gemini-cli":
        log = _newest(home / ".gemini" / "tmp", "*/chats/session-*.json*")
    else:
        log = _newest(home / ".copilot" / "session-state", "*/events.jsonl")
    return AgentRun(proc.returncode, proc.stdout, proc.stderr, home, log, env)
