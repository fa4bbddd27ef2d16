import * as z from 'zod/mini'

/** Keys of settings.json that omh writes itself: `settings` may not hold them. */
const OWN_KEYS = ['mcpServers', 'hooks', 'security', 'privacy']

/**
 * `[capabilities.<class>.options]` for this package's formats. Both say how a
 * harness that reads Gemini CLI's settings format (a fork of it, say) differs
 * from Gemini CLI 0.61, as data in the adapter rather than a harness's name here.
 */
export const geminiOptions = z.strictObject({
  /**
   * How a remote MCP server names its transport. `type` (the default): `url` with `type` (`http`
   * or `sse`), as Gemini CLI 0.61 reads it. `httpUrl`: the key says it, `httpUrl` for streamable
   * HTTP and a bare `url` for SSE, for a reader that ignores `type` there. Read back the same way.
   */
  remote: z.optional(z.enum(['type', 'httpUrl'])),
  /**
   * Further top-level settings the MCP binding writes into settings.json as they are: what a
   * harness needs set in every session (no background work the sandbox would refuse, say).
   * The keys omh writes itself are refused.
   */
  settings: z.optional(
    z.record(z.string(), z.unknown()).check(
      z.refine((s: Record<string, unknown>) => !Object.keys(s).some((k) => OWN_KEYS.includes(k)), {
        message: `omh writes ${OWN_KEYS.map((k) => `\`${k}\``).join(', ')} itself`,
      }),
    ),
  ),
})

export type GeminiOptions = z.infer<typeof geminiOptions>
