import { describe, expect, it } from 'vitest'
import { omh } from '../helpers/run.js'
import { testdir } from '../helpers/testdir.js'

describe('sandbox settings', () => {
  it('refuses a bad limit or host pattern with exit 2, naming the file, line and key', () => {
    const home = testdir({
      'settings.toml': '[session]\nmemory = "lots"\npids = 3\ncpus = 0\n[network]\nallow = ["api.example.com:443", "bad host/x"]\negress = "sometimes"\n',
    })
    const ran = omh(['adapters', 'ls'], { env: { OMH_HOME: home } })
    expect(ran.status).toBe(2)
    expect(ran.stderr).toContain(`${home}/settings.toml has 5 problems`)
    expect(ran.stderr).toContain('line 2, col 1  session.memory: a size such as "4g"')
    expect(ran.stderr).toContain('line 3, col 1  session.pids: a number of processes, at least 16')
    expect(ran.stderr).toContain('line 4, col 1  session.cpus: a number of CPUs above 0')
    expect(ran.stderr).toContain('line 6, col 33  network.allow[1]: a host pattern is host[:port]')
    expect(ran.stderr).toContain('line 7, col 1  network.egress: expected one of "allowlist", "open", "none"')
    expect(ran.stderr).toContain('Code: SETTINGS_INVALID')
  })
})
