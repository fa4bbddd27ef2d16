import path from 'node:path'
import { TOOL_WORDS, type Problem, type Command, type RuleSection, type Skill, type Subagent, type ToolWord } from '@omh/plugin-api'
import { isObject, closest } from '@omh/plugin-kit'
import { namesIn, profileBounds, projectBounds, type CatalogueEntry, type CatalogueSource, type Loaded } from './catalogue.js'
import type { ReadBounds } from '../safe-read.js'
import { readTextFile } from '../user-files.js'
import { readMarkdown, type Markdown } from './frontmatter.js'

/** Agent Skills names: what every harness that reads skills accepts. */
const SKILL_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/

/**
 * Why a file's stem cannot name a rule, command or subagent; undefined when
 * it can. The name is written into marker comments, file names and a
 * harness's menus, where a line break, an escape or a direction mark would
 * be read as more than a name.
 */
function nameProblem(name: string): string | undefined {
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/.test(name)) {
    return 'cannot name an entry: a name holds no line break, control character or direction mark'
  }
  if (name.includes('-->')) return 'cannot name an entry: a name holds no `-->`, which ends the comment that marks a section'
  return undefined
}

const fail = (problems: Problem[]): Loaded<never> => ({ ok: false, problems })

async function markdownAt(file: string, bounds: ReadBounds, missing?: Problem): Promise<{ ok: true; value: Markdown } | { ok: false; problems: Problem[] }> {
  const text = readTextFile(file, bounds)
  if (text === undefined && missing) return { ok: false, problems: [missing] }
  if (text && !text.ok) return { ok: false, problems: [text.problem] }
  const read = await readMarkdown(text?.text ?? '', file)
  return read.ok ? read : { ok: false, problems: [read.problem] }
}

/** Markdown files of one directory as entries named by their stem. */
async function markdownEntries<T>(dir: string, load: (name: string, file: string) => Promise<Loaded<T>>) {
  const problems: Problem[] = []
  const entries: CatalogueEntry<T>[] = []
  const names = await namesIn(dir)
  for (const { name, isDirectory } of names.entries) {
    const file = path.join(dir, name)
    if (isDirectory || !name.endsWith('.md')) {
      problems.push({ file, message: `is not a markdown file; this folder holds one \`<name>.md\` per entry` })
      continue
    }
    const stem = name.slice(0, -3)
    const why = nameProblem(stem)
    if (why) problems.push({ file, message: why })
    else entries.push({ name: stem, source: file, load: () => load(stem, file) })
  }
  return { entries, problems, notices: names.notices }
}

const at = (file: string, md: Markdown, key: string) => ({ file, ...(md.lines[key] ? { line: md.lines[key] } : {}), path: key })

/** `required:` in frontmatter, omh's own word and never passed on to a harness: true or false. */
function requiredOf(file: string, md: Markdown, problems: Problem[]): { required?: true } {
  const v = md.frontmatter?.['required']
  if (v !== undefined && typeof v !== 'boolean') problems.push({ ...at(file, md, 'required'), message: 'expected true or false' })
  return v === true ? { required: true } : {}
}

