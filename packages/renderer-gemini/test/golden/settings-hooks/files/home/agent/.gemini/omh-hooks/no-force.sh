# omh: no-force
[ -z "$OMH_HOOK_TRACE" ] || printf '%s\n' 'no-force' >> "$OMH_HOOK_TRACE"
p=$(cat)
export OMH_TOOL_COMMAND="$(printf '%s' "$p" | jq -r '(.tool_input.command) // empty' 2>/dev/null)"
[ -n "$OMH_HOOK_WHEN_MET" ] || sh -c -- 'printf %s "$OMH_TOOL_COMMAND" | grep -q -- --force' </dev/null >&2 || { echo '{}'; exit 0; }
jq -nc --arg m "No force-push: ${OMH_TOOL_COMMAND:-that} is off, it costs \$5." '{"decision":"deny","reason":$m}'
