import type { Command, DroppedItem, RenderOutput, StagedFile } from '@omh/plugin-api'
import { tomlString } from '@omh/plugin-kit'

/** Syntax Gemini acts on in a command's prompt: shell runs (`!{…}`) and file reads (`@{…}`). */
const ACTIVE = /[!@]\{/

/**
 * Commands as `<path>/<name>.toml` (`description`, `prompt`). Gemini puts what follows the
 * command where the prompt says `{{args}}`, so `$ARGUMENTS` becomes that; a body that already
 * holds syntax Gemini would act on is dropped rather than run.
 */
export function renderCommands(commands: readonly Command[], path: string, harness: string): RenderOutput {
  const files: StagedFile[] = []
  const dropped: DroppedItem[] = []
  for (const command of commands) {
    if (ACTIVE.test(command.body)) {
      dropped.push({ capability: 'commands', name: command.name, reason: `${harness} runs \`!{…}\` and reads \`@{…}\` in a command, and omh writes neither` })
      continue
    }
    if (command.body.includes('{{args}}')) {
      dropped.push({ capability: 'commands', name: command.name, reason: `${harness} puts what follows a command where its prompt says \`{{args}}\`, so this text would not reach the model as written` })
      continue
    }
    // The marker lets `omh doctor` find the expanded command in what Gemini sends the model.
    const prompt = `<!-- omh: ${command.name} -->\n${command.body.trim().replace(/\$ARGUMENTS(?![A-Za-z0-9_])/g, '{{args}}')}\n`
    const lines = [...(command.description ? [`description = ${tomlString(command.description)}`] : []), `prompt = ${tomlString(prompt)}`]
    files.push({ kind: 'file', guest: `${path}/${command.name}.toml`, content: `${lines.join('\n')}\n` })
  }
  return { files, dropped }
}
