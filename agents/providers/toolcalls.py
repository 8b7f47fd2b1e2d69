"""Tool calls wherever a server puts them, checked against the tools offered (DESIGN §10).

Hosted APIs return structured `tool_calls`. Local servers often do not: llama.cpp, Ollama or vLLM without a tool
parser pass the model's text through, and models write their calls in it in a handful of ways:

- fenced JSON: ```json {"name": "route_message", "arguments": {...}} ``` (often after a sentence of prose);
- Hermes / Qwen tags: <tool_call>{"name": ..., "arguments": ...}</tool_call>, one per call;
- Mistral: [TOOL_CALLS] [{"name": ..., "arguments": ...}], or [TOOL_CALLS]name[ARGS]{...} in newer templates;
- a bare object, alone or inside prose: {"name": ..., "arguments": ...}, {"function": ..., "parameters": ...}
  (Llama 3's shape), {"function": {"name": ..., "arguments": ...}} (the OpenAI shape echoed).

`calls_in_text` reads them, in that order of precedence. When the runtime forced one tool, an object that is
only arguments (the model skipped the envelope) is read as that tool's call. `call_error` checks one call
against the tools offered in the same request: a name not offered, or arguments failing the tool's JSON schema
(the `jsonschema` package, Draft 2020-12, as pydantic writes the schemas), gives the error the model is told in a
repair round, and the runtime records if the repair fails too.
"""

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError, ValidationError

from agents.providers.base import ToolCallIntent, ToolSpec

STRUCTURED, FENCED, HERMES, BARE, MISTRAL = "structured", "fenced_json", "hermes", "bare_json", "mistral"

NAME_KEYS = ("name", "function", "tool", "tool_name")
ARGUMENT_KEYS = ("arguments", "parameters", "args", "input", "tool_input")
ENVELOPE_KEYS = frozenset({"id", "type", "call_id"})  # what may sit beside a name when the call has no arguments
SCANNED_CHARS = 20_000  # prose longer than this is not searched for bare objects (a model's call comes early)
MAX_PROBLEMS = 5

_FENCE = re.compile(r"```[ \t]*([A-Za-z_-]*)[ \t]*\n?(.*?)```", re.DOTALL)
_HERMES = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|\Z)", re.DOTALL)
_MISTRAL_MARK = "[TOOL_CALLS]"
_MISTRAL_NAMED = re.compile(r"\[TOOL_CALLS\]\s*([\w.-]+)\s*(?:\[CALL_ID\]\s*\w+\s*)?\[ARGS\]")
# Special tokens some templates leave in the text before a bare call (Llama 3's python tag, Granite's tool call).
_LEAD_TOKENS = re.compile(r"<\|python_tag\|>|<\|tool_call\|>|<tool_calls?>|</tool_calls?>")
_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class TextCalls:
    calls: list[ToolCallIntent]
    call_format: str
    text: str  # the text without the calls: what the model said besides them


def calls_in_text(text: str, tools: list[ToolSpec], *, forced: str | None = None) -> TextCalls | None:
    """The tool calls written in a model's text, or None when it holds none. `forced` is the one tool the
    request required by name: a JSON object without a call's envelope is then read as its arguments."""
    if not text or not tools:
        return None
    names = {tool.name for tool in tools}
    for reader in (_mistral, _hermes, _fenced, _bare):
        found = reader(text, names, forced)
        if found is not None:
            return found
    return None


def call_error(call: ToolCallIntent, tools: dict[str, ToolSpec]) -> dict[str, Any] | None:
    """Why this call cannot run as offered ({"code", "message", "details"}), or None when it can."""
    spec = tools.get(call.name)
    if spec is None:
        offered = ", ".join(sorted(tools)) or "none"
        return _error("tool_not_offered", f"There is no tool {call.name!r} in this request; offered: {offered}.")
    if not isinstance(call.arguments, dict):
        return _error("invalid_arguments", f"The arguments of {call.name} must be a JSON object.")
    validator = _validator(json.dumps(spec.parameters, sort_keys=True))
    if validator is None:
        return None  # a schema we cannot compile is the tool's problem, not the model's: the runtime checks again
    errors = sorted(validator.iter_errors(call.arguments), key=lambda e: [str(p) for p in e.absolute_path])
    if not errors:
        return None
    problems = []
    for found in errors[:MAX_PROBLEMS]:
        said = _closest(found)
        field = ".".join(str(p) for p in said.absolute_path) or "(arguments)"
        problems.append({"field": field, "problem": said.message[:300]})
    return _error("invalid_arguments", f"The arguments of {call.name} do not match its schema.", {"problems": problems})


def describe_error(call: ToolCallIntent, error: dict[str, Any]) -> str:
    """One line for the repair message: which call, and what was wrong with it."""
    problems = error.get("details", {}).get("problems", [])
    said = "; ".join(f"{p['field']}: {p['problem']}" for p in problems)
    return f"- {call.name}: {error['message']}" + (f" ({said})" if said else "")


# --- the readers, most specific first -----------------------------------------------------------------------


