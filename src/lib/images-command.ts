import { OmhError, USAGE } from '@omh/plugin-api'
import { DURATION, durationMs, omhImages, type OmhImage } from '@omh/sandbox'
import { Flags } from './oclif.js'
import { sharedFlags } from './flags.js'
import { SessionsCommand } from './sessions-command.js'

/** An image as `omh images` shows it. */
export interface ImageRow extends OmhImage {
  readonly engine: string
}

/** The commands under `omh images`: omh's images on one engine. */
export abstract class ImagesCommand<T> extends SessionsCommand<T> {
  static imageFlags = {
    runtime: sharedFlags.runtime,
    harness: Flags.string({ summary: "Only this harness's images: its session images and its tools.", helpValue: '<name>' }),
  }

  protected async images(flags: { runtime?: string | undefined; harness?: string | undefined }): Promise<{ rows: ImageRow[]; resolved: Awaited<ReturnType<SessionsCommand<T>['runtime']>> }> {
    const resolved = await this.runtime(flags.runtime)
    const images = await omhImages(resolved.runtime, this.runtimeContext(), flags.harness ? { harness: flags.harness } : {})
    return { rows: images.map((i) => ({ engine: resolved.runtime.engine, ...i })), resolved }
  }

  /** `--older-than 7d` in milliseconds; anything else is a usage error. */
  protected durationFlag(name: string, value: string | undefined): number {
    if (value === undefined) return 0
    if (!DURATION.test(value)) throw OmhError.of(USAGE, { args: [`--${name} ${value}: give a whole number and s, m, h or d, e.g. 7d.`], hintArgs: [this.commandWords ?? ''] })
    return durationMs(value)
  }
}

export const size = (bytes: number): string =>
  bytes >= 1e9 ? `${(bytes / 1e9).toFixed(1)} GB` : bytes >= 1e6 ? `${Math.round(bytes / 1e6)} MB` : `${Math.round(bytes / 1e3)} kB`

export function age(created: string, now = Date.now()): string {
  const ms = now - Date.parse(created)
  if (!Number.isFinite(ms)) return 'unknown'
  const minutes = Math.floor(ms / 60_000)
  return minutes < 60 ? `${minutes}m` : minutes < 48 * 60 ? `${Math.floor(minutes / 60)}h` : `${Math.floor(minutes / 1440)}d`
}
