#!/usr/bin/env python3
"""A stand-in for a language model's answers, for tests of the agent adapters.

It is a loopback HTTP server that speaks enough of two model APIs for the real
coding-agent CLIs to run against it:

  * the Anthropic Messages API (POST /v1/messages, streaming SSE or plain JSON,
    and POST /v1/messages/count_tokens), used by Claude Code through
    ANTHROPIC_BASE_URL;
  * the OpenAI Responses API (POST /v1/responses, streaming SSE), used by Codex
    through a model provider whose base_url points here.

What the "model" says is a script (data, a JSON file):

  {"turns": [
     {"text": "optional words", "tool_calls": [{"name": "Bash", "input": {...}}]},
     {"text": "I am done."}
  ]}

A turn may also hold "delay_s": seconds to wait before answering (a slow
model, for tests that interrupt an agent mid-turn).

A request of the main conversation (one that offers tools) is answered with
turn N, where N is the number of model replies already in the request's
history, so a retried request gets the same answer and a resumed conversation
picks up where it stopped (Claude Code adds a made-up reply, "No response
requested.", to a turn that was interrupted; it counts too). A turn with tool_calls ends with stop reason
tool_use (a Responses API function call); a turn without ends the agent's
turn. Past the last turn the answer is a fixed "script exhausted" text. A
request that offers no tools (a side call, e.g. a title or a summary) gets a
short fixed text and consumes no turn. Strings in the script may hold
{NAME}, replaced by --var NAME=VALUE. With --require-key KEY, a request whose
key (x-api-key, or Authorization: Bearer) is another gets HTTP 401 with each
API's authentication error body, as the real services answer a bad key.

Every request is appended to the --log file as one JSON object per line:
method, path, the parsed body, what it was taken for ("main", "side",
"count_tokens", "refused", "unknown") and, for "main", the turn index it got.

Usage: standin_model.py --script FILE --log FILE [--port 0] [--var NAME=VALUE]...
                         [--require-key KEY]
The first line on stdout is "listening on 127.0.0.1:PORT"; SIGTERM stops it.
"""

import argparse
import http.server
import json
import signal
import sys
import threading
import time
import uuid

EXHAUSTED_TEXT = "(stand-in model: the script has no more turns)"
SIDE_TEXT = "Stand-in reply"


def substitute(value, variables):
    """Returns value with {NAME} replaced in every string inside it."""
    if isinstance(value, str):
        for name, replacement in variables.items():
            value = value.replace("{" + name + "}", replacement)
        return value
    if isinstance(value, list):
        return [substitute(v, variables) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, variables) for k, v in value.items()}
    return value


def count_model_replies(items, is_model_item):
    """Counts runs of consecutive model items in a conversation history."""
    replies = 0
    in_reply = False
    for item in items:
        if is_model_item(item):
            if not in_reply:
                replies += 1
            in_reply = True
        else:
            in_reply = False
    return replies


def anthropic_is_model(message):
    return isinstance(message, dict) and message.get("role") == "assistant"


def responses_is_model(item):
    if not isinstance(item, dict):
        return False
    if item.get("type") in ("function_call", "custom_tool_call", "reasoning",
                            "local_shell_call"):
        return True
    return item.get("role") == "assistant"


def rough_tokens(body):
    return max(1, len(json.dumps(body)) // 4)


class Script:
    """The scripted turns and the request log; safe to use from any thread."""

    def __init__(self, turns, log_path, required_key):
        self.turns = turns
        self.log_path = log_path
        self.required_key = required_key
        self.lock = threading.Lock()

    def turn(self, index):
        if index < len(self.turns):
            return self.turns[index]
        return {"text": EXHAUSTED_TEXT}

    def log(self, entry):
        with self.lock, open(self.log_path, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")


def anthropic_content(turn):
    """The content blocks of one scripted turn, Messages API style."""
    blocks = []
    if turn.get("text"):
        blocks.append({"type": "text", "text": turn["text"]})
    for call in turn.get("tool_calls", []):
        blocks.append({"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:24],
                       "name": call["name"], "input": call.get("input", {})})
    return blocks


def anthropic_message(model, blocks, input_tokens):
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    return {
        "id": "msg_" + uuid.uuid4().hex[:24], "type": "message", "role": "assistant",
        "model": model, "content": blocks, "stop_reason": stop, "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": 5 + 5 * len(blocks),
                  "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
    }


def anthropic_sse(message):
    """The Messages API streaming events that carry `message`."""
    start = dict(message, content=[], stop_reason=None)
    start["usage"] = dict(message["usage"], output_tokens=1)
    yield "message_start", {"type": "message_start", "message": start}
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            yield "content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": {"type": "text", "text": ""}}
            yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                          "delta": {"type": "text_delta", "text": block["text"]}}
        else:
            yield "content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": dict(block, input={})}
            yield "content_block_delta", {
                "type": "content_block_delta", "index": index,
                "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield "message_delta", {"type": "message_delta",
                            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                            "usage": {"output_tokens": message["usage"]["output_tokens"]}}
    yield "message_stop", {"type": "message_stop"}


def responses_items(turn):
    """The output items of one scripted turn, Responses API style."""
    items = []
    if turn.get("text"):
        items.append({"type": "message", "id": "msg_" + uuid.uuid4().hex[:24],
                      "role": "assistant", "status": "completed",
                      "content": [{"type": "output_text", "text": turn["text"],
                                   "annotations": []}]})
    for call in turn.get("tool_calls", []):
        arguments = call.get("input", {})
        items.append({"type": "function_call", "id": "fc_" + uuid.uuid4().hex[:24],
                      "call_id": "call_" + uuid.uuid4().hex[:24], "name": call["name"],
                      "arguments": arguments if isinstance(arguments, str)
                      else json.dumps(arguments),
                      "status": "completed"})
    return items