def _mistral(text: str, names: set[str], forced: str | None) -> TextCalls | None:
    start = text.find(_MISTRAL_MARK)
    if start < 0:
        return None
    calls: list[tuple[str, Any]] = []
    named = list(_MISTRAL_NAMED.finditer(text, start))
    if named:  # [TOOL_CALLS]name[ARGS]{...}, repeated
        for match in named:
            value, _ = _decode_at(text, match.end())
            calls.append((match.group(1), value if value is not None else {}))
    else:  # [TOOL_CALLS] [{...}, ...]
        value, _ = _decode_at(text, start + len(_MISTRAL_MARK))
        calls = _shape(value, names, forced) or []
    return _found(calls, MISTRAL, text[:start])


def _hermes(text: str, names: set[str], forced: str | None) -> TextCalls | None:
    if "<tool_call>" not in text:
        return None
    calls: list[tuple[str, Any]] = []
    for match in _HERMES.finditer(text):
        value, _ = _decode_at(match.group(1), 0)
        calls += _shape(value, names, forced) or []
    return _found(calls, HERMES, _HERMES.sub("", text))


def _fenced(text: str, names: set[str], forced: str | None) -> TextCalls | None:
    calls: list[tuple[str, Any]] = []
    kept = text
    for match in _FENCE.finditer(text):
        body = match.group(2).strip()
        value, _ = _decode_at(body, 0)
        if value is None:
            value, _ = _decode_at(body, _first_bracket(body))
        shaped = _shape(value, names, forced)
        if shaped:
            calls += shaped
            kept = kept.replace(match.group(0), "", 1)
    return _found(calls, FENCED, kept)


def _bare(text: str, names: set[str], forced: str | None) -> TextCalls | None:
    scanned = _LEAD_TOKENS.sub(" ", text[:SCANNED_CHARS])
    calls: list[tuple[str, Any]] = []
    spans: list[tuple[int, int]] = []
    position = _first_bracket(scanned)
    while 0 <= position < len(scanned):
        value, end = _decode_at(scanned, position)
        shaped = _shape(value, names, forced) if value is not None else None
        if shaped:
            calls += shaped
            spans.append((position, end))
            position = end
        else:
            position += 1
        position = _first_bracket(scanned, position)
    kept = scanned
    for begin, end in reversed(spans):
        kept = kept[:begin] + kept[end:]
    return _found(calls, BARE, kept)


# --- shapes -------------------------------------------------------------------------------------------------


def _shape(value: Any, names: set[str], forced: str | None) -> list[tuple[str, Any]] | None:
    """(name, arguments) of each call a JSON value holds, or None when it is not a call."""
    if isinstance(value, list):
        calls = [call for item in value for call in (_shape(item, names, forced) or [])]
        return calls or None
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("tool_calls"), list):
        return _shape(value["tool_calls"], names, forced)
    function = value.get("function")
    if isinstance(function, dict) and isinstance(function.get("name"), str):
        return [(function["name"], _argument_value(function))]
    name_key = next((k for k in NAME_KEYS if isinstance(value.get(k), str) and value[k].strip()), None)
    if name_key is not None:
        name = value[name_key].strip()
        # With arguments it is a call, even to a tool not offered (then repaired); a name alone is one only when
        # it names an offered tool ({"name": "Poster 2"} is data).
        if any(k in value for k in ARGUMENT_KEYS) or (name in names and not set(value) - {name_key} - ENVELOPE_KEYS):
            return [(name, _argument_value(value))]
    if forced is not None and forced in names:
        # The envelope was skipped: the object is the arguments of the one tool the request required.
        return [(forced, value)]
    return None


def _argument_value(holder: dict[str, Any]) -> dict[str, Any] | str:
    raw = next((holder[k] for k in ARGUMENT_KEYS if k in holder), None)
    if raw is None:
        return {}
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        if not raw.strip():
            return {}
        try:
            parsed = json.loads(raw)
        except ValueError:
            return raw
        return parsed if isinstance(parsed, dict) else raw
    return json.dumps(raw)  # a list or a number: not arguments; validation says so


def _found(calls: list[tuple[str, Any]], call_format: str, kept: str) -> TextCalls | None:
    if not calls:
        return None
    intents = [ToolCallIntent(id=f"call_{i}", name=name, arguments=args) for i, (name, args) in enumerate(calls)]
    return TextCalls(calls=intents, call_format=call_format, text=kept.strip())


def _decode_at(text: str, index: int) -> tuple[Any, int]:
    """The JSON value starting at `index` (whitespace skipped) and where it ends, or (None, index)."""
    while index < len(text) and text[index].isspace():
        index += 1
    if index < 0 or index >= len(text):
        return None, index
    try:
        return _DECODER.raw_decode(text, index)
    except ValueError:
        return None, index


def _first_bracket(text: str, start: int = 0) -> int:
    found = [i for i in (text.find("{", start), text.find("[", start)) if i >= 0]
    return min(found) if found else -1


def _closest(error: ValidationError) -> ValidationError:
    """An error a model can act on. For "none of anyOf matched" (pydantic writes `X | None` that way), the branch
    the value came closest to: the deepest failure, and among equals one not about the type ("'x' is not one of
    [...]", "position: '1' is not of type 'integer'", rather than "... is not of type 'null'")."""
    if not error.context:
        return error
    deepest = max(error.context, key=lambda e: (len(e.absolute_path), e.validator != "type"))
    return _closest(deepest)


def _error(code: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"code": code, "message": message, "details": details or {}}


@lru_cache(maxsize=256)
def _validator(schema_json: str) -> Draft202012Validator | None:
    schema = json.loads(schema_json)
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError:
        return None
    return Draft202012Validator(schema)
