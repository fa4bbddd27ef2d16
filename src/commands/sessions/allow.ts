import path from 'node:path'
import { lstat, readlink, realpath } from 'node:fs/promises'
import { FILE_OUTSIDE_TREE, OmhError, USAGE } from '@omh/plugin-api'
import { inspectRepositoryTrust, recordTrust, replaceFile, snapshot } from '@omh/kernel'
import { HOST_PATTERN } from '@omh/plugin-kit'
import { LABEL, allowInSession, applyAllowlist, containerName, egressDir, listSessions, proxyName, sessionEgress, sessionPaths } from '@omh/sandbox'
import { Args, Flags } from '../../lib/oclif.js'
import { SessionsCommand } from '../../lib/sessions-command.js'
import { withAllowedHosts } from '../../lib/settings-plugins.js'
import { defaultsFileOf } from '../../lib/kernel.js'

export interface SessionsAllowResult {
  session: string
  /** Every host this session alone may reach, the ones just added among them. */
  allowed: string[]
  /** Whether the running proxy took them now; false: they apply when the session next starts. */
  applied: boolean
  /** The settings file they were also written to, with `--save`. */
  saved?: string
}

export default class SessionsAllow extends SessionsCommand<SessionsAllowResult> {
  static override summary = 'Let a session reach more hosts, at once and without a restart.'
  static override description =
    "Adds each HOST[:PORT] pattern (`*.example.com` takes every subdomain) to what the session's egress proxy lets out: the running proxy rereads its rules, and the session keeps them from then on. `--save` (or `--save=user`) also writes them to `[network] allow` in your own settings, for every session; `--save=repo` writes them to the repository's `.omh/settings.toml`, for everyone's sessions of it (a file you trusted stays trusted with your edit). The refusal a session gets from its proxy names this very command. `omh sessions egress --denied` lists what was refused. Without a session id, the most recent session."
  static override strict = false
  static override args = { session: Args.string({ description: 'Session id (e.g. s01), then one or more HOST[:PORT] patterns.' }) }
  static override examples = ['omh sessions allow api.stripe.com', 'omh sessions allow s02 pypi.internal.example:8443 --save', 'omh sessions allow registry.example.com --save=repo']
  static override flags = {
    save: Flags.string({
      summary: "Also add them to `[network] allow`: in your own settings (`--save`, `--save=user`) or the repository's (`--save=repo`).",
      options: ['user', 'repo'],
    }),
    runtime: SessionsCommand.runtimeFlag,
  }

  async run(): Promise<SessionsAllowResult> {
    // `--save` alone means your own settings: a flag with a value of its own otherwise.
    this.argv = this.argv.map((word) => (word === '--save' ? '--save=user' : word))
    const { argv, flags } = await this.parse(SessionsAllow)
    const kernel = await this.kernel()
    const repo = await this.repository()
    const words = argv as string[]
    // The first word is a session when this repository has one by that name; a host is no session.
    const named = words.length > 1 || (words[0] !== undefined && !words[0].includes('.')) ? (await listSessions(kernel.omhState, repo)).includes(words[0]!) : false
    const hosts = named ? words.slice(1) : words
    if (!hosts.length) throw OmhError.of(USAGE, { args: ['Name at least one host to allow, such as api.example.com or *.example.com:8443.'], hintArgs: ['sessions allow'] })
    const bad = hosts.find((h) => h.length > 260 || !HOST_PATTERN.test(h))
    if (bad !== undefined) throw OmhError.of(USAGE, { args: [`${JSON.stringify(bad)} is no host pattern: give host[:port], such as api.example.com or *.example.com:8443.`], hintArgs: ['sessions allow'] })
    const sid = await this.session(named ? words[0] : undefined)
    const dir = egressDir(sessionPaths(kernel.omhState, repo, sid).run)
    const allowed = await allowInSession(dir, hosts)

    const saved = flags.save === undefined ? undefined : await this.save(flags.save === 'repo' ? path.join(repo.root, '.omh', 'settings.toml') : path.join(kernel.omhHome, 'settings.toml'), hosts, repo.root)

    const applied = await this.applyNow(sid, flags.runtime, dir)
    if (!this.jsonEnabled()) {
      this.log(`${sid} may now reach ${hosts.join(', ')}${applied ? '' : ` (from its next start: its proxy is not running)`}${saved ? `; saved in ${saved}` : ''}`)
    }
    return { session: sid, allowed, applied, ...(saved ? { saved } : {}) }
  }

  /**
   * Adds the hosts to a settings file through the planned write. The repository's file widens the
   * sandbox, so it needs trust: one that was trusted (or needed none) stays trusted with this edit,
   * which is the user's own; one waiting for trust keeps waiting.
   */
  private async save(file: string, hosts: readonly string[], root: string): Promise<string> {
    const repository = !file.startsWith(`${(await this.kernel()).omhHome}${path.sep}`)
    const trustAt = { cwd: process.cwd(), repoRoot: root, omhState: (await this.kernel()).omhState, omhHome: (await this.kernel()).omhHome, defaults: defaultsFileOf(this.config.root) }
    const wasTrusted = repository ? (await inspectRepositoryTrust(trustAt)).files.every((f) => f.file !== file || f.state === 'trusted') : false
    if (repository) await insideRepository(file, root)
    const before = await snapshot(file)
    const text = before.bytes?.toString('utf8') ?? ''
    const next = withAllowedHosts(text, file, hosts)
    if (next !== text) await replaceFile(before, next)
    if (wasTrusted) {
      const after = await inspectRepositoryTrust(trustAt)
      await recordTrust({ ...after, files: after.files.filter((f) => f.file === file) })
    }
    return file
  }

  /** Has the session's running proxy take the rules now; false when none runs. */
  private async applyNow(sid: string, engine: string | undefined, dir: string): Promise<boolean> {
    const resolved = await this.runtimeFor(sid, engine, true)
    if (!resolved) return false
    const { runtime } = resolved
    const repo = await this.repository()
    const context = this.runtimeContext()
    const container = await runtime.inspect?.(containerName(repo, sid), context)
    const proxy = await runtime.inspect?.(proxyName(containerName(repo, sid)), context)
    if (!container?.running || !proxy?.running) return false
    const kernel = await this.kernel()
    const adapter = await kernel.adapter(container.labels[LABEL.harness] ?? '')
    let failure: unknown
    await applyAllowlist({
      runtime,
      context,
      container: containerName(repo, sid),
      dir,
      allow: async () => (await sessionEgress(kernel.settings, adapter, dir)).allow,
      heard: (event) => {
        if (!event.ok) failure = event.error
      },
    })
    if (failure) throw failure
    return true
  }
}

/** Refuses a repository's settings file that a link leads out of the repository: the write would land there. */
async function insideRepository(file: string, root: string): Promise<void> {
  const link = await lstat(file).catch(() => undefined)
  if (link?.isSymbolicLink() && (await realpath(file).catch(() => undefined)) === undefined) throw OmhError.of(FILE_OUTSIDE_TREE, { args: [file, root, await readlink(file)] })
  let at = file
  let rest = ''
  // The nearest part of the path that exists, resolved; what is missing below it is made inside.
  for (;;) {
    const real = await realpath(at).catch(() => undefined)
    if (real !== undefined) {
      const target = path.join(real, rest)
      const realRoot = await realpath(root)
      if (target !== realRoot && !target.startsWith(`${realRoot}${path.sep}`)) throw OmhError.of(FILE_OUTSIDE_TREE, { args: [file, root, target] })
      return
    }
    rest = path.join(path.basename(at), rest)
    at = path.dirname(at)
  }
}
