/**
 * The proxies beside a session behind the allowlist, started together: the egress proxy on the
 * session's own network (egress.ts), then the credential proxy, when the session holds a key or a
 * bound secret (credentials.ts). The session's container needs only the network to start; its
 * harness waits for `ready`.
 */
import path from 'node:path'
import type { ContainerInfo, RuntimeContext, RuntimePlugin } from '@omh/plugin-api'
import type { AgentUser } from '../agent-user.js'
import type { ImageOptions } from '@omh/image'
import { ensureCredentialProxy, type Proxied } from './credentials.js'
import { EGRESS_LABEL, egressDir, startEgress, type Egress } from './egress.js'

export interface ProxiesUp {
  readonly runtime: RuntimePlugin
  readonly context: RuntimeContext
  /** The session container's name; the proxies and the network are named after it. */
  readonly container: string
  readonly repo: string
  readonly session: string
  /** The session's run directory, where the host keeps the proxies' files. */
  readonly run: string
  readonly egress: Egress
  /** A new session container is about to start: the proxies start anew beside it. */
  readonly fresh: boolean
  /** The outside network the proxies reach out on; absent: the engine's default. */
  readonly outside?: string
  /** How the egress proxy's image is built. */
  readonly image: ImageOptions
  /** The session's image: the credential proxy runs its `node`. */
  readonly sessionImage: string
  readonly proxied?: Proxied
  /** The session's agent, whom a proxy keeping a login's vault runs as. */
  readonly agent?: AgentUser
  /** A PEM file of further authorities the credential proxy trusts upstream. */
  readonly ca?: string
  /** The session's files are copied to its engine: the proxies' files go in volumes with these labels. */
  readonly copied?: { readonly labels: Readonly<Record<string, string>> }
  /** The engine's answer about the egress proxy, asked beside the session container's. */
  readonly seenEgress?: Promise<ContainerInfo | undefined>
}

/** Resolves, once the session's network exists, with it; `ready` settles once both proxies serve. */
export async function startProxies(at: ProxiesUp): Promise<{ readonly network: string; readonly ready: Promise<void> }> {
  const label = `${at.repo}-${at.session}`
  const shared = { runtime: at.runtime, context: at.context, container: at.container, fresh: at.fresh, ...(at.outside ? { outside: at.outside } : {}), ...(at.copied ? { copied: at.copied } : {}) }
  const started = await startEgress({ ...shared, session: at.session, label, dir: egressDir(at.run), egress: at.egress, image: at.image, ...(at.seenEgress ? { seen: at.seenEgress } : {}) })
  const proxied = at.proxied
  const ready = started.ready.then(() =>
    proxied
      ? ensureCredentialProxy({
          ...shared,
          labels: { [EGRESS_LABEL]: label },
          network: started.network,
          image: at.sessionImage,
          dir: path.join(at.run, 'creds'),
          proxied,
          file: at.egress.file,
          ...(at.agent ? { agent: at.agent } : {}),
          ...(at.ca ? { ca: at.ca } : {}),
        })
      : undefined,
  )
  // Its failure is the caller's to hear when it waits for the proxies.
  ready.catch(() => undefined)
  return { network: started.network, ready }
}
