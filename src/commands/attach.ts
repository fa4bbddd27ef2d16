import { spawn } from 'node:child_process'
import { accessSync, constants } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Args, Flags } from '../lib/oclif.js'
import { EDITOR_FAILED, OmhError } from '@omh/plugin-api'
import { editorArgs, type Attached } from '@omh/sandbox'
import { OmhCommand } from '../lib/omh-command.js'
import { sharedFlags } from '../lib/flags.js'

export interface AttachResult extends Attached {
  /** The editor asked for: whether it was started, the command, and its exit status (omh's too). */
  readonly editor?: { readonly name: string; readonly command: readonly string[]; readonly started: boolean; readonly status?: number }
}

export default class Attach extends OmhCommand<AttachResult> {
  static override summary = 'Open a session in an editor over SSH, or print how to reach it.'
  static override description = `Starts sshd in the session's container (reachable on 127.0.0.1 only, with this repository's key), writes an ssh config entry for the session and includes it from ~/.ssh/config, so \`ssh <alias>\` reaches /work. With an editor (code, cursor, zed, nvim, or one of your own in $OMH_HOME/editors), opens the session in it; an editor that is not installed is not an error: the URL and the commands are printed instead.`

  static override args = {
    editor: Args.string({ required: false, description: 'Editor name, e.g. code.' }),
  }

  static override flags = {
    session: sharedFlags.session,
    runtime: sharedFlags.runtime,
    port: Flags.integer({
      summary: "A port on this machine that already reaches the container's sshd (port 2222): a forward you made, for a runtime that publishes no port here.",
      min: 1,
      max: 65535,
    }),
  }

  async run(): Promise<AttachResult> {
    const { args, flags } = await this.parse(Attach)
    const kernel = await this.kernel()
    const editor = args.editor ? await (await this.kernel()).editor(args.editor) : undefined
    const { attach } = await import('@omh/sandbox')
    const err = this.errStyle
    const attached = await attach(
      kernel,
      { ...(flags.session ? { session: flags.session } : {}), ...(flags.runtime ? { engine: flags.runtime } : {}), ...(flags.port ? { port: flags.port } : {}) },
      { context: { env: process.env, verbose: this.verbose, progress: (line) => this.notice(err.dim(line)) } },
    )
    const s = this.style
    const lines = [
      `${s.green('✓')} session ${s.bold(attached.session)} listens on 127.0.0.1:${attached.port} as ${s.bold(attached.alias)}`,
      s.dim(`  ssh ${attached.alias}            # a shell in /work's container`),
      s.dim(`  ${attached.url}`),
    ]
    if (attached.include !== 'present') lines.push(s.dim(`  ${attached.sshConfig} now includes omh's entries (first line)`))
    if (!editor) {
      if (!this.jsonEnabled()) this.log(lines.join('\n'))
      return attached
    }
    const command = [editor.bin, ...editorArgs(editor.args, attached.alias)]
    if (!onPath(editor.bin)) {
      if (!this.jsonEnabled()) {
        this.log(lines.join('\n'))
        this.log(`${editor.name} is not installed here (no ${editor.bin} on PATH). Open ${attached.url} yourself, or run:\n  ${command.map(quote).join(' ')}`)
      }
      return { ...attached, editor: { name: editor.name, command, started: false } }
    }
    if (!this.jsonEnabled()) this.log(lines.join('\n'))
    const status = await new Promise<number>((resolve, reject) => {
      const child = spawn(command[0]!, command.slice(1), { stdio: this.jsonEnabled() ? 'ignore' : 'inherit' })
      child.on('error', (error) =>
        reject(OmhError.of(EDITOR_FAILED, { args: [editor.name, editor.bin, error.message], hintArgs: [attached.alias, editor.file], cause: error })),
      )
      // Killed by a signal: the status a shell would give.
      child.on('close', (code, signal) => resolve(code ?? 128 + (signal ? (os.constants.signals[signal] ?? 0) : 0)))
    })
    if (status !== 0) this.passOnStatus(status)
    return { ...attached, editor: { name: editor.name, command, started: true, status } }
  }

}

function onPath(bin: string): boolean {
  const candidates = bin.includes('/') ? [bin] : (process.env['PATH'] ?? '').split(path.delimiter).filter(Boolean).map((d) => path.join(d, bin))
  return candidates.some((c) => {
    try {
      accessSync(c, constants.X_OK)
      return true
    } catch {
      return false
    }
  })
}

const quote = (word: string) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`)
