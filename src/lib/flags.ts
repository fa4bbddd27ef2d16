import { Flags } from './oclif.js'

/**
 * The flags several commands share, defined once: a launch takes all of
 * them, and doctor, auth, attach and the session commands take the ones that
 * mean something to them.
 */
export const sharedFlags = {
  runtime: Flags.string({ summary: 'Container engine: auto or an engine name (default: the `runtime` setting).', helpValue: '<engine>' }),
  account: Flags.string({
    char: 'a',
    summary: 'Mount the login of this captured account (default: the `account` setting, or the only one captured).',
    helpValue: '<account>',
  }),
  session: Flags.string({ char: 's', summary: 'The session (default: the one launched into last).', helpValue: '<sid>' }),
  new: Flags.boolean({ summary: 'Start a new session instead of returning to the last one.', exclusive: ['session'], default: false }),
  name: Flags.string({ summary: 'Start a new session by this name (its branch is omh/<name>); --session <name> goes back into it.', exclusive: ['session'], helpValue: '<name>' }),
  'dry-run': Flags.boolean({ summary: 'Print what the launch would do, and create or start nothing.', default: false }),
  detach: Flags.boolean({
    char: 'd',
    summary: 'Start the harness in the background and print its session id; `omh sessions attach` brings it to a terminal, `omh sessions logs` shows its output.',
    exclusive: ['dry-run'],
    default: false,
  }),
}

/** A launch's own flags: they go before the harness name. */
export const launchFlags = {
  new: sharedFlags.new,
  name: sharedFlags.name,
  session: sharedFlags.session,
  'dry-run': sharedFlags['dry-run'],
  detach: sharedFlags.detach,
  runtime: sharedFlags.runtime,
  account: sharedFlags.account,
}
