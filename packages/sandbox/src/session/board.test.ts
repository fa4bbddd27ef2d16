import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { gitRepo, testdir } from '@omh/test-utils'
import { repository } from '../host/repo.js'
import { changes, knownRepositories, registerRepository, upSessions, type Sighting } from './board.js'
import type { HarnessState } from './state.js'

describe('the repositories omh has sessions of', () => {
  it('finds each registered checkout again, once, however often it registers', async () => {
    const state = testdir()
    const [a, b] = [repository(gitRepo()), repository(gitRepo())]
    for (const repo of [a, b, a]) await registerRepository(state, repo)
    expect((await knownRepositories(state)).map((r) => r.id).sort()).toEqual([a.id, b.id].sort())
  })

  it('passes over a record naming another checkout than its id was made from, a relative path, and one that is gone', async () => {
    const state = testdir()
    const [a, b] = [repository(gitRepo()), repository(gitRepo())]
    await registerRepository(state, a)
    write(state, `run/${b.id}/repository`, `${a.root}\n`)
    write(state, 'run/gone-0000/repository', '/nowhere/at/all\n')
    write(state, 'run/rel-0000/repository', 'some/where\n')
    expect((await knownRepositories(state)).map((r) => r.id)).toEqual([a.id])
  })
})

describe('the sessions a launch left up', () => {
  it('are read from the launches’ records, in every repository, leaving out what is not a session', async () => {
    const state = testdir()
    write(state, 'run/a-1/s01/up.json', JSON.stringify({ engine: 'docker', container: 'omh-a-1-s01', idleStopMs: 1 }))
    write(state, 'run/a-1/s02/claim', '{}')
    write(state, 'run/b-2/fix-login/up.json', JSON.stringify({ engine: 'podman', container: 'omh-b-2-fix-login', idleStopMs: 1 }))
    write(state, 'run/b-2/.lock/up.json', JSON.stringify({ engine: 'docker', container: 'x', idleStopMs: 1 }))
    write(state, 'run/.kept-launch/s01/up.json', JSON.stringify({ engine: 'docker', container: 'y', idleStopMs: 1 }))
    expect((await upSessions(state)).map(({ repoId, session, engine, container }) => ({ repoId, session, engine, container }))).toEqual([
      { repoId: 'a-1', session: 's01', engine: 'docker', container: 'omh-a-1-s01' },
      { repoId: 'b-2', session: 'fix-login', engine: 'podman', container: 'omh-b-2-fix-login' },
    ])
  })
})

describe('what changed since the last look', () => {
  const at = (session: string, state: HarnessState['state'], launch = 100, exit?: number): Sighting => ({
    repoId: 'r-1',
    session,
    launch,
    state: { harness: 'claude', state, from: 'hooks', ...(exit !== undefined ? { exit } : {}) },
  })
  const run = (looks: Sighting[][]) => {
    let seen: Record<string, string> = {}
    return looks.map((look) => {
      const next = changes(seen, look)
      seen = next.seen
      return next.events.map((e) => `${e.session} ${e.state.state}${e.state.exit !== undefined ? ` ${e.state.exit}` : ''}`)
    })
  }

  it('tells each move to waiting or finished once, and nothing else', () => {
    expect(run([[at('s01', 'working')], [at('s01', 'waiting')], [at('s01', 'waiting')], [at('s01', 'working')], [at('s01', 'waiting')], [at('s01', 'finished', 100, 0)], [at('s01', 'finished', 100, 0)]])).toEqual([
      [],
      ['s01 waiting'],
      [],
      [],
      ['s01 waiting'],
      ['s01 finished 0'],
      [],
    ])
  })

  it('tells a launch first seen waiting or finished, and a new launch that ends as the last did', () => {
    expect(run([[at('s01', 'finished', 100, 0), at('s02', 'waiting'), at('s03', 'running')], [at('s01', 'finished', 200, 0)]])).toEqual([
      ['s01 finished 0', 's02 waiting'],
      ['s01 finished 0'],
    ])
  })

  it('keeps quiet about a launch first seen waiting or finished before the notifier started, and tells its next change', () => {
    const old = { ...at('s01', 'finished', 100, 0), state: { harness: 'claude', state: 'finished', exit: 0, from: 'process', lastActive: 500 } } as Sighting
    const first = changes({}, [old], 1000)
    expect(first.events).toEqual([])
    const next = { ...at('s01', 'finished', 900, 1), state: { harness: 'claude', state: 'finished', exit: 1, from: 'process', lastActive: 1100 } } as Sighting
    expect(changes(first.seen, [next], 1000).events).toEqual([next])
  })

  it('tells nothing again to a notifier that starts from what the last one saw', () => {
    const first = changes({}, [at('s01', 'waiting')])
    expect(changes(first.seen, [at('s01', 'waiting')]).events).toEqual([])
  })

  it('remembers a bounded number of harnesses, forgetting the longest unchanged first', () => {
    let seen: Record<string, string> = {}
    for (let n = 0; n < 1100; n++) seen = changes(seen, [at(`s${n}`, 'working')]).seen
    expect(Object.keys(seen)).toHaveLength(1000)
    expect(Object.keys(seen)[0]).toContain('/s100/')
  })
})

function write(dir: string, name: string, text: string): void {
  mkdirSync(path.dirname(path.join(dir, name)), { recursive: true })
  writeFileSync(path.join(dir, name), text)
}
