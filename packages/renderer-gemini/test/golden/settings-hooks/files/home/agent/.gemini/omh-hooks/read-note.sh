# omh: read-note
[ -z "$OMH_HOOK_TRACE" ] || printf '%s\n' 'read-note' >> "$OMH_HOOK_TRACE"
p=$(cat)
export OMH_TOOL_FILE="$(printf '%s' "$p" | jq -r '(.tool_input.file_path) // empty' 2>/dev/null)"
jq -nc --arg m "You read $OMH_TOOL_FILE." '{"hookSpecificOutput":{"hookEventName":"AfterTool","additionalContext":$m}}'
