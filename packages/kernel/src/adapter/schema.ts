import * as z from 'zod/mini'
import { CAPABILITY_CLASSES, MOMENTS, TOOL_WORDS, HOOK_FIELDS, type CapabilityClass } from '../model.js'

const text = z.string().check(z.minLength(1))
const guestPath = text.check(
  z.refine((p: string) => p.startsWith('/') || p.startsWith('$HOME/') || p === '$HOME', {
    message: 'a guest path is absolute or starts with $HOME/',
  }),
)
const name = text.check(z.regex(/^[a-z][a-z0-9-]*$/, 'lowercase letters, digits and dashes, starting with a letter'))

/** An optional string per key of a closed vocabulary; any other key is refused. */
const wordMap = <K extends string>(keys: readonly K[]) =>
  z.strictObject(Object.fromEntries(keys.map((k) => [k, z.optional(text)])) as Record<K, z.ZodMiniOptional<typeof text>>)

const bindingShape = {
  /** Guest path the harness reads. `$HOME` is the guest home. */
  path: guestPath,
  /** Further guest paths that receive the same document. */
  also: z.optional(z.array(guestPath)),
  /** The format, answered by an installed renderer plugin. */
  render: text,
  /** Host path `omh config … import` reads; `$HOME` and `$REPO` expand on the host. */
  import: z.optional(text),
  /** Options for the renderer, checked against the renderer's own schema. */
  options: z.optional(z.record(z.string(), z.unknown())),
}

const binding = z.strictObject(bindingShape)

const PLACEHOLDER = /\{\{([^{}]*)\}\}/g

const template = z.strictObject({
  /** `{{text}}` is the hook's words as a value of the renderer's language; `{{event}}` the harness's event name. */
  template: text.check(
    z.refine((t: string) => t.includes('{{text}}'), { message: 'a template without `{{text}}` would drop the words of every hook it expresses' }),
    z.refine((t: string) => [...t.matchAll(PLACEHOLDER)].every((m) => m[1] === 'text' || m[1] === 'event'), {
      message: 'the placeholders a template may hold are `{{text}}` and `{{event}}`',
    }),
  ),
  /** The moments at which the harness reads what this template produces; absent means every moment in `events`. */
  at: z.optional(z.array(z.enum(MOMENTS))),
})

const hooksBinding = z.strictObject({
  ...bindingShape,
  /** omh moment → the harness's name for it. Required: without it no hook can be expressed. */
  events: wordMap(MOMENTS),
  /** Payload field → where the harness keeps it, in the renderer's language. */
  fields: z.optional(wordMap(HOOK_FIELDS)),
  /** How the harness accepts advisory text; `{{text}}` and `{{event}}` are filled in. */
  inject: z.optional(template),
  /** How the harness blocks a call with a reason. */
  refuse: z.optional(template),
}).check(
  z.superRefine((b, ctx) => {
    for (const key of ['inject', 'refuse'] as const) {
      b[key]?.at?.forEach((moment, n) => {
        if (!b.events[moment]) {
          ctx.addIssue({ code: 'custom', path: [key, 'at', n], message: `\`${moment}\` is not in \`events\`, so nothing can fire there` })
        }
      })
    }
  }),
)

const capabilities = z
  .strictObject({
    ...(Object.fromEntries(CAPABILITY_CLASSES.filter((c) => c !== 'hooks').map((c) => [c, z.optional(binding)])) as Record<
      Exclude<CapabilityClass, 'hooks'>,
      z.ZodMiniOptional<typeof binding>
    >),
    hooks: z.optional(hooksBinding),
  })
  .check(
    z.refine((c: object) => Object.values(c).some((b) => b !== undefined), {
      message: 'declares no capabilities, so the harness would see none of your profile',
    }),
  )

/**
 * A harness adapter: what the harness can express, where it reads each
 * capability, and which renderer writes it. An absent capability means the
 * harness cannot do that thing. Unknown keys are refused at every level: a
 * stale adapter must fail loudly rather than parse into a harness that sees
 * nothing.
 */
export const adapterSchema = z
  .strictObject({
    /** The harness name, the bare word after `omh`. */
    name,
    /** The executable inside the container. */
    bin: text,
    /** Shell run as root in the harness image layer. */
    install: text,
    /** Guest paths holding credentials; a trailing `/` mounts a directory. */
    creds: z.optional(z.array(guestPath)),
    /** Files whose real content proves a login. */
    token: z.optional(z.array(guestPath)),
    /** What the user should do inside the harness to log in. */
    login: z.optional(text),
    /** The harness's own "what did you load" command, run by `omh doctor`. */
    verify: z.optional(text),
    /** The word `verify` prints beside each item it loaded. */
    ready: z.optional(text),
    /** omh tool word → the harness's spelling (may be an alternation like `Edit|Write`). */
    tools: z.optional(wordMap(TOOL_WORDS)),
    capabilities,
  })
  .check(
    z.refine((a: { ready?: string; verify?: string }) => a.ready === undefined || a.verify !== undefined, {
      message: '`ready` is the word `verify` prints, so it needs `verify`',
      path: ['ready'],
    }),
  )

export type AdapterFile = z.infer<typeof adapterSchema>
export type AdapterBinding = z.infer<typeof binding> | z.infer<typeof hooksBinding>

/** An editor that attaches to a session over SSH. `$URL` and `$ALIAS` fill its args. */
export const editorSchema = z.strictObject({
  name,
  bin: text,
  args: z.array(z.string()),
})

export type EditorFile = z.infer<typeof editorSchema>
