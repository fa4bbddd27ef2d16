import * as z from 'zod/mini'
import { hostPattern } from '@omh/plugin-kit'
import { CAPABILITY_CLASSES, MOMENTS, TOOL_WORDS, HOOK_FIELDS, type CapabilityClass } from '@omh/plugin-api'
import { placeholdersOf } from '../probe/pattern.js'
import { parseSelector } from '../probe/select.js'
import { PLACEHOLDERS } from '../probe/probe.js'
import { guestPathProblem } from './guest-path.js'

const text = z.string().check(z.minLength(1))
/** A guest path, checked as written; `directory` lets a trailing `/` mark a directory. */
const guestPathOf = (options: { directory?: boolean }) =>
  text.check(
    z.superRefine((p: string, ctx) => {
      const why = guestPathProblem(p, options)
      if (why) ctx.issues.push({ code: 'custom', message: why, input: p })
    }),
  )
const guestPath = guestPathOf({})
const name = text.check(z.regex(/^[a-z][a-z0-9-]*$/, 'lowercase letters, digits and dashes, starting with a letter'))

/** An optional string per key of a closed vocabulary; any other key is refused. */
const wordMap = <K extends string>(keys: readonly K[]) =>
  z.strictObject(Object.fromEntries(keys.map((k) => [k, z.optional(text)])) as Record<K, z.ZodMiniOptional<typeof text>>)

type Issues = { issues: unknown[]; value: unknown }
const issue = (ctx: Issues, path: (string | number)[], message: string) =>
  ctx.issues.push({ code: 'custom', message, path, input: ctx.value })

/**
 * What a harness must print for the check to pass: a line matching `line`,
 * or, in its JSON output, a value reached by `json` that satisfies `match`.
 */
const evidenceShape = {
  /** A pattern one line of the probe's output (stdout, then stderr) must match whole. */
  line: z.optional(text),
  /** Where to look in the probe's JSON output: a JSONPath subset (`a.b[*]`, `a.*`, `a.*~`). */
  json: z.optional(text),
  /** What a value found by `json` must look like: a pattern for a scalar, or a pattern per dotted field. */
  match: z.optional(z.union([text, z.record(text, text)])),
  /** Inverts the check: nothing may match (e.g. an error line naming the item). */
  absent: z.optional(z.boolean()),
}

type Evidence = { line?: string; json?: string; match?: string | Record<string, string>; absent?: boolean }

// Evidence is checked even when other keys have problems, so that every
// problem shows at once; these read what parsed and skip what did not.
const everyTime = () => true
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const evidenceList = <E>(list: unknown): [number, E][] =>
  Array.isArray(list) ? [...list.entries()].filter((entry): entry is [number, E] => isRecord(entry[1])) : []
const textOr = (v: unknown) => (typeof v === 'string' ? v : undefined)

/** Checks one piece of evidence; `allowed` are the placeholders its patterns may name. */
function checkEvidence(e: Evidence, ctx: Issues, at: (string | number)[], allowed: readonly string[]) {
  if ((e.line === undefined) === (e.json === undefined)) issue(ctx, at, 'needs exactly one of `line` and `json`')
  if (e.match !== undefined && e.json === undefined) issue(ctx, [...at, 'match'], '`match` applies to what `json` finds, so it needs `json`')
  if (typeof e.json === 'string') {
    const parsed = parseSelector(e.json)
    if ('error' in parsed) issue(ctx, [...at, 'json'], parsed.error)
  }
  const patterns: [(string | number)[], string][] = []
  if (typeof e.line === 'string') patterns.push([[...at, 'line'], e.line])
  if (typeof e.match === 'string') patterns.push([[...at, 'match'], e.match])
  else if (isRecord(e.match)) {
    for (const [key, value] of Object.entries(e.match)) if (typeof value === 'string') patterns.push([[...at, 'match', key], value])
  }
  for (const [where, pattern] of patterns) {
    for (const name of new Set(placeholdersOf(pattern))) {
      if (!allowed.includes(name)) {
        issue(ctx, where, `{{${name}}} is not a placeholder here (${allowed.length ? `known: ${allowed.map((a) => `{{${a}}}`).join(', ')}` : 'none is known outside a capability'})`)
      }
    }
  }
}

/** One line a probe writes to the harness's stdin. */
const probeStep = z.strictObject({
  /** The line; a newline is added. */
  line: z.string(),
  /** Text stdout must show before the next line is written (or stdin is closed). */
  until: z.optional(text),
})

/**
 * A command `omh doctor` runs inside the container, once, when a check needs
 * its output: the harness's own account of what it loaded.
 */
