#!/usr/bin/env node
import module from 'node:module'

// Loading omh's code dominates a short command's wall time; Node's compile
// cache keeps its bytecode between runs.
module.enableCompileCache?.()

const { execute } = await import('../dist/omh.js')
await execute({ dir: import.meta.url })
