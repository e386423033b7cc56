"""Local stand-ins for the three model APIs, close enough on the wire for the official SDKs (and for Ollama's
own API, which the model-client example of docs/EXTENDING.md speaks).

Each server runs `http.server` in a thread on 127.0.0.1 (ephemeral port), records every request
(method, path, headers, JSON body) and answers from a script: a queue of `Reply`s, each a text
answer, tool calls, an error status (optionally with Retry-After) or a "context too long" error
in that provider's own words. `always` sets the answer used once the queue is empty; with neither,
the server answers 418 "script exhausted", which no client retries, so a test that under-scripts
fails loudly instead of hanging.

    def test_x(openai_server):
        openai_server.script(reply_text("hi"))
        client = create_client("gpt-4o", base_url=openai_server.base_url, api_key="test")
        ...
        assert openai_server.requests[0].body["model"] == "gpt-4o"

The fixtures `openai_server`, `vllm_server`, `responses_server`, `anthropic_server`, `gemini_server`
and `ollama_server` are in tests/conftest.py. Pass `base_url` to `create_client` (any provider) with
any api_key.
"""
from __future__ import annotations

import base64
import itertools
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HOST = "127.0.0.1"  # where every wire server listens, on a port of its own


@dataclass(frozen=True)
class ScriptedCall:
    name: str
    arguments: dict[str, Any] | str    # a str is sent verbatim (OpenAI) to test invalid JSON


@dataclass(frozen=True)
class Reply:
    kind: str                           # "text" | "tool_calls" | "error" | "context_too_long"
    text: str = ""
    calls: tuple[ScriptedCall, ...] = ()
    status: int = 200
    message: str = ""
    retry_after: str | None = None
    input_tokens: int = 11
    output_tokens: int = 7
    delay: float = 0.0                  # seconds the server waits before answering (a stalled server)


def reply_text(text: str, input_tokens: int = 11, output_tokens: int = 7) -> Reply:
    return Reply("text", text=text, input_tokens=input_tokens, output_tokens=output_tokens)


def reply_tool_calls(*calls: tuple[str, dict[str, Any] | str], text: str = "",
                     input_tokens: int = 11, output_tokens: int = 7) -> Reply:
    """`calls` are (name, arguments) pairs; the text, if any, comes before the calls."""
    return Reply("tool_calls", text=text, calls=tuple(ScriptedCall(n, a) for n, a in calls),
                 input_tokens=input_tokens, output_tokens=output_tokens)


def reply_error(status: int, message: str = "scripted error", retry_after: str | None = None) -> Reply:
    return Reply("error", status=status, message=message, retry_after=retry_after)


def reply_context_too_long() -> Reply:
    return Reply("context_too_long")


def reply_raw(body: str, status: int = 200) -> Reply:
    """`body` sent as it is (labelled JSON), in any provider's place: a proxy's page, another server."""
    return Reply("raw", text=body, status=status)


def reply_after(seconds: float, reply: Reply) -> Reply:
    """`reply`, once the server has waited `seconds` (longer than the client's timeout: no answer)."""
    return replace(reply, delay=seconds)


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]             # lower-cased names
    body: Any                           # parsed JSON, or None


@dataclass
class Answer:
    status: int
    body: dict[str, Any] | None
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None