export const rulesSource: CatalogueSource<'rules'> = {
  capability: 'rules',
  where: (loc) => path.join(loc.omhHome, 'rules'),
  async list(loc) {
    const dir = path.join(loc.omhHome, 'rules')
    const names = await namesIn(dir)
    const problems: Problem[] = []
    const entries: CatalogueEntry<RuleSection>[] = names.entries
      .filter((e) => !e.isDirectory && e.name.endsWith('.md'))
      .filter(({ name }) => {
        const why = nameProblem(name.slice(0, -3))
        if (why) problems.push({ file: path.join(dir, name), message: why })
        return !why
      })
      .map(({ name }) => {
        const stem = name.slice(0, -3)
        const source = path.join(dir, name)
        return {
          name: stem,
          source,
          load: async (): Promise<Loaded<RuleSection>> => {
            const read = readTextFile(source, profileBounds(loc))
            if (read && !read.ok) return fail([read.problem])
            return { ok: true, item: { name: stem, origin: stem, source, text: read?.text ?? '' } }
          },
        }
      })
    return { entries, problems, notices: names.notices }
  },
  async extra(loc) {
    if (!loc.projectDir) return { items: [], notices: [] }
    const names = ['AGENTS.md', ...(loc.projectRules ?? []).filter((n) => n !== 'AGENTS.md')]
    const found: { name: string; source: string; text: string }[] = []
    const problems: Problem[] = []
    for (const name of names) {
      const source = path.join(loc.projectDir, name)
      const read = readTextFile(source, projectBounds(loc))
      if (read && !read.ok) problems.push(read.problem)
      // A blank file counts as absent, so an empty placeholder never wins over real rules.
      else if (read?.text.trim()) found.push({ name, source, text: read.text })
    }
    if (problems.length) return { items: [], notices: [], problems }
    const [chosen, ...others] = found
    if (!chosen) return { items: [], notices: [] }
    const notices: string[] = []
    if (chosen.name !== 'AGENTS.md') notices.push(`composed the project's ${chosen.name}; name it AGENTS.md and every harness reads it first`)
    for (const other of others) {
      if (other.text.trim() !== chosen.text.trim()) notices.push(`the project's ${other.name} differs from its ${chosen.name} and was not composed`)
    }
    return { items: [{ name: chosen.name, origin: chosen.name, source: chosen.source, text: chosen.text }], notices }
  },
}

export const skillsSource: CatalogueSource<'skills'> = {
  capability: 'skills',
  where: (loc) => path.join(loc.omhHome, 'skills'),
  async list(loc) {
    const dir = path.join(loc.omhHome, 'skills')
    const problems: Problem[] = []
    const entries: CatalogueEntry<Skill>[] = []
    const names = await namesIn(dir)
    for (const { name, isDirectory } of names.entries) {
      const source = path.join(dir, name)
      if (!isDirectory) problems.push({ file: source, message: 'is not a folder; a skill is a folder holding SKILL.md' })
      else entries.push({ name, source, load: () => loadSkill(name, source, profileBounds(loc)) })
    }
    return { entries, problems, notices: names.notices }
  },
}

async function loadSkill(name: string, dir: string, bounds: ReadBounds): Promise<Loaded<Skill>> {
  const file = path.join(dir, 'SKILL.md')
  const read = await markdownAt(file, bounds, { file: dir, message: 'has no SKILL.md' })
  if (!read.ok) return fail(read.problems)
  const md = read.value
  const fm = md.frontmatter
  if (!fm) return fail([{ file, line: 1, message: 'has no frontmatter; a skill starts with `---`, then `name:` and `description:`' }])
  const problems: Problem[] = []
  if (!SKILL_NAME.test(name)) {
    problems.push({ file: dir, message: 'a skill name is lowercase letters and digits, joined by single dashes' })
  }
  if (fm['name'] === undefined) problems.push({ ...at(file, md, 'name'), line: 1, message: `required, but missing; write \`name: ${name}\`` })
  else if (fm['name'] !== name) {
    problems.push({ ...at(file, md, 'name'), message: `is ${JSON.stringify(fm['name'])}, but the folder is "${name}"; harnesses skip a skill whose name differs` })
  }
  const description = fm['description']
  if (typeof description !== 'string' || !description.trim()) {
    problems.push({ ...at(file, md, 'description'), message: 'required: a harness never shows the model a skill without a description' })
  }
  const required = requiredOf(file, md, problems)
  if (problems.length) return fail(problems)
  return { ok: true, item: { name, description: description as string, source: dir, ...required } }
}

export const commandsSource: CatalogueSource<'commands'> = {
  capability: 'commands',
  where: (loc) => path.join(loc.omhHome, 'commands'),
  list: (loc) => markdownEntries(path.join(loc.omhHome, 'commands'), (name, file) => loadCommand(name, file, profileBounds(loc))),
}

async function loadCommand(name: string, file: string, bounds: ReadBounds): Promise<Loaded<Command>> {
  const read = await markdownAt(file, bounds)
  if (!read.ok) return fail(read.problems)
  const { frontmatter = {}, body } = read.value
  const { description, required: _, ...rest } = frontmatter
  const problems: Problem[] = []
  if (description !== undefined && typeof description !== 'string') problems.push({ ...at(file, read.value, 'description'), message: 'expected a string' })
  const required = requiredOf(file, read.value, problems)
  if (problems.length) return fail(problems)
  return {
    ok: true,
    item: { name, source: file, frontmatter: rest, body, ...(typeof description === 'string' ? { description } : {}), ...required },
  }
}