def responses_sse(model, items, input_tokens):
    """The Responses API streaming events that carry `items`."""
    response_id = "resp_" + uuid.uuid4().hex[:24]
    base = {"id": response_id, "object": "response", "model": model, "output": []}
    yield "response.created", {"type": "response.created",
                               "response": dict(base, status="in_progress")}
    for index, item in enumerate(items):
        yield "response.output_item.added", {"type": "response.output_item.added",
                                             "output_index": index, "item": item}
        if item["type"] == "message":
            yield "response.output_text.delta", {
                "type": "response.output_text.delta", "item_id": item["id"],
                "output_index": index, "content_index": 0,
                "delta": item["content"][0]["text"]}
        yield "response.output_item.done", {"type": "response.output_item.done",
                                            "output_index": index, "item": item}
    output_tokens = 5 + 5 * len(items)
    usage = {"input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": output_tokens, "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": input_tokens + output_tokens}
    yield "response.completed", {"type": "response.completed",
                                 "response": dict(base, status="completed", output=items,
                                                  usage=usage)}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    script = None  # set by main()

    def log_message(self, fmt, *args):
        sys.stderr.write("standin: " + (fmt % args) + "\n")

    def read_body(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw) if raw else {}
        except ValueError:
            return {"unparsed": raw.decode("utf-8", "replace")}

    def send_json(self, status, payload):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_sse(self, events):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for name, payload in events:
            self.wfile.write(f"event: {name}\ndata: {json.dumps(payload)}\n\n".encode())
            self.wfile.flush()
        self.close_connection = True

    def do_GET(self):
        self.script.log({"method": "GET", "path": self.path, "kind": "unknown"})
        self.send_json(404, {"type": "error", "error": {
            "type": "not_found_error", "message": "no such path: " + self.path}})

    def key_refused(self):
        """Answers 401 and returns True when the request's key is not the required one."""
        if self.script.required_key is None:
            return False
        key = self.headers.get("x-api-key")
        bearer = self.headers.get("Authorization", "")
        if key is None and bearer.startswith("Bearer "):
            key = bearer[len("Bearer "):]
        if key == self.script.required_key:
            return False
        if self.path.split("?")[0].endswith("/responses"):
            self.send_json(401, {"error": {
                "message": "Incorrect API key provided.", "type": "invalid_request_error",
                "param": None, "code": "invalid_api_key"}})
        else:
            self.send_json(401, {"type": "error", "error": {
                "type": "authentication_error", "message": "invalid x-api-key"}})
        return True

    def do_POST(self):
        body = self.read_body()
        path = self.path.split("?")[0]
        entry = {"method": "POST", "path": self.path, "body": body}
        if self.key_refused():
            entry["kind"] = "refused"
            self.script.log(entry)
        elif path.endswith("/v1/messages/count_tokens"):
            entry["kind"] = "count_tokens"
            self.script.log(entry)
            self.send_json(200, {"input_tokens": rough_tokens(body)})
        elif path.endswith("/v1/messages"):
            self.answer_messages(body, entry)
        elif path.endswith("/responses"):
            self.answer_responses(body, entry)
        else:
            entry["kind"] = "unknown"
            self.script.log(entry)
            self.send_json(404, {"type": "error", "error": {"type": "not_found_error",
                                                            "message": "no such path: " + path}})

    def answer_messages(self, body, entry):
        model = body.get("model", "stand-in")
        if body.get("tools"):
            index = count_model_replies(body.get("messages", []), anthropic_is_model)
            turn = self.script.turn(index)
            entry.update(kind="main", turn=index)
        else:
            turn = {"text": SIDE_TEXT}
            entry["kind"] = "side"
        self.script.log(entry)
        time.sleep(turn.get("delay_s", 0))
        message = anthropic_message(model, anthropic_content(turn), rough_tokens(body))
        if body.get("stream"):
            self.send_sse(anthropic_sse(message))
        else:
            self.send_json(200, message)

    def answer_responses(self, body, entry):
        model = body.get("model", "stand-in")
        history = body.get("input", [])
        if isinstance(history, str):
            history = [{"role": "user", "content": history}]
        if body.get("tools"):
            index = count_model_replies(history, responses_is_model)
            turn = self.script.turn(index)
            entry.update(kind="main", turn=index)
        else:
            turn = {"text": SIDE_TEXT}
            entry["kind"] = "side"
        self.script.log(entry)
        time.sleep(turn.get("delay_s", 0))
        self.send_sse(responses_sse(model, responses_items(turn), rough_tokens(body)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--script", required=True, help="JSON file with the turns")
    parser.add_argument("--log", required=True, help="JSONL file that receives every request")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--var", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--require-key", help="answer 401 to requests with another key")
    args = parser.parse_args()

    variables = {}
    for item in args.var:
        name, sep, value = item.partition("=")
        if not sep or not name:
            parser.error(f"--var {item!r}: expected NAME=VALUE")
        variables[name] = value
    with open(args.script, encoding="utf-8") as f:
        script = json.load(f)
    if not isinstance(script.get("turns"), list):
        parser.error(f"{args.script}: expected an object with a list 'turns'")

    Handler.script = Script(substitute(script["turns"], variables), args.log,
                            args.require_key)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    print(f"listening on 127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
