# omh: fmt
[ -z "$OMH_HOOK_TRACE" ] || printf '%s\n' 'fmt' >> "$OMH_HOOK_TRACE"
p=$(cat)
export OMH_TOOL_FILE="$(printf '%s' "$p" | jq -r '(.tool_input.file_path) // empty' 2>/dev/null)"
sh -c -- 'prettier --write "$OMH_TOOL_FILE"' </dev/null >&2 || { echo '{}'; exit 1; }
echo '{}'
