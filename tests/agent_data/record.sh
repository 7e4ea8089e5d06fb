#!/usr/bin/env bash
# Records the real output of the claude and codex CLIs for the parser tests
# (tests/agent_parser_test.cc), by running them against the stand-in model
# (tests/agent_standin/standin_model.py) with the scripts in this folder.
# The command lines are those that server/agent/claude_adapter.h and
# codex_adapter.h document. Writes *.jsonl here and versions.txt.
#
#   bash tests/agent_data/record.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
standin=$here/../agent_standin/standin_model.py
root=/tmp/kseek-agent-record
rm -rf "$root"
mkdir -p "$root/workspace" "$root/outside" "$root/home/.codex"
ws=$root/workspace
printf '__global__ void scale(float* x) { x[threadIdx.x] *= 2.0f; }\nint block = 128;\n' \
  > "$ws/kernel.cu"
echo "private notes" > "$root/outside/notes.txt"

pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT

# start_standin NAME SCRIPT [ARGS...]: starts a stand-in; sets $port.
start_standin() {
  local name=$1 script=$2
  shift 2
  python3 "$standin" --script "$script" --log "$root/$name.requests.jsonl" \
    --var "workspace=$ws" --var "outside=$root/outside" "$@" \
    > "$root/$name.port" 2> "$root/$name.stderr" &
  pids+=($!)
  for _ in $(seq 100); do
    grep -q "^listening on " "$root/$name.port" 2>/dev/null && break
    sleep 0.1
  done
  port=$(sed -n 's/^listening on 127.0.0.1://p' "$root/$name.port")
}

claude_flags=(--output-format stream-json --verbose --permission-mode acceptEdits
              --permission-prompts none --allowedTools Bash)
claude_env=(HOME=$root/home CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1)
# The session id on the first line of a recording (stdin).
session_of() {
  python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["session_id"])'
}

start_standin claude "$here/claude_script.json"
(cd "$ws" && env "${claude_env[@]}" ANTHROPIC_BASE_URL=http://127.0.0.1:$port \
   ANTHROPIC_API_KEY=stand-in-key claude "${claude_flags[@]}" -p -- \
   "Make kernel.cu faster." < /dev/null > "$here/claude_start.jsonl")
session=$(session_of < "$here/claude_start.jsonl")
(cd "$ws" && env "${claude_env[@]}" ANTHROPIC_BASE_URL=http://127.0.0.1:$port \
   ANTHROPIC_API_KEY=stand-in-key claude "${claude_flags[@]}" --resume "$session" -p -- \
   "Is that limit measured or assumed?" < /dev/null > "$here/claude_resume.jsonl")

# No key and no login: the CLI answers at once, exit status 1.
(cd "$ws" && env -u ANTHROPIC_API_KEY "${claude_env[@]}" HOME=$root/home-empty \
   claude "${claude_flags[@]}" -p -- "Make kernel.cu faster." < /dev/null \
   > "$here/claude_not_logged_in.jsonl") || true

# A key the API refuses: the CLI retries for minutes; keep its first seconds.
start_standin claude-bad-key "$here/claude_script.json" --require-key other-key
(cd "$ws" && env "${claude_env[@]}" ANTHROPIC_BASE_URL=http://127.0.0.1:$port \
   ANTHROPIC_API_KEY=stand-in-key timeout 4 claude "${claude_flags[@]}" -p -- \
   "Make kernel.cu faster." < /dev/null > "$here/claude_bad_key.jsonl") || true

codex_env=(HOME=$root/home CODEX_HOME=$root/home/.codex STANDIN_KEY=stand-in-key)
codex_flags=(--json --skip-git-repo-check -c 'sandbox_mode="workspace-write"'
             -c sandbox_workspace_write.network_access=true -c 'approval_policy="never"')
# The stand-in as Codex's model provider; sets $provider for the stand-in at $port.
use_provider() {
  local table="name=\"stand-in\",base_url=\"http://127.0.0.1:$port/v1\""
  table+=",env_key=\"STANDIN_KEY\",wire_api=\"responses\""
  provider=(-c model_provider=standin -c "model_providers.standin={$table}" -m stand-in-model)
}

printf '__global__ void scale(float* x) { x[threadIdx.x] *= 2.0f; }\nint block = 128;\n' \
  > "$ws/kernel.cu"
start_standin codex "$here/codex_script.json"
use_provider
(cd "$ws" && env "${codex_env[@]}" codex exec "${codex_flags[@]}" "${provider[@]}" \
   -- "Make kernel.cu faster." < /dev/null > "$here/codex_start.jsonl")
thread=$(python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["thread_id"])' \
  < "$here/codex_start.jsonl")
(cd "$ws" && env "${codex_env[@]}" codex exec resume "${codex_flags[@]}" "${provider[@]}" \
   -- "$thread" "Is that limit measured or assumed?" < /dev/null > "$here/codex_resume.jsonl")

start_standin codex-bad-key "$here/codex_script.json" --require-key other-key
use_provider
(cd "$ws" && env "${codex_env[@]}" codex exec "${codex_flags[@]}" "${provider[@]}" \
   -- "Make kernel.cu faster." < /dev/null > "$here/codex_bad_key.jsonl") || true

{
  echo "claude: $(claude --version)"
  echo "codex: $(codex --version)"
} > "$here/versions.txt"
cat "$here/versions.txt"
wc -l "$here"/*.jsonl
