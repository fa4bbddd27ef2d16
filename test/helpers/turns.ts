// A turn of a real harness against the scripted model inside its container:
// the arguments each harness takes to run one prompt headless and talk to it.
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { RecordedRequest, Script } from '../../packages/doctor/src/scripted-model.js'
import { client, type Engine } from './engines.js'
import { ROOT } from './run.js'

/** The scripted model's port inside each container (every session container has its own loopback). */
export const MODEL_PORT = 4470

export type TurnHarness = 'claude' | 'codex' | 'opencode'

/** The harness's own arguments for one headless turn of `prompt`; Codex is pointed at the scripted model here, the others by their profile. */
export function turnArgs(prompt: string): Record<TurnHarness, string[]> {
  return {
    claude: ['-p', prompt, '--dangerously-skip-permissions'],
    codex: [
      'exec',
      '--skip-git-repo-check',
      '--dangerously-bypass-approvals-and-sandbox',
      '-c',
      'model_provider=omh',
      '-c',
      // The catalog (fetched because the provider has a key) gives the model `scripted` a free-form apply_patch.
      `model_providers.omh={name="omh",base_url="http://127.0.0.1:${MODEL_PORT}/v1",model_catalog_url="http://127.0.0.1:${MODEL_PORT}/v1/models",experimental_bearer_token="omh-turn",wire_api="responses",request_max_retries=0,stream_max_retries=0}`,
      '-m',
      'scripted',
      prompt,
    ],
    opencode: ['run', prompt],
  }
}

/** Where the session sees its worktree's turn directory. */
const IN_SESSION = '/work/.omh-turn'
const MODEL = path.join(ROOT, 'packages/doctor/dist/scripted-model.js')

/**
 * Starts the scripted model inside the session container, serving `script`
 * on MODEL_PORT and logging each request to the worktree's `.omh-turn`,
 * which it returns once the model listens. Run with the toolset's own node,
 * which every session image has whatever its environment.
 */
export async function startScriptedModel(engine: Engine, container: string, worktree: string, script: Script): Promise<string> {
  const turn = path.join(worktree, '.omh-turn')
  mkdirSync(turn)
  chmodSync(turn, 0o777)
  copyFileSync(MODEL, path.join(turn, 'model.mjs'))
  writeFileSync(path.join(turn, 'script.json'), JSON.stringify(script))
  const started = client(engine, ['exec', '-d', container, '/opt/omh/libexec/node', `${IN_SESSION}/model.mjs`, '--script', `${IN_SESSION}/script.json`, '--log', `${IN_SESSION}/requests.jsonl`, '--port', String(MODEL_PORT), '--ready', `${IN_SESSION}/port`])
  if (started.status !== 0) throw new Error(`the scripted model did not start: ${started.stderr}`)
  for (let i = 0; i < 100 && !existsSync(path.join(turn, 'port')); i++) await new Promise((r) => setTimeout(r, 100))
  if (!existsSync(path.join(turn, 'port'))) throw new Error('the scripted model did not start listening within 10 s')
  return turn
}

/** The requests the scripted model heard, in order. */
export function heardRequests(turn: string): RecordedRequest[] {
  return readFileSync(path.join(turn, 'requests.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as RecordedRequest)
}
