# omh: orient
[ -z "$OMH_HOOK_TRACE" ] || printf '%s\n' 'orient' >> "$OMH_HOOK_TRACE"
jq -nc --arg m "Read AGENTS.md first." '{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":$m}}'
