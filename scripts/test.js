#!/usr/bin/env node
// `npm test` after the build (`npm run test:e2e` with `--e2e`): every vitest project, the two engines' end-to-end
// projects in vitest runs of their own, side by side. Within one run vitest
// gives every project whose files go one at a time (fileParallelism: false)
// the same single worker, so the engines would otherwise take turns. Each
// run's lines carry its name; the exit status is the first failure's.
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'

const vitest = new URL('../node_modules/vitest/vitest.mjs', import.meta.url).pathname
const runs = [
  { name: 'docker', projects: ['unit', 'cli', 'fuzz', 'e2e-docker'] },
  { name: 'podman', projects: ['e2e-podman'] },
]
// `--e2e`: the end-to-end projects alone; anything else goes on to vitest (file filters, -t).
const e2eOnly = process.argv.includes('--e2e')
const extra = process.argv.slice(2).filter((arg) => arg !== '--e2e')

const statuses = await Promise.all(
  runs.map(
    ({ name, projects }) =>
      new Promise((resolve) => {
        const chosen = e2eOnly ? projects.filter((p) => p.startsWith('e2e-')) : projects
        const child = spawn(process.execPath, [vitest, 'run', ...chosen.flatMap((p) => ['--project', p]), ...extra], { stdio: ['ignore', 'pipe', 'pipe'] })
        for (const [from, to] of [
          [child.stdout, process.stdout],
          [child.stderr, process.stderr],
        ]) {
          createInterface({ input: from }).on('line', (line) => to.write(`[${name}] ${line}\n`))
        }
        child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)))
      }),
  ),
)
const failed = statuses.find((status) => status !== 0)
process.exit(failed ?? 0)