const probe = z
  .strictObject({
    /** Shell command (`sh -c`), run in the guest working directory. */
    run: text,
    /** Lines written to stdin in order, for harnesses that answer a protocol; stdin closes after the last. */
    send: z.optional(z.array(probeStep)),
    /** Extra environment for this command. */
    env: z.optional(z.record(text, z.string())),
    /** Seconds before the command is killed and the probe fails. */
    timeout: z.optional(z.number().check(z.int(), z.positive())),
    /** Exit statuses that count as the command working. Default: 0. */
    exit: z.optional(z.array(z.number().check(z.int()))),
    /** Evidence about the harness as a whole (e.g. "accepts its configuration"), checked on every run. */
    expect: z.optional(z.array(z.strictObject(evidenceShape))),
  })
  .check(
    z.superRefine(
      (p, ctx) => {
        for (const [n, e] of evidenceList<Evidence>(p.expect)) checkEvidence(e, ctx as unknown as Issues, ['expect', n], [])
      },
      { when: everyTime },
    ),
  )

const PLACEHOLDER = /\{\{([^{}]*)\}\}/g

/**
 * How `omh doctor --turn` drives the harness through a turn against the
 * scripted model listening on 127.0.0.1:`port`: the command, and per tool word
 * (and `mcp`) the call the model makes, in the harness's own names: its
 * arguments, or the text of a free-form tool (a patch, say). The adapter's
 * `args` are the command's positional parameters, so `"$@"` in `run` puts them
 * where a session has them.
 */
const turn = z.strictObject({
  run: text,
  port: z.number().check(z.int(), z.positive()),
  env: z.optional(z.record(text, z.string())),
  timeout: z.optional(z.number().check(z.int(), z.positive())),
  calls: z.optional(z.partialRecord(z.enum([...TOOL_WORDS, 'mcp']), z.strictObject({ tool: text, input: z.union([z.record(z.string(), z.unknown()), z.string()]) }))),
  /**
   * For a harness that defers MCP tools behind a tool search, naming them in a request's text and
   * offering none until the model loads one: the line that names one of a server's tools, a pattern
   * holding `{{name}}` (the server's). The server is carried by a request with such a line.
   */
  mcp_named: z.optional(
    text.check(
      z.refine((t: string) => [...t.matchAll(PLACEHOLDER)].every((m) => m[1] === 'name') && t.includes('{{name}}'), {
        message: 'must hold `{{name}}`, the server\'s name, and no other placeholder',
      }),
    ),
  ),
})

/** Evidence a capability's items must leave in a probe's output; `probe` names the command. */
const expectation = z.strictObject({
  /** The key of a `[probes.<key>]` table. */
  probe: name,
  ...evidenceShape,
  /** Shows the item connected, beyond loaded: a miss is a warning with the reason, never a failure. */
  connected: z.optional(z.boolean()),
})

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
  /** What `omh doctor` must find in the harness's own output for every item staged here. */
  expect: z.optional(z.array(expectation)),
}

const binding = z.strictObject(bindingShape)

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

const variable = text.check(z.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'a variable name: letters, digits and _, not starting with a digit'))
/**
 * An API key the harness reads from its environment, kept outside the container: the harness gets
 * a placeholder in `variable` and omh's credential proxy in `base_url`; the proxy sends the real key.
 */
