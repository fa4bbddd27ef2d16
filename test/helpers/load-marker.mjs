// Preloaded with `--import` into an omh under test: notes in $OMH_TEST_LOADS, with the process's id,
// whenever omh's own code (dist/omh.js) or a plugin is loaded. A replayed answer loads neither.
import fs from 'node:fs'
import module from 'node:module'

// Taken now, and the lowest calls: a recorder wraps `node:fs` later (named imports follow it), and
// `appendFileSync` calls `fs.writeFileSync` through the module, wrapped or not.
const { openSync, writeSync, closeSync } = fs
const appendFileSync = (file, line) => {
  const fd = openSync(file, 'a')
  try {
    writeSync(fd, line)
  } finally {
    closeSync(fd)
  }
}

const file = process.env.OMH_TEST_LOADS
if (file) {
  module.registerHooks({
    resolve(specifier, context, nextResolve) {
      const resolved = nextResolve(specifier, context)
      if (/\/dist\/omh\.js$|\/node_modules\/omh-(renderer|runtime)-/.test(resolved.url)) appendFileSync(file, `${process.pid} ${resolved.url}\n`)
      return resolved
    },
  })
}
