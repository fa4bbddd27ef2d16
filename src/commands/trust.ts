import path from 'node:path'
import { NOT_A_REPOSITORY, OmhError } from '@omh/plugin-api'
import { TRUST_REASONS, findRepoRoot, inspectRepositoryTrust, omhHomeOf, omhStateOf, recordTrust, revokeTrust, type TrustFile } from '@omh/kernel'
import { defaultsFileOf } from '../lib/kernel.js'
import { Flags } from '../lib/oclif.js'
import { OmhCommand } from '../lib/omh-command.js'
import { plural, table } from '../lib/table.js'

export interface TrustResult {
  /** The repository root; its real path keys the record. */
  repository: string
  /** What this run did: recorded the files, only looked (`--show`), or forgot the record (`--revoke`). */
  action: 'trusted' | 'shown' | 'revoked'
  /** omh runs the repository's code: every file that loads code is recorded with its present content. */
  trusted: boolean
  /** Every file of the repository that loads code or widens the sandbox, and its state once this run is done. */
  files: (Pick<TrustFile, 'file' | 'reason' | 'sha256' | 'state'> & { widens?: string[] })[]
}

export default class Trust extends OmhCommand<TrustResult> {
  static override summary = "Let omh run the code this repository carries (the plugins its settings name, JavaScript settings) and the settings that widen the sandbox."
  static override description =
    'Records the sha256 of every such file in $OMH_STATE/trust.json; omh refuses a file that is new or changed since (REPOSITORY_UNTRUSTED). Settings that load no code and only narrow the sandbox, hook files and rules need no trust.'
  static override flags = {
    show: Flags.boolean({ summary: 'List what is trusted and what `omh trust` would trust; change nothing.', exclusive: ['revoke'] }),
    revoke: Flags.boolean({ summary: 'Take the trust back: omh runs none of the repository\'s code until trusted again.', exclusive: ['show'] }),
  }

  async run(): Promise<TrustResult> {
    const { flags } = await this.parse(Trust)
    const root = findRepoRoot(process.cwd())
    if (!root) throw OmhError.of(NOT_A_REPOSITORY, { args: [process.cwd()] })
    const at = { cwd: process.cwd(), repoRoot: root, omhState: omhStateOf(process.env), omhHome: omhHomeOf(process.env), defaults: defaultsFileOf(this.config.root) }
    const revoked = flags.revoke ? await revokeTrust(root, at.omhState) : false
    let trust = await inspectRepositoryTrust(at)
    const action = flags.revoke ? 'revoked' : flags.show || !trust.files.length ? 'shown' : 'trusted'
    if (action === 'trusted' && !trust.trusted) {
      await recordTrust(trust)
      trust = { ...trust, trusted: true, files: trust.files.map((f) => ({ ...f, state: 'trusted' })) }
    }
    const files = trust.files.map(({ file, reason, sha256, state, widens }) => ({ file, reason, sha256, state, ...(widens ? { widens: widens.map((k) => k.join('.')) } : {}) }))
    if (!this.jsonEnabled()) this.log(this.#describe(root, action, trust.trusted, files, revoked))
    return { repository: root, action, trusted: trust.trusted, files }
  }

  #describe(root: string, action: TrustResult['action'], trusted: boolean, files: TrustResult['files'], revoked: boolean): string {
    const s = this.style
    if (action === 'revoked') return revoked ? `${root} is no longer trusted: omh runs none of its code.` : `${root} was not trusted.`
    if (!files.length) return `Nothing in ${root} runs code on this machine or widens the sandbox: it needs no trust.`
    const where = (file: string) => {
      const rel = path.relative(root, file)
      return rel.startsWith('..') ? file : rel
    }
    const rows = table(
      files.map((f) => [
        f.state === 'trusted' ? s.green('✓') : s.red('✗'),
        s.bold(where(f.file)),
        f.widens ? `${TRUST_REASONS[f.reason]} (${f.widens.join(', ')})` : TRUST_REASONS[f.reason],
        f.state === 'trusted' ? 'trusted' : f.state === 'changed' ? s.yellow('changed since trusted') : s.yellow('not trusted'),
        s.dim(f.sha256.slice(0, 12)),
      ]),
      '  ',
    )
    const count = plural(files.length, 'file')
    if (action === 'trusted') {
      return `${root} is trusted: omh follows its ${count} that load code or widen the sandbox.\n${rows}\nA change to any of them needs \`omh trust\` again; \`omh trust --revoke\` takes it back.`
    }
    const pending = files.filter((f) => f.state !== 'trusted').length
    return trusted
      ? `${root} is trusted: omh follows its ${count} that load code or widen the sandbox.\n${rows}`
      : `${root} is not trusted: ${pending} of its ${count} that load code or widen the sandbox ${pending === 1 ? 'is' : 'are'} new or changed.\n${rows}\nRead ${pending === 1 ? 'it' : 'them'}, then run \`omh trust\` to let omh follow ${pending === 1 ? 'it' : 'them'}.`
  }
}