const apiKey = z
  .strictObject({
    /** The variable the harness reads its key from; the host's (or a secret) of the same name is the key. */
    variable,
    /** The variable that sets the harness's API base URL. */
    base_url: z.optional(variable),
    /** For a harness that reads its base URL from no variable: arguments put before the user's, `{url}` standing for it. */
    args: z.optional(z.array(text)),
    /** Or variables whose value holds it (a configuration document), `{url}` standing for it. */
    env: z.optional(z.record(variable, text)),
    /** What the harness expects after the host in that URL (`/v1`); absent: nothing. */
    path: z.optional(text.check(z.regex(/^\/[^\s?#]*$/, 'a path starting with /'))),
    /** The header that carries the key, and what precedes the key in it (`Bearer `). */
    header: text.check(z.regex(/^[A-Za-z0-9-]+$/, 'a header name')),
    prefix: z.optional(z.string()),
    /** The real API host: forwarded over TLS only. */
    upstream: text.check(z.regex(/^https:\/\/[^\s/?#]+(\/[^\s?#]*)?$/, 'an https:// URL: the credential proxy forwards over TLS only')),
  })
  .check(
    z.refine((k) => k.base_url !== undefined || [...(k.args ?? []), ...Object.values(k.env ?? {})].some((a) => a.includes('{url}')), {
      message: 'needs base_url, or args or env with {url} in one: otherwise the harness is never pointed at the credential proxy',
    }),
  )

const jsonPath = text.check(z.regex(/^[A-Za-z_][\w-]*(\.[A-Za-z_][\w-]*)*$/, 'keys joined by dots, such as "claudeAiOauth.accessToken"'))
const bareHost = hostPattern.check(z.refine((host: string) => !host.includes(':'), 'a host, without a port'))

/**
 * A subscription login kept outside the container: the tokens in the harness's login file move to
 * a vault on the host, the file keeps placeholders, and omh's credential proxy puts the real access
 * token on requests to `hosts` and makes the refresh at `refresh_url` itself.
 */
const login = z.strictObject({
  /** The login file: one of `token`. */
  file: guestPath,
  /** Where its access token is, and its refresh token: keys joined by dots. */
  access: jsonPath,
  refresh: z.optional(jsonPath),
  /** Where an identity token is (an OpenID `id_token`), kept outside with the others. */
  id: z.optional(jsonPath),
  /** The hosts the access token may go to. */
  hosts: z.array(bareHost).check(z.minLength(1, 'name the hosts the access token goes to')),
  /** The token endpoint the refresh goes to. */
  refresh_url: z.optional(text.check(z.regex(/^https:\/\/[^\s/?#]+\/[^\s?#]*$/, 'an https:// URL with a path: the token endpoint'))),
})

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
    /** Arguments every session gives the harness, before the user's own (`omh <harness> -- …`). */
    args: z.optional(z.array(text)),
    /** Shell run as root in the harness image layer. */
    install: text,
    /**
     * The release this adapter's facts were checked against: the harness's npm package and the
     * version `install` pins. `npm run drift` installs the newest release beside it and compares.
     */
    release: z.optional(z.strictObject({ package: text, version: text })),
    /** Guest paths holding credentials; a trailing `/` mounts a directory. */
    creds: z.optional(z.array(guestPathOf({ directory: true }))),
    /** Files whose real content proves a login. */
    token: z.optional(z.array(guestPath)),
    /** `host[:port]` patterns the harness must reach (its model API, its login). */
    egress: z.optional(z.array(hostPattern)),
    /** API keys kept outside the container, behind omh's credential proxy. */
    keys: z.optional(z.array(apiKey)),
    /** What the user should do inside the harness to log in. */
    login: z.optional(text),
    /** Subscription logins omh keeps outside the container (`[[logins]]`); absent: a login stays in the account's files. */
    logins: z.optional(z.array(login)),
    /** Commands that make the harness say what it loaded, by key; capabilities name them in `expect`. */
    probes: z.optional(z.record(name, probe)),
    turn: z.optional(turn),
    /** omh tool word → the harness's spelling (may be an alternation like `Edit|Write`). */
    tools: z.optional(wordMap(TOOL_WORDS)),
    capabilities,
  })
  .check(
    z.superRefine(
      (a, ctx) => {
        // A turn that left them out would drive a harness no session runs.
        if (Array.isArray(a.args) && a.args.length && isRecord(a.turn) && typeof a.turn['run'] === 'string' && !a.turn['run'].includes('"$@"')) {
          issue(ctx as unknown as Issues, ['turn', 'run'], 'runs the harness without the adapter\'s `args`, which every session passes: put `"$@"` where they go (`<bin> "$@" …`)')
        }
        // The pin is stated twice, where it is installed and where it is compared; they must agree.
        if (isRecord(a.release) && typeof a.release['package'] === 'string' && typeof a.release['version'] === 'string' && typeof a.install === 'string') {
          const pinned = `${a.release['package']}@${a.release['version']}`
          if (!a.install.includes(pinned)) issue(ctx as unknown as Issues, ['release', 'version'], `is not what \`install\` installs: it should name ${pinned}`)
        }
        // A login file omh does not mount is no login the session has.
        // What `token` holds may be anything here (tables, arrays): its own problems are reported beside this one.
        const tokens = Array.isArray(a.token) ? a.token.filter((t): t is string => typeof t === 'string') : []
        if (Array.isArray(a.logins)) {
          a.logins.forEach((l, n) => {
            if (isRecord(l) && typeof l['file'] === 'string' && !tokens.includes(l['file'])) issue(ctx as unknown as Issues, ['logins', n, 'file'], `is none of \`token\` (${tokens.join(', ') || 'none'}): name the login file there too`)
          })
        }
        const declared = isRecord(a.probes) ? Object.keys(a.probes) : []
        const bindings = isRecord(a.capabilities) ? a.capabilities : {}
        for (const capability of CAPABILITY_CLASSES) {
          const binding = bindings[capability]
          for (const [n, e] of evidenceList<Evidence & { probe?: unknown }>(isRecord(binding) ? binding['expect'] : undefined)) {
            const at = ['capabilities', capability, 'expect', n]
            checkEvidence(e, ctx as unknown as Issues, at, PLACEHOLDERS[capability])
            const probe = textOr(e.probe)
            if (probe !== undefined && !declared.includes(probe)) {
              issue(ctx as unknown as Issues, [...at, 'probe'], `no probe is called "${probe}" (declared: ${declared.join(', ') || 'none'})`)
            }
          }
        }
      },
      { when: everyTime },
    ),
  )

export type AdapterFile = z.infer<typeof adapterSchema>
export type AdapterTurn = z.infer<typeof turn>
export type AdapterKey = z.infer<typeof apiKey>
export type AdapterLogin = z.infer<typeof login>
export type AdapterBinding = z.infer<typeof binding> | z.infer<typeof hooksBinding>

/** An editor that attaches to a session over SSH. `$URL` and `$ALIAS` fill its args. */
export const editorSchema = z.strictObject({
  name,
  bin: text,
  args: z.array(z.string()),
})

export type EditorFile = z.infer<typeof editorSchema>
