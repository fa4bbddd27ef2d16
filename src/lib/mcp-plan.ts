import { createInterface } from 'node:readline/promises'
import { Flags } from './oclif.js'
import { CONSENT_REQUIRED, IMPORT_INVALID, OmhError, type McpServer } from '@omh/plugin-api'
import { REDACTED, planWrites, redactServer, serverFrom, writePlan, type Kernel, type McpChange, type McpDocument } from '@omh/kernel'
import type { Style } from './style.js'
import { table } from './table.js'

/** A change as `--json` carries it: the facts, with secret values left out. */
export interface ChangeListing {
  name: string
  change: McpChange['change']
  transport?: string
  /** Changed: which fields differ. */
  fields?: string[]
  /** Conflicting: why it is left as it is. */
  reason?: string
}

export interface PlanResult {
  file: string
  changes: ChangeListing[]
  /** Whether mcp.json was written. */
  written: boolean
}

export const planFlags = {
  yes: Flags.boolean({ char: 'y', summary: 'Write without asking.', default: false }),
  'dry-run': Flags.boolean({ summary: 'Show the plan and write nothing.', default: false }),
}

/** How a server reads in a plan or a list: what it runs or reaches, its secrets hidden. */
export function describeServer(shown: McpServer): string {
  const server = redactServer(shown)
  const names = (label: string, record: Readonly<Record<string, string>>) => {
    const keys = Object.keys(record)
    return keys.length ? ` ${label} ${keys.map((k) => `${k}=${REDACTED}`).join(' ')}` : ''
  }
  if (server.transport === 'stdio') {
    return `${[server.command, ...server.args].join(' ')}${server.cwd ? ` (in ${server.cwd})` : ''}${names('env', server.env)}`
  }
  return `${server.transport} ${server.url}${names('headers', server.headers)}`
}

export function listing(step: McpChange): ChangeListing {
  return {
    name: step.name,
    change: step.change,
    ...(step.server ? { transport: step.server.transport } : {}),
    ...(step.fields ? { fields: [...step.fields] } : {}),
    ...(step.reason ? { reason: step.reason } : {}),
  }
}

export function formatPlan(plan: readonly McpChange[], style: Style): string {
  const mark: Record<McpChange['change'], string> = {
    added: style.green('+ added'),
    changed: style.yellow('~ changed'),
    same: style.dim('= same'),
    removed: style.red('- removed'),
    conflicting: style.red('! conflicting'),
  }
  const rows = plan.map((step) => {
    const detail =
      step.change === 'conflicting'
        ? (step.reason ?? '')
        : step.change === 'removed'
          ? ''
          : `${step.server ? describeServer(step.server) : ''}${step.fields?.length ? style.dim(`  (${step.fields.join(', ')})`) : ''}`
    return [mark[step.change], step.name, detail]
  })
  return table(rows, '  ')
}

/** Asks on the terminal; without one, refuses rather than guess. */
async function consent(file: string): Promise<boolean> {
  if (!process.stdin.isTTY || !process.stderr.isTTY) throw OmhError.of(CONSENT_REQUIRED, { args: [file] })
  const rl = createInterface({ input: process.stdin, output: process.stderr })
  try {
    return /^y(es)?$/i.test((await rl.question(`Write these changes to ${file}? [y/N] `)).trim())
  } finally {
    rl.close()
  }
}

/**
 * Shows a plan, asks for consent unless `--yes`, and writes it whole. The
 * plan is printed on stdout (it is the answer); a declined prompt writes
 * nothing and is not an error.
 */
export async function carryOut(
  io: { log(text: string): void; notice(text: string): void; style: Style; json: boolean },
  doc: McpDocument,
  plan: readonly McpChange[],
  flags: { yes: boolean; 'dry-run': boolean },
): Promise<PlanResult> {
  const file = doc.snapshot.file
  const result: PlanResult = { file, changes: plan.map(listing), written: false }
  if (!io.json) io.log(plan.length ? formatPlan(plan, io.style) : io.style.dim('  no servers'))
  if (!planWrites(plan)) {
    io.notice(`Nothing to change in ${file}.`)
    return result
  }
  if (flags['dry-run']) return result
  if (!flags.yes && (io.json || !(await consent(file)))) {
    if (io.json) throw OmhError.of(CONSENT_REQUIRED, { args: [file], details: { changes: result.changes } })
    io.notice('Nothing was written.')
    return result
  }
  await writePlan(doc, plan)
  io.notice(`Wrote ${file}.`)
  return { ...result, written: true }
}

/**
 * A harness's MCP servers read from one of its files with its own renderer,
 * each checked as a hand-written entry would be: a name or value omh cannot
 * keep is listed as conflicting, with the reason, rather than imported.
 */
export function readServers(
  read: ReturnType<Kernel['reader']>['read'],
  from: string,
  content: string,
  render: string,
): { servers: McpServer[]; conflicting: McpChange[] } {
  const parsed = read([{ file: from, content }])
  if (!parsed.ok) throw OmhError.of(IMPORT_INVALID, { args: [from, render, parsed.problems.length], problems: parsed.problems })
  const servers: McpServer[] = []
  const conflicting: McpChange[] = []
  for (const server of parsed.items.mcp ?? []) {
    const problems: string[] = []
    const { name, ...rest } = server
    const checked = serverFrom(name, toEntry(rest as McpServer), (p, message) => problems.push(`${p.length ? `${p.join('.')}: ` : ''}${message}`))
    if (checked) servers.push(checked)
    else conflicting.push({ name, change: 'conflicting', reason: problems.join('; ') })
  }
  for (const left of parsed.left) conflicting.push({ name: left.name, change: 'conflicting', reason: left.reason })
  return { servers, conflicting }
}

const toEntry = (server: McpServer): Record<string, unknown> =>
  server.transport === 'stdio'
    ? { command: server.command, args: server.args, env: server.env, ...(server.cwd !== undefined ? { cwd: server.cwd } : {}) }
    : { type: server.transport, url: server.url, headers: server.headers }