const SUBAGENT_KEYS = ['name', 'description', 'tools', 'model', 'required']

export const subagentsSource: CatalogueSource<'subagents'> = {
  capability: 'subagents',
  where: (loc) => path.join(loc.omhHome, 'subagents'),
  list: (loc) => markdownEntries(path.join(loc.omhHome, 'subagents'), (name, file) => loadSubagent(name, file, profileBounds(loc))),
}

async function loadSubagent(name: string, file: string, bounds: ReadBounds): Promise<Loaded<Subagent>> {
  const read = await markdownAt(file, bounds)
  if (!read.ok) return fail(read.problems)
  const md = read.value
  const fm = md.frontmatter
  if (!fm) return fail([{ file, line: 1, message: 'has no frontmatter; a subagent starts with `---`, then `name:` and `description:`' }])
  const problems: Problem[] = []
  for (const key of Object.keys(fm)) {
    if (!SUBAGENT_KEYS.includes(key)) {
      const near = closest(key, SUBAGENT_KEYS)
      problems.push({ ...at(file, md, key), message: 'unknown key; a subagent has name, description, tools, model and required', ...(near ? { suggestion: near } : {}) })
    }
  }
  if (fm['name'] !== name) {
    problems.push({
      ...at(file, md, 'name'),
      ...(md.lines['name'] ? {} : { line: 1 }),
      message: fm['name'] === undefined ? `required, but missing; write \`name: ${name}\`` : `is ${JSON.stringify(fm['name'])}, but the file is "${name}.md"`,
    })
  }
  const description = fm['description']
  if (typeof description !== 'string' || !description.trim()) {
    problems.push({ ...at(file, md, 'description'), ...(md.lines['description'] ? {} : { line: 1 }), message: 'required: a harness picks a subagent by its description' })
  }
  const tools = toolWords(fm['tools'], (message, suggestion) =>
    problems.push({ ...at(file, md, 'tools'), message, ...(suggestion ? { suggestion } : {}) }),
  )
  const model = fm['model']
  const named = (v: unknown) => typeof v === 'string' && v.trim() !== ''
  if (model !== undefined && !named(model) && !(isObject(model) && Object.values(model).every(named))) {
    problems.push({ ...at(file, md, 'model'), message: 'expected a model name, or a map of harness name to model name' })
  }
  if (!md.body.trim()) problems.push({ file, message: 'has no prompt: the text after the frontmatter is what the subagent is told' })
  const required = requiredOf(file, md, problems)
  if (problems.length) return fail(problems)
  return {
    ok: true,
    item: {
      name,
      description: description as string,
      ...(tools ? { tools } : {}),
      ...(model !== undefined ? { model: model as string | Record<string, string> } : {}),
      source: file,
      // The prompt, without the blank lines that separate it from the frontmatter.
      body: `${md.body.trim()}\n`,
      ...required,
    },
  }
}

/** `tools` as a YAML list or a comma-separated string of omh tool words. */
function toolWords(raw: unknown, problem: (message: string, suggestion?: string) => void): ToolWord[] | undefined {
  if (raw === undefined) return undefined
  const words = typeof raw === 'string' ? raw.split(',').map((w) => w.trim()).filter(Boolean) : raw
  if (!Array.isArray(words) || words.some((w) => typeof w !== 'string')) {
    problem(`expected a list of omh tool words (${TOOL_WORDS.join(', ')})`)
    return undefined
  }
  const out: ToolWord[] = []
  for (const word of words as string[]) {
    if ((TOOL_WORDS as readonly string[]).includes(word)) {
      if (!out.includes(word as ToolWord)) out.push(word as ToolWord)
    } else {
      problem(`"${word}" is not an omh tool word (${TOOL_WORDS.join(', ')})`, closest(word, TOOL_WORDS))
    }
  }
  return out
}
