// The profile benchmark: resolve and render a large generated profile for every bundled adapter,
// in process, then count what a re-stage of the unchanged profile writes.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { median } from './lib.js'

/** A profile of `skills` skills, `servers` MCP servers and `rules` rules sections, plus a few commands and subagents. */
export function generateProfile(dir, { skills = 500, servers = 200, rules = 50 } = {}) {
  const write = (rel, content) => {
    const file = path.join(dir, rel)
    mkdirSync(path.dirname(file), { recursive: true })
    writeFileSync(file, content)
  }
  for (let n = 0; n < rules; n++) write(`rules/rule-${String(n).padStart(3, '0')}.md`, `# Rule ${n}\n\n${'- Keep it short.\n'.repeat(20)}`)
  for (let n = 0; n < skills; n++) {
    write(`skills/skill-${n}/SKILL.md`, `---\nname: skill-${n}\ndescription: Skill number ${n}, for benchmarks.\n---\n\nDo thing ${n}.\n`)
  }
  for (let n = 0; n < 20; n++) write(`commands/command-${n}.md`, `---\ndescription: Command ${n}\n---\nRun ${n} on $ARGUMENTS.\n`)
  for (let n = 0; n < 20; n++) {
    write(`subagents/agent-${n}.md`, `---\nname: agent-${n}\ndescription: Agent ${n}.\n${n % 2 ? 'tools: [read, search]\n' : ''}---\nYou are agent ${n}.\n`)
  }
  const mcpServers = {}
  for (let n = 0; n < servers; n++) {
    mcpServers[`server-${n}`] =
      n % 4 === 0
        ? { type: 'http', url: `https://mcp-${n}.example/mcp`, headers: { Authorization: `Bearer token-${n}` } }
        : { command: 'npx', args: ['-y', `mcp-server-${n}`, '--root', '/work'], env: { LEVEL: 'info', ID: String(n) } }
  }
  write('mcp.json', JSON.stringify({ mcpServers }, null, 2))
}

export async function profileBench({ root, runs = 15 }) {
  const { Kernel, resolveProfile } = await import(path.join(root, 'packages/kernel/dist/index.js'))
  const { stage } = await import(path.join(root, 'packages/sandbox/dist/stage.js'))
  const home = mkdtempSync(path.join(os.tmpdir(), 'omh-bench-profile-'))
  try {
    generateProfile(home)
    const kernel = await Kernel.create({
      cwd: home,
      env: { ...process.env, OMH_HOME: home },
      defaultsFile: path.join(root, 'defaults/settings.toml'),
      bundledAdapters: path.join(root, 'adapters'),
      fallbackDirs: [root],
    })
    const adapters = await Promise.all(['claude', 'opencode', 'codex'].map((h) => kernel.adapter(h)))
    const once = async () => {
      const start = performance.now()
      const reports = []
      const profile = await resolveProfile({ omhHome: home, use: kernel.settings.use })
      for (const adapter of adapters) reports.push(await kernel.render(adapter, profile))
      return { ms: performance.now() - start, reports }
    }
    await once() // warm-up: module loading and the first YAML parse are not what is measured
    const samples = []
    let reports = []
    for (let n = 0; n < runs; n++) {
      const run = await once()
      samples.push(run.ms)
      reports = run.reports
    }
    const stageDir = path.join(home, 'run')
    let first = 0
    let again = 0
    for (const report of reports) {
      const dir = path.join(stageDir, report.harness)
      first += (await stage(report, dir)).written
      again += (await stage(report, dir)).written
    }
    return { ms: median(samples), first, again, files: reports.reduce((n, r) => n + r.files.length, 0) }
  } finally {
    rmSync(home, { recursive: true, force: true })
  }
}