class WireServer:
    """The transport and the script; subclasses render a `Reply` in one provider's format."""
    provider = ""

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self.rejections: list[str] = []     # messages of the requests validate() refused
        self._queue: deque[Reply] = deque()
        self._default: Reply | None = None
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._httpd = ThreadingHTTPServer((HOST, 0), self._handler_class())
        self._httpd.daemon_threads = True
        # A short poll interval keeps close() (fixture teardown) fast.
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02},
                                        name=f"{self.provider}-wire", daemon=True)
        self._thread.start()

    @property
    def root_url(self) -> str:
        return f"http://{HOST}:{self._httpd.server_port}"

    @property
    def base_url(self) -> str:
        """What to pass as `base_url` to the SDK / create_client."""
        return self.root_url

    def script(self, *replies: Reply) -> WireServer:
        with self._lock:
            self._queue.extend(replies)
        return self

    def always(self, reply: Reply) -> WireServer:
        with self._lock:
            self._default = reply
        return self

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def next_id(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids)}"

    # --- per-provider rendering -------------------------------------------------------------
    def render(self, reply: Reply, request: RecordedRequest) -> Answer:
        raise NotImplementedError

    def handles(self, method: str, path: str) -> bool:
        raise NotImplementedError

    def validate(self, request: RecordedRequest) -> str | None:
        """What the real API would refuse in this request (answered 400 in the provider's format), or None."""
        return None

    # --- transport ----------------------------------------------------------------------------
    def _answer(self, request: RecordedRequest) -> Answer:
        if not self.handles(request.method, request.path):
            return Answer(404, {"error": {"message": f"no route {request.method} {request.path}"}})
        with self._lock:
            self.requests.append(request)
            problem = self.validate(request)
            if problem is not None:
                self.rejections.append(problem)
                return self.render(reply_error(400, problem), request)
            reply = self._queue.popleft() if self._queue else self._default
        if callable(reply):      # a reply computed from the request, e.g. from the image it carried
            reply = reply(request)
        if reply is None:
            return self.render(reply_error(418, "wire server script exhausted"), request)
        if reply.delay:
            time.sleep(reply.delay)
        if reply.kind == "raw":
            return Answer(reply.status, None, raw=reply.text.encode())
        return self.render(reply, request)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"   # keep-alive, as the SDKs' HTTP clients expect

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                request = RecordedRequest(self.command, self.path,
                                          {k.lower(): v for k, v in self.headers.items()}, body)
                self._send(server._answer(request))

            def _send(self, answer: Answer) -> None:
                payload = answer.raw if answer.raw is not None else json.dumps(answer.body).encode()
                try:
                    self.send_response(answer.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for name, value in answer.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client stopped waiting (a stalled answer)

            def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
                pass

        return Handler


ANTHROPIC_COMPUTER_BETAS = {"computer_20241022": "computer-use-2024-10-22",
                            "computer_20250124": "computer-use-2025-01-24",
                            "computer_20251124": "computer-use-2025-11-24"}


def _error_headers(reply: Reply) -> dict[str, str]:
    return {"Retry-After": reply.retry_after} if reply.retry_after is not None else {}


class OpenAIWireServer(WireServer):
    """POST /v1/chat/completions (Chat Completions, non-streaming)."""
    provider = "openai"

    @property
    def base_url(self) -> str:
        return self.root_url + "/v1"

    def handles(self, method: str, path: str) -> bool:
        return method == "POST" and path.rstrip("/").endswith("/chat/completions")

    def render(self, reply: Reply, request: RecordedRequest) -> Answer:
        if reply.kind == "error":
            error_type = "rate_limit_error" if reply.status == 429 else "server_error"
            return Answer(reply.status, {"error": {"message": reply.message, "type": error_type,
                                                   "param": None, "code": None}}, _error_headers(reply))
        if reply.kind == "context_too_long":
            return Answer(400, {"error": {
                "message": "This model's maximum context length is 128000 tokens. However, your "
                           "messages resulted in 130532 tokens. Please reduce the length of the messages.",
                "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}})
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.calls:
            message["tool_calls"] = [
                {"id": self.next_id("call_"), "type": "function",
                 "function": {"name": call.name,
                              "arguments": call.arguments if isinstance(call.arguments, str)
                              else json.dumps(call.arguments)}}
                for call in reply.calls]
        body = request.body or {}
        return Answer(200, {
            "id": self.next_id("chatcmpl-"), "object": "chat.completion", "created": 1700000000,
            "model": body.get("model", "unknown"),
            "choices": [{"index": 0, "message": message, "logprobs": None,
                         "finish_reason": "tool_calls" if reply.calls else "stop"}],
            "usage": {"prompt_tokens": reply.input_tokens, "completion_tokens": reply.output_tokens,
                      "total_tokens": reply.input_tokens + reply.output_tokens}})


# The top-level fields vLLM's chat completion request accepts (OpenAI's, and vLLM's sampling extras).
VLLM_CHAT_FIELDS = frozenset({
    "model", "messages", "max_tokens", "max_completion_tokens", "temperature", "top_p", "n", "stream",
    "stream_options", "stop", "seed", "presence_penalty", "frequency_penalty", "logit_bias", "logprobs",
    "top_logprobs", "user", "tools", "tool_choice", "parallel_tool_calls", "response_format",
    "top_k", "min_p", "repetition_penalty", "length_penalty", "stop_token_ids", "skip_special_tokens",
    "spaces_between_special_tokens", "min_tokens", "chat_template_kwargs", "guided_json", "guided_regex",
})


class VLLMWireServer(OpenAIWireServer):
    """Chat Completions as vLLM serves them: a top-level field vLLM does not know is refused (as its
    request model forbids extra fields), and so is a message content type other than text and image_url."""

    def validate(self, request: RecordedRequest) -> str | None:
        body = request.body or {}
        unknown = sorted(set(body) - VLLM_CHAT_FIELDS)
        if unknown:
            return (f"[{{'type': 'extra_forbidden', 'loc': ('body', '{unknown[0]}'), "
                    "'msg': 'Extra inputs are not permitted'}]")
        for index, message in enumerate(body.get("messages") or []):
            content = message.get("content")
            for part in content if isinstance(content, list) else []:
                if part.get("type") not in ("text", "image_url"):
                    return f"messages[{index}]: unsupported content part type {part.get('type')!r}"
        return None


class OpenAIResponsesServer(WireServer):
    """POST /v1/responses (Responses API, non-streaming) with the computer-use tools. Scripted calls named
    "computer_call" become computer_call items: arguments {"action": {...}} or {"actions": [...]}, and
    optionally "pending_safety_checks": [{"id", "code", "message"}]."""
    provider = "openai"

    def __init__(self) -> None:
        self.issued: dict[str, list[tuple[str, list[str]]]] = {}   # response id -> (call_id, safety check ids)
        super().__init__()

    @property
    def base_url(self) -> str:
        return self.root_url + "/v1"

    def handles(self, method: str, path: str) -> bool:
        return method == "POST" and path.rstrip("/").endswith("/v1/responses")

    def validate(self, request: RecordedRequest) -> str | None:
        body = request.body or {}
        tools = body.get("tools") or []
        for index, tool in enumerate(tools):
            if tool.get("type") == "computer_use_preview":
                for field_name in ("display_width", "display_height", "environment"):
                    if field_name not in tool:
                        return f"Missing required parameter: 'tools[{index}].{field_name}'."
                if body.get("truncation") != "auto":
                    return "truncation must be set to 'auto' when using the computer use tool"
        given = body.get("input")
        items = given if isinstance(given, list) else []
        for item in items:
            content = item.get("content")
            for part in content if isinstance(content, list) else []:
                if part.get("type") == "input_image" and "detail" not in part:
                    return "Missing required parameter: 'input[].content[].detail'."
        previous = body.get("previous_response_id")
        if previous is None:
            return None
        if previous not in self.issued:
            return f"Previous response with id '{previous}' not found."
        outputs = {item.get("call_id"): item for item in items if item.get("type") == "computer_call_output"}
        for call_id, check_ids in self.issued[previous]:
            output = outputs.get(call_id)
            if output is None:
                return f"No tool output found for computer call {call_id}."
            screenshot = output.get("output") or {}
            if screenshot.get("type") != "computer_screenshot" or \
                    not str(screenshot.get("image_url", "")).startswith("data:image/"):
                return f"computer_call_output for {call_id} must carry a computer_screenshot image"
            acknowledged = {check.get("id") for check in output.get("acknowledged_safety_checks") or []}
            if set(check_ids) - acknowledged:
                return f"Safety checks {sorted(set(check_ids) - acknowledged)} for {call_id} were not acknowledged."
        return None

    def render(self, reply: Reply, request: RecordedRequest) -> Answer:
        if reply.kind == "error":
            return Answer(reply.status, {"error": {"message": reply.message, "type": "invalid_request_error",
                                                   "param": None, "code": None}}, _error_headers(reply))
        if reply.kind == "context_too_long":
            return Answer(400, {"error": {"message": "Your input exceeds the context window of this model.",
                                          "type": "invalid_request_error", "param": "input",
                                          "code": "context_length_exceeded"}})
        output: list[dict[str, Any]] = []
        issued: list[tuple[str, list[str]]] = []
        if reply.text:
            output.append({"type": "message", "id": self.next_id("msg_"), "role": "assistant", "status": "completed",
                           "content": [{"type": "output_text", "text": reply.text, "annotations": []}]})
        for call in reply.calls:
            if isinstance(call.arguments, str):
                raise ValueError("the Responses API sends a computer call's fields as a JSON object, not a string")
            arguments = dict(call.arguments)
            checks = arguments.pop("pending_safety_checks", [])
            item = {"type": "computer_call", "id": self.next_id("cu_"), "call_id": self.next_id("call_"),
                    "status": "completed", "pending_safety_checks": checks, **arguments}
            output.append(item)
            issued.append((item["call_id"], [check["id"] for check in checks]))
        response_id = self.next_id("resp_")
        self.issued[response_id] = issued
        body = request.body or {}
        return Answer(200, {
            "id": response_id, "object": "response", "created_at": 1700000000, "status": "completed",
            "model": body.get("model", "unknown"), "output": output, "parallel_tool_calls": True,
            "tool_choice": "auto", "tools": body.get("tools", []), "truncation": body.get("truncation"),
            "usage": {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens,
                      "total_tokens": reply.input_tokens + reply.output_tokens,
                      "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}})


class AnthropicWireServer(WireServer):
    """POST /v1/messages (Messages API, non-streaming)."""
    provider = "anthropic"

    def handles(self, method: str, path: str) -> bool:
        return method == "POST" and path.split("?")[0].rstrip("/").endswith("/v1/messages")

    def validate(self, request: RecordedRequest) -> str | None:
        body = request.body or {}
        betas = [b.strip() for b in request.headers.get("anthropic-beta", "").split(",") if b.strip()]
        for index, tool in enumerate(body.get("tools") or []):
            kind = tool.get("type")
            if kind in ANTHROPIC_COMPUTER_BETAS:
                if ANTHROPIC_COMPUTER_BETAS[kind] not in betas:
                    return (f"tools.{index}: tool type '{kind}' requires the anthropic-beta header "
                            f"'{ANTHROPIC_COMPUTER_BETAS[kind]}' (got {betas})")
                if tool.get("name") != "computer":
                    return f"tools.{index}.name: must be 'computer' for {kind}"
                for field_name in ("display_width_px", "display_height_px"):
                    if not isinstance(tool.get(field_name), int) or tool[field_name] < 1:
                        return f"tools.{index}.{field_name}: a positive integer is required"
                if "enable_zoom" in tool and kind != "computer_20251124":
                    return f"tools.{index}.enable_zoom: not a field of {kind}"
            elif kind == "computer_toolset_20260801":
                extra = sorted(set(tool) - {"type", "configs", "cache_control"})
                if extra:
                    return f"tools.{index}: a toolset entry carries only type, configs and cache_control, not {extra}"
        messages = body.get("messages") or []
        for index, message in enumerate(messages):
            content = message.get("content")
            blocks = content if isinstance(content, list) else []
            uses = [b["id"] for b in blocks if b.get("type") == "tool_use"]
            if message.get("role") != "assistant" or not uses:
                continue
            following = messages[index + 1]["content"] if index + 1 < len(messages) else []
            following = following if isinstance(following, list) else []
            answered = [b.get("tool_use_id") for b in following if b.get("type") == "tool_result"]
            missing = [u for u in uses if u not in answered]
            if missing:
                return (f"messages.{index + 1}: `tool_use` ids were found without `tool_result` blocks "
                        f"immediately after: {', '.join(missing)}")
            if following and following[0].get("type") != "tool_result":
                return f"messages.{index + 1}: tool_result blocks must come first in the user turn"
        return None

    def render(self, reply: Reply, request: RecordedRequest) -> Answer:
        if reply.kind == "error":
            error_type = {400: "invalid_request_error", 429: "rate_limit_error",
                          529: "overloaded_error"}.get(reply.status, "api_error")
            return Answer(reply.status, {"type": "error", "error": {"type": error_type, "message": reply.message}},
                          _error_headers(reply))
        if reply.kind == "context_too_long":
            return Answer(400, {"type": "error", "error": {
                "type": "invalid_request_error", "message": "prompt is too long: 215000 tokens > 200000 maximum"}})
        content: list[dict[str, Any]] = []
        if reply.text:
            content.append({"type": "text", "text": reply.text})
        for call in reply.calls:
            if isinstance(call.arguments, str):
                raise ValueError("the Messages API sends tool input as a JSON object, not a string")
            content.append({"type": "tool_use", "id": self.next_id("toolu_"), "name": call.name,
                            "input": call.arguments})
        body = request.body or {}
        return Answer(200, {
            "id": self.next_id("msg_"), "type": "message", "role": "assistant",
            "model": body.get("model", "unknown"), "content": content,
            "stop_reason": "tool_use" if reply.calls else "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens}})


class GeminiWireServer(WireServer):
    """POST /{version}/models/{model}:generateContent (Gemini Developer API)."""
    provider = "google"

    def handles(self, method: str, path: str) -> bool:
        return method == "POST" and path.split("?")[0].endswith(":generateContent")

    def validate(self, request: RecordedRequest) -> str | None:
        body = request.body or {}
        computer_use = False
        for index, tool in enumerate(body.get("tools") or []):
            computer = tool.get("computerUse", tool.get("computer_use"))
            if computer is not None:
                computer_use = True
                if not computer.get("environment"):
                    return f"tools[{index}].computer_use.environment is required"
        contents = body.get("contents") or []
        for index, content in enumerate(contents):
            calls = [p["functionCall"] for p in content.get("parts") or [] if "functionCall" in p]
            if content.get("role") != "model" or not calls:
                continue
            following = contents[index + 1].get("parts") or [] if index + 1 < len(contents) else []
            responses = [p["functionResponse"] for p in following if "functionResponse" in p]
            if [c.get("name") for c in calls] != [r.get("name") for r in responses]:
                return (f"contents[{index + 1}]: the function responses {[r.get('name') for r in responses]} must "
                        f"answer the function calls {[c.get('name') for c in calls]} one for one, in order")
            for call, response in zip(calls, responses, strict=True):  # same names, checked above
                decision = (call.get("args") or {}).get("safety_decision") or {}
                if decision.get("decision") == "require_confirmation" and \
                        (response.get("response") or {}).get("safety_acknowledgement") != "true":
                    return (f"contents[{index + 1}]: {call.get('name')} required confirmation; "
                            "safety_acknowledgement missing")
            if computer_use and index + 1 == len(contents) - 1:
                for response in responses:
                    blobs = [p.get("inlineData", p.get("inline_data")) or {} for p in response.get("parts") or []]
                    if not any(str(b.get("mimeType", b.get("mime_type", ""))).startswith("image/") for b in blobs):
                        return (f"contents[{index + 1}]: the computer use function response for "
                                f"{response.get('name')} must include a screenshot")
        return None

    def render(self, reply: Reply, request: RecordedRequest) -> Answer:
        if reply.kind == "error":
            status = {429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}.get(reply.status, "UNKNOWN")
            return Answer(reply.status, {"error": {"code": reply.status, "message": reply.message, "status": status}},
                          _error_headers(reply))
        if reply.kind == "context_too_long":
            return Answer(400, {"error": {
                "code": 400, "status": "INVALID_ARGUMENT",
                "message": "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."}})
        parts: list[dict[str, Any]] = []
        if reply.text:
            parts.append({"text": reply.text})
        for call in reply.calls:
            if isinstance(call.arguments, str):
                raise ValueError("generateContent sends function call args as a JSON object, not a string")
            # Gemini 3 signs its function calls; the signature must come back with the call.
            signature = base64.b64encode(self.next_id("signature-").encode()).decode()
            parts.append({"functionCall": {"name": call.name, "args": call.arguments},
                          "thoughtSignature": signature})
        return Answer(200, {
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": reply.input_tokens, "candidatesTokenCount": reply.output_tokens,
                              "totalTokenCount": reply.input_tokens + reply.output_tokens},
            "modelVersion": request.path.split("/models/")[-1].split(":")[0]})


class OllamaWireServer(WireServer):
    """POST /api/chat, Ollama's own chat API (non-streaming): images as base64 strings beside a message's
    text, errors as {"error": "..."}; what docs/examples/model_client/ollama_native.py speaks."""
    provider = "ollama"

    def handles(self, method: str, path: str) -> bool:
        return method == "POST" and path == "/api/chat"

    def validate(self, request: RecordedRequest) -> str | None:
        body = request.body or {}
        if body.get("stream") is not False:
            return "this server answers only non-streaming requests (stream: false)"
        for index, message in enumerate(body.get("messages") or []):
            if not isinstance(message.get("content"), str):
                return f"messages[{index}].content must be a string"
            for image in message.get("images") or []:
                base64.b64decode(image, validate=True)
        return None

    def render(self, reply: Reply, request: RecordedRequest) -> Answer:
        if reply.kind == "error":
            return Answer(reply.status, {"error": reply.message}, _error_headers(reply))
        if reply.kind == "context_too_long":
            return Answer(400, {"error": "the input length exceeds the context length"})
        body = request.body or {}
        return Answer(200, {"model": body.get("model", "unknown"), "created_at": "2026-01-01T00:00:00Z",
                            "message": {"role": "assistant", "content": reply.text}, "done": True,
                            "done_reason": "stop", "prompt_eval_count": reply.input_tokens,
                            "eval_count": reply.output_tokens})

