// What every omh command asks of the state directory before its own work: kept
// apart from the package's main entry so answering costs a few small modules.
export { ensureStateDir, moveState, type StateMove } from './state-move.js'
export { findIdle, idleCheckDue, stopIdle, type IdleContainer } from './session/idle.js'
