import { describe, expect, it } from 'vitest'
import { omh } from '../helpers/run.js'
import { testdir } from '@omh/test-utils'

/** What omh says, refusing with exit 2 the personal settings file `text`; and that file's path. */
function refused(text: string): { stderr: string; file: string } {
  const home = testdir({ 'settings.toml': text })
  const ran = omh(['adapters', 'ls'], { env: { OMH_HOME: home } })
  expect(ran.status).toBe(2)
  expect(ran.stderr).toContain('Code: SETTINGS_INVALID')
  expect(ran.stderr).not.toMatch(/\n\s+at /)
  return { stderr: ran.stderr, file: `${home}/settings.toml` }
}

describe('sandbox settings', () => {
  it('refuses a bad limit or host pattern with exit 2, naming the file, line and key', () => {
    const { stderr, file } = refused('[session]\nmemory = "lots"\npids = 3\ncpus = 0\n[network]\nallow = ["api.example.com:443", "bad host/x"]\negress = "sometimes"\n')
    expect(stderr).toContain(`${file} has 5 problems`)
    expect(stderr).toContain('line 2, col 1  session.memory: a size such as "4g"')
    expect(stderr).toContain('line 3, col 1  session.pids: a number of processes, at least 16')
    expect(stderr).toContain('line 4, col 1  session.cpus: a number of CPUs above 0')
    expect(stderr).toContain('line 6, col 33  network.allow[1]: a host pattern is host[:port]')
    expect(stderr).toContain('line 7, col 1  network.egress: expected one of "allowlist", "open", "none"')
  })
})

describe("a runtime's own settings", () => {
  it("refuses what the runtime's schema refuses with exit 2, naming the file, line and key", () => {
    const { stderr, file } = refused('plugins = ["@omh/runtime-kubernetes"]\n\n[runtimes.kubernetes]\nnamespace = "Team_A"\nclam = "10Gi"\n\n[runtimes.podmn]\n')
    expect(stderr).toContain(`${file} has 3 problems`)
    expect(stderr).toContain('line 7, col 1  runtimes.podmn: no runtime plugin drives "podmn" (installed: kubernetes, docker, podman) — did you mean "podman"?')
    expect(stderr).toContain('line 4, col 1  runtimes.kubernetes.namespace: a namespace name: lower-case letters, digits and "-"')
    expect(stderr).toContain('line 5, col 1  runtimes.kubernetes.clam: unknown key — did you mean "claim"?')
  })
})
