// The renderer through omh's test kit: the contract (shape, every format with every class, purity),
// then the golden cases under golden/, each rendered with the facts of this package's own adapter.
import { readFileSync } from 'node:fs'
import { testRenderer } from '@omh/plugin-kit/testing'
import { parseToml } from '@omh/plugin-kit/toml'
import plugin from '../index.js'

const file = new URL('../adapters/gemini.toml', import.meta.url)
const { data } = parseToml(readFileSync(file, 'utf8'), file.pathname)
const home = (p) => p.replace('$HOME', '/home/agent')
const { path: _path, render: _render, expect: _expect, ...hooks } = data.capabilities.hooks

testRenderer(plugin, {
  golden: new URL('./golden', import.meta.url),
  adapter: { name: 'gemini', tools: data.tools, paths: Object.fromEntries(Object.entries(data.capabilities).map(([c, b]) => [c, home(b.path)])) },
  bindings: { 'gemini-settings': hooks },
})
