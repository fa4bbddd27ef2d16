import { readFileSync, writeFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { allObjects, claimManifest, helperPod, manifests, podName, selectable, toYaml } from '../src/manifests.js'
import { bareContent, bareSpec, copiedSpec, sessionContent, sessionSpec } from './fixtures.js'
import { problems, unknownFields } from './schema.js'

const golden = (name: string, actual: string) => {
  const file = new URL(`./golden/${name}`, import.meta.url)
  if (process.env['OMH_GOLDEN'] === 'update') writeFileSync(file, actual)
  expect(actual).toBe(readFileSync(file, 'utf8'))
}

const copied = () => manifests({ spec: copiedSpec, name: 'omh-3f2a9c0d1e4b-s01', namespace: 'omh', content: [], storage: '10Gi' })
const claim = () => claimManifest({ name: 'omh-3f2a9c0d1e4b-s01-work', namespace: 'omh', labels: copiedSpec.labels, storage: '10Gi', storageClass: 'standard' })
const helper = () => helperPod({ name: 'omh-volume-x', namespace: 'omh', claim: 'omh-3f2a9c0d1e4b-s01-work', image: copiedSpec.image, owner: { uid: 1000, gid: 1000 }, node: 'worker-2' })
const session = () => manifests({ spec: sessionSpec, name: podName(sessionSpec.name!), namespace: 'omh', content: sessionContent, storage: '10Gi' })

describe('the objects of a session', () => {
  it('match the golden files byte for byte', () => {
    golden('session.yaml', toYaml(allObjects(session())))
    golden('copied.yaml', toYaml([claim(), ...allObjects(copied()), helper()]))
    golden('one-shot.yaml', toYaml(allObjects(manifests({ spec: bareSpec, name: 'omh-doctor-1', namespace: 'default', content: bareContent, storage: '1Gi', storageClass: 'fast' }))))
  })

  it('are valid Kubernetes objects with no field Kubernetes does not know', () => {
    const objects = [...allObjects(session()), ...allObjects(manifests({ spec: bareSpec, name: 'omh-doctor-1', namespace: 'default', content: bareContent, storage: '1Gi' }))]
    expect(objects.map((o) => o['kind'])).toEqual(['PersistentVolumeClaim', 'Secret', 'ConfigMap', 'ConfigMap', 'Pod', 'ConfigMap', 'Pod'])
    for (const o of [...objects, ...allObjects(copied()), claim(), helper()]) expect(problems(o), `${String(o['kind'])}`).toEqual([])
  })

  it('run hardened: UID 1000, no capabilities, no privilege escalation, no cluster credentials, the limits', () => {
    const pod = session().pod as { spec: Record<string, any> }
    const [container] = pod.spec['containers']
    expect(container.securityContext).toEqual({ runAsUser: 1000, runAsGroup: 1000, runAsNonRoot: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, privileged: false })
    expect(pod.spec['initContainers'][0].securityContext).toEqual(container.securityContext)
    expect(pod.spec['automountServiceAccountToken']).toBe(false)
    expect(container.resources).toEqual({ limits: { memory: String(2 * 1024 ** 3), cpu: '1500m' } })
    expect(JSON.stringify(pod)).not.toContain('secret-value')
  })

  it('keeps every label in an annotation and only valid ones as labels', () => {
    const meta = (session().pod as { metadata: { labels: Record<string, string>; annotations: Record<string, string> } }).metadata
    expect(meta.labels['omh.worktree']).toBeUndefined()
    expect(meta.labels['omh.session']).toBe('s01')
    expect(JSON.parse(meta.annotations['omh.dev/labels']!)['omh.worktree']).toBe('/home/me/.omh/state/worktrees/3f2a/s01')
    expect(selectable('omh.session', 's01')).toBe(true)
    expect(selectable('omh.worktree', '/a/b')).toBe(false)
    expect(selectable('Bad Key', 'x')).toBe(false)
  })

  it('refuses what a Pod cannot do, saying why', () => {
    const make = (change: object) => () => manifests({ spec: { ...bareSpec, ...change }, name: 'x', namespace: 'default', content: bareContent, storage: '1Gi' })
    expect(make({ user: 'agent' })).toThrow(/a Pod runs as numbers/)
    expect(make({ network: 'host' })).toThrow(/cluster's network/)
    expect(make({ ports: [{ guest: 22 }] })).not.toThrow()
    const big = [{ ...bareContent[0]!, files: [{ path: '', content: new Uint8Array(1024 * 1024 + 1), executable: false }] }]
    expect(() => manifests({ spec: bareSpec, name: 'x', namespace: 'default', content: big, storage: '1Gi' })).toThrow(/more than a ConfigMap holds/)
  })

  it('names Pods as Kubernetes allows, and distinct names stay distinct', () => {
    expect(podName('omh-abc-s01')).toBe('omh-abc-s01')
    const odd = podName('omh_ABC_s01')
    expect(odd).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/)
    expect(odd).not.toBe(podName('omh-abc-s01'))
    expect(podName('x'.repeat(100)).length).toBeLessThanOrEqual(63)
  })
})

describe('the offline checks themselves', () => {
  it('catch an unknown field, a misspelt one and a wrong type', () => {
    const pod = JSON.parse(JSON.stringify(session().pod))
    pod.spec.containers[0].securityContext.noNewPrivileges = true
    pod.spec.restartPolicyy = 'Never'
    expect(unknownFields(pod, 'V1Pod')).toEqual(['spec.containers[0].securityContext.noNewPrivileges', 'spec.restartPolicyy'])
    const wrong = JSON.parse(JSON.stringify(session().pod))
    wrong.spec.containers[0].securityContext.runAsUser = '1000'
    expect(problems(wrong).join('\n')).toMatch(/schema: .*runAsUser/)
  })
})
