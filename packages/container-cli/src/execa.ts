// execa, loaded on first use. The build replaces this file's output with one
// bundle of execa and its dependencies (scripts/bundle.js): resolving its
// hundred-odd modules one by one cost about 130 ms of every command that
// touches an engine.
export { execa } from 'execa'
