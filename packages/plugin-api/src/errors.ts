/**
 * The error catalogue. Every failure omh reports is built from one entry here.
 *
 * - Codes are sorted A→Z and never renamed: scripts match on them.
 * - `exit` is 2 for bad config or usage (the user must change something they
 *   wrote), 1 for an operation that failed (retrying may help).
 * - `message` says what happened and why, file and key first; `hint` says what
 *   to do next. Neither starts with "Error:" — the formatter adds the frame.
 *
 * `docs/errors.md` lists every code with an example; a test keeps the two equal.
  *
 * Longer than 400 lines: the catalogue holds every code omh reports, one entry each, sorted.
 */

/** One problem inside a file: where it is, and what is wrong there. */
export interface Problem {
  /** Absolute path of the file the problem is in, when there is one. */
  file?: string
  /** 1-based line, when the file format gives one. */
  line?: number
  /** 1-based column, when the file format gives one. */
  column?: number
  /** Dotted key path inside the document, e.g. `capabilities.rules.render`. */
  path?: string
  /** What is wrong, in words. */
  message: string
  /** A near miss, e.g. the key the user probably meant. */
  suggestion?: string
}

export interface ErrorData<M extends unknown[] = never[], H extends unknown[] = never[]> {
  readonly code: string
  readonly exit: 1 | 2
  readonly message: (...args: M) => string
  readonly hint?: (...args: H) => string
}

// Every entry defined in this module, in the order defined: the catalogue is derived from it, never kept by hand.
const defined: AnyErrorData[] = []
const define = <M extends unknown[], H extends unknown[] = []>(data: ErrorData<M, H>) => {
  defined.push(data as AnyErrorData)
  return data
}

const list = (names: readonly string[]) => (names.length ? names.join(', ') : 'none')

export const ACCOUNT_AMBIGUOUS = define({
  code: 'ACCOUNT_AMBIGUOUS',
  exit: 2,
  message: (harness: string, accounts: readonly string[]) =>
    `${harness} has several accounts (${accounts.join(', ')}), and nothing says which to use.`,
  hint: (harness: string, accounts: readonly string[]) =>
    `Name one with \`-a ${accounts[0] ?? '<name>'}\`, or set \`account = "<name>"\` in .omh/settings.local.toml (or your personal settings) for ${harness}.`,
})

export const ACCOUNT_INVALID = define({
  code: 'ACCOUNT_INVALID',
  exit: 2,
  message: (name: string, why: string) => `"${name}" cannot name an account: ${why}.`,
  hint: () => 'An account name is one path component: letters, digits, dots, dashes and underscores, not starting with a dot.',
})

export const ACCOUNT_NOT_FOUND = define({
  code: 'ACCOUNT_NOT_FOUND',
  exit: 2,
  message: (harness: string, account: string, captured: readonly string[]) =>
    `${harness} has no account "${account}" (captured: ${list(captured)}).`,
  hint: (harness: string, account: string) => `Log in once with \`omh auth ${harness} ${account}\`.`,
})

export const ADAPTERS_INVALID = define({
  code: 'ADAPTERS_INVALID',
  exit: 2,
  message: (bad: number, total: number) => `${bad} of ${total} adapter files have problems:`,
  hint: () => 'Fix the keys above, then check again with `omh adapters validate`.',
})

export const ADAPTER_INVALID = define({
  code: 'ADAPTER_INVALID',
  exit: 2,
  message: (file: string, count: number) => `${file} has ${count} problem${count === 1 ? '' : 's'}:`,
  hint: (file: string) => `Fix the keys above, then check again with \`omh adapters validate ${file}\`.`,
})

export const ADAPTER_NOT_FOUND = define({
  code: 'ADAPTER_NOT_FOUND',
  exit: 2,
  message: (name: string) => `No harness is called "${name}".`,
  hint: (known: readonly string[], dir: string, closest?: string) =>
    `${closest ? `Did you mean "${closest}"? ` : ''}Known harnesses: ${list(known)}. Add one by writing ${dir}/${'<name>'}.toml.`,
})

export const ATTACH_FAILED = define({
  code: 'ATTACH_FAILED',
  exit: 1,
  message: (sid: string, why: string) => `Could not start sshd in session ${sid}: ${why}`,
  hint: () =>
    'The image needs openssh-server (omh\'s base image has it), and the session container must publish its port: on an engine whose default network has none, set `[session] network` to a network that does.',
})

export const ATTACH_NEEDS_TUNNEL = define({
  code: 'ATTACH_NEEDS_TUNNEL',
  exit: 1,
  message: (sid: string, why: string) => `Session ${sid} runs where this machine cannot reach its sshd: ${why}.`,
  hint: (how: string) => how,
})

export const ATTACH_UNREACHABLE = define({
  code: 'ATTACH_UNREACHABLE',
  exit: 2,
  message: (sid: string) =>
    `Session ${sid} runs behind its egress proxy, on a network with no route to or from this host, so nothing here can reach its sshd.`,
  hint: (file: string, sid: string) =>
    `To attach, set \`[network] egress = "open"\` in ${file} (with a \`[session] network\` that publishes ports), then \`omh sessions down ${sid}\` and launch again. The session then reaches every host, unfiltered. For a shell without ssh, \`omh sessions exec ${sid}\` works under every egress mode.`,
})

export const AUTH_UNSUPPORTED = define({
  code: 'AUTH_UNSUPPORTED',
  exit: 2,
  message: (harness: string, file: string) => `${file} declares no \`creds\`, so omh has nowhere to keep a ${harness} login.`,
  hint: () => 'Add `creds` to the adapter: the guest paths the harness saves its login in (a trailing `/` for a directory).',
})

export const BASE_UNKNOWN = define({
  code: 'BASE_UNKNOWN',
  exit: 2,
  message: (root: string, detachedAt?: string) =>
    `${root}: omh cannot tell which branch a session starts from: ${detachedAt ? `HEAD is detached at ${detachedAt}` : 'HEAD is on a branch with no commits'}, and there is no origin/HEAD, main or master.`,
  hint: () => 'Check out the branch sessions should start from (`git switch <branch>`), then run omh again.',
})

export const CARRY_IN_REFUSED = define({
  code: 'CARRY_IN_REFUSED',
  exit: 2,
  message: (file: string, entry: string, why: string) => `${file}: [session] carry_in entry "${entry}" is refused: ${why}`,
  hint: () => 'carry_in copies regular files inside the repository, [limits] carry_in_bytes at most in all: change the entry or the limit (docs/sessions.md#carry-in).',
})

export const COMBINE_CONFLICT = define({
  code: 'COMBINE_CONFLICT',
  exit: 2,
  message: (guest: string, first: string, second: string, why: string) =>
    `${first} and ${second} both write ${guest}, and they cannot be combined: ${why}`,
  hint: () => 'Point one of the two bindings at another path, or drop one of them from the adapter.',
})

export const CONSENT_REQUIRED = define({
  code: 'CONSENT_REQUIRED',
  exit: 2,
  message: (file: string) => `omh would change ${file} and asks first, but there is no terminal to ask on.`,
  hint: () => 'Read the plan above, then run the same command with --yes.',
})

export const CONTAINER_FAILED = define({
  code: 'CONTAINER_FAILED',
  exit: 1,
  message: (engine: string, what: string, why: string) => `${engine} could not ${what}: ${why}`,
  hint: (advice?: string) =>
    `${advice ? `${advice} ` : ''}Run again with --verbose to see what the engine said.`,
})

export const EGRESS_CHECK_FAILED = define({
  code: 'EGRESS_CHECK_FAILED',
  exit: 1,
  message: (session: string, failed: readonly string[], total: number) =>
    `${failed.length} of ${total} egress checks of ${session} did not hold: ${failed.join('; ')}.`,
  hint: (session: string) =>
    `Each ✗ above names the rule it tests and what was seen. A rule that does not let through is an allowlist to fix (\`omh sessions egress ${session}\` shows what the proxy decided); a destination that should be closed and is not means the engine's networks isolate less than omh needs: report it with \`omh doctor --network --verbose\`.`,
})

export const DETACH_UNSUPPORTED = define({
  code: 'DETACH_UNSUPPORTED',
  exit: 1,
  message: (harness: string, sid: string, why: string) => `${harness} cannot run in the background in session ${sid}: ${why}.`,
  hint: (harness: string) => `Run it with your terminal instead: \`omh ${harness}\`.`,
})

export const DOCTOR_FAILED = define({
  code: 'DOCTOR_FAILED',
  exit: 1,
  message: (harness: string, failed: number, total: number, unchecked: readonly string[]) =>
    [
      failed ? `${failed} of ${total} checks failed: ${harness} does not see everything omh staged for it.` : '',
      unchecked.length ? `${unchecked.join(', ')} could not be checked.` : '',
    ]
      .filter(Boolean)
      .join(' '),
  hint: (harness: string | undefined, unchecked: readonly string[]) =>
    [
      harness
        ? `Each ✗ above names the item and the path. A path the harness does not read is an adapter fact to fix (\`omh adapters show ${harness}\`); run \`omh doctor ${harness} --verbose\` for what each probe printed.`
        : '',
      unchecked.length ? `What stopped ${unchecked.join(', ')} is above, with what to do; then check again with \`omh doctor ${unchecked[0]}\`.` : '',
    ]
      .filter(Boolean)
      .join(' '),
})

export const DOCTOR_NO_TURN = define({
  code: 'DOCTOR_NO_TURN',
  exit: 2,
  message: (harness: string, file: string) => `${harness} cannot be driven through a turn: its adapter (${file}) has no [turn] table.`,
  hint: () => 'Run `omh doctor` without --turn, or add a [turn] table to the adapter (docs/adapters.md).',
})

export const DOCTOR_RUNNER_FAILED = define({
  code: 'DOCTOR_RUNNER_FAILED',
  exit: 1,
  message: (harness: string, status: number, said: string) =>
    `The doctor's container for ${harness} ended without a report (status ${status})${said ? `: ${said}` : ''}.`,
  hint: () =>
    'The runner needs `node` on PATH in the harness image; check that the image runs (`--verbose` shows the cause), and that the engine can start containers with --network none.',
})

export const DOCTOR_WORKSPACE_FAILED = define({
  code: 'DOCTOR_WORKSPACE_FAILED',
  exit: 1,
  message: (root: string, base: string, why: string) => `The files of ${root} at ${base} could not be unpacked for the doctor: ${why}`,
  hint: (scratch: string) =>
    `The doctor unpacks the base commit with \`tar\` into ${scratch}: check that tar is installed and on PATH, and that the directory is writable and has room; then run again.`,
})

export const EDITOR_FAILED = define({
  code: 'EDITOR_FAILED',
  exit: 1,
  message: (name: string, bin: string, why: string) => `Could not start the editor ${name} (${bin}): ${why}`,
  hint: (alias: string, file: string) =>
    `The session is ready: \`ssh ${alias}\` reaches it. Check that the editor runs on its own, or fix \`bin\` in ${file}.`,
})

export const EDITOR_INVALID = define({
  code: 'EDITOR_INVALID',
  exit: 2,
  message: (file: string, count: number) => `${file} has ${count} problem${count === 1 ? '' : 's'}:`,
  hint: () => 'An editor file holds `name`, `bin` and `args`, nothing else.',
})

export const EDITOR_NOT_FOUND = define({
  code: 'EDITOR_NOT_FOUND',
  exit: 2,
  message: (name: string) => `No editor is called "${name}".`,
  hint: (known: readonly string[], dir: string, closest?: string) =>
    `${closest ? `Did you mean "${closest}"? ` : ''}Known editors: ${list(known)}. Add one by writing ${dir}/<name>.toml (\`name\`, \`bin\`, \`args\`).`,
})

export const EGRESS_UNSUPPORTED = define({
  code: 'EGRESS_UNSUPPORTED',
  exit: 2,
  message: (engine: string, why: string) => `${engine} cannot give the session a network whose only way out is omh's egress proxy: ${why}.`,
  hint: (file: string) =>
    `omh never runs a session open without being told. Use an engine that can, or set \`[network] egress = "open"\` (the engine's network, unfiltered) or \`"none"\` (no network) in ${file}.`,
})

/** Said by bin/run.js before anything is imported, in the same words: omh's code does not parse on an older Node. */
export const NODE_UNSUPPORTED = define({
  code: 'NODE_UNSUPPORTED',
  exit: 1,
  message: (version: string) => `omh needs Node 22 or later; this is Node ${version}.`,
  hint: () => 'Install Node 22 or later (https://nodejs.org), or put it first on your PATH, then run omh again.',
})

export const NETWORK_MISSING = define({
  code: 'NETWORK_MISSING',
  exit: 2,
  message: (network: string, key: string, file: string, engine: string) => `The network "${network}" (${key} in ${file}) does not exist on ${engine}.`,
  hint: (engine: string, network: string, file: string) =>
    `Create it (\`${engine} network create ${network}\`), or name one this engine has: \`[runtimes.${engine}] network = "…"\` in ${file} applies on ${engine} alone.`,
})

export const ENGINE_FILES_UNREACHABLE = define({
  code: 'ENGINE_FILES_UNREACHABLE',
  exit: 1,
  message: (engine: string, where: string, why: string) =>
    `${engine}${where ? ` at ${where}` : ''} cannot give a container this machine's files: ${why}. omh starts nothing rather than a session with an empty /work.`,
  hint: (advice?: string) =>
    advice ??
    'Use an engine that shares this disk (unset DOCKER_HOST, DOCKER_CONTEXT or CONTAINER_HOST), or a runtime that copies files into volumes (omh\'s bundled runtimes do).',
})

export const FILE_CHANGED = define({
  code: 'FILE_CHANGED',
  exit: 1,
  message: (file: string) => `${file} changed while omh was working on it, so nothing was written.`,
  hint: () => 'Run the command again: it plans from the file as it is now.',
})

export const FILE_LOCKED = define({
  code: 'FILE_LOCKED',
  exit: 1,
  message: (file: string, holder: string) => `${file} is being written by ${holder}, so nothing was written.`,
  hint: (lock: string) => `Run the command again once it is done. If no omh is running, remove ${lock}.`,
})

export const FILE_NOT_REGULAR = define({
  code: 'FILE_NOT_REGULAR',
  exit: 2,
  message: (file: string, kind: string) =>
    `${file} is ${kind}, not a regular file: omh reads only regular files, so it never waits on a pipe or reads a device without end.`,
  hint: () => 'Put a regular file there, or remove it.',
})

export const FILE_OUTSIDE_TREE = define({
  code: 'FILE_OUTSIDE_TREE',
  exit: 2,
  message: (file: string, tree: string, target: string) =>
    `${file} leads outside ${tree}, to ${target}, through a link: omh reads nothing of a repository through a link that leaves it, so no other file of this machine reaches a sandbox.`,
  hint: (tree: string) => `Replace the link with the file itself, or with a link to a file inside ${tree}.`,
})

export const FILE_READ_ONLY = define({
  code: 'FILE_READ_ONLY',
  exit: 1,
  message: (file: string) => `${file} is read-only, so omh left it as it is.`,
  hint: (file: string) => `Make it writable (\`chmod u+w ${file}\`) if omh should change it, then run the command again.`,
})

export const FILE_TOO_LARGE = define({
  code: 'FILE_TOO_LARGE',
  exit: 2,
  message: (file: string, size: number | undefined, max: number) =>
    size === undefined ? `${file} holds more than the ${max} bytes omh reads from one file.` : `${file} holds ${size} bytes, more than the ${max} omh reads from one file.`,
  hint: () => 'Shorten it, or raise `[limits] file_bytes` in your settings (docs/configuration.md).',
})

export const FILE_UNREADABLE = define({
  code: 'FILE_UNREADABLE',
  exit: 1,
  message: (file: string, reason: string) => `${file} exists but cannot be read: ${reason}`,
  hint: () => 'omh never treats an unreadable file as an empty one. Fix its permissions or remove it.',
})

export const FILE_UNWRITABLE = define({
  code: 'FILE_UNWRITABLE',
  exit: 1,
  message: (file: string, reason: string) => `${file} could not be written: ${reason}`,
  hint: () => 'The file is as it was before. Fix the permissions of its directory, then run the command again.',
})

export const GIT_FAILED = define({
  code: 'GIT_FAILED',
  exit: 1,
  message: (doing: string, what: string) => `git failed while ${doing}: ${what}`,
  hint: (root: string) => `Nothing was changed by omh. Check the repository at ${root} (\`git status\`), then run again; --verbose shows git's output.`,
})

export const HARNESS_RUNNING = define({
  code: 'HARNESS_RUNNING',
  exit: 1,
  message: (harness: string, sid: string) => `${harness} already runs in session ${sid}, in the background.`,
  hint: (harness: string, sid: string) =>
    `Bring it to this terminal with \`omh sessions attach ${sid}\`, read what it printed with \`omh sessions logs ${sid}\`, or start another in a new session: \`omh --detach --new ${harness}\`.`,
})

export const HOOK_INVALID = define({
  code: 'HOOK_INVALID',
  exit: 2,
  message: (files: readonly string[], count: number) =>
    files.length === 1
      ? `${files[0]} has ${count} problem${count === 1 ? '' : 's'}:`
      : `${files.length} hook files have ${count} problems:`,
  hint: () =>
    'A hook file holds `on`, optional `tools` and `when`, and exactly one of `run`, `inject` or `refuse`; docs/hooks.md explains each. Nothing was staged.',
})

export const IMAGE_BUILD_FAILED = define({
  code: 'IMAGE_BUILD_FAILED',
  exit: 1,
  message: (engine: string, tag: string, why: string) => `${engine} could not build the image ${tag}: ${why}`,
  hint: (advice?: string) =>
    `The build output above shows the step that failed. ${advice ?? 'Fix that step, then run again.'} Nothing half-built is reused: the next run builds it again.`,
})

export const IMAGE_UNSUPPORTED = define({
  code: 'IMAGE_UNSUPPORTED',
  exit: 2,
  message: (image: string, why: string) => `omh cannot run a session on ${image}: ${why}`,
  hint: (source: string) => `The image comes from ${source}. Choose one that fits (docs/environment.md says what an image needs), then launch again; nothing was started.`,
})

export const IMPORT_INVALID = define({
  code: 'IMPORT_INVALID',
  exit: 2,
  message: (file: string, format: string, count: number) =>
    `${file} cannot be read as ${format}; ${count} problem${count === 1 ? '' : 's'}:`,
  hint: () => 'Fix the file, or point --from at another one. Nothing was written.',
})

export const IMPORT_SOURCE_MISSING = define({
  code: 'IMPORT_SOURCE_MISSING',
  exit: 2,
  message: (file: string) => `There is nothing to import: ${file} does not exist.`,
  hint: () => 'Point --from at the file that holds the servers.',
})

export const IMPORT_UNSUPPORTED = define({
  code: 'IMPORT_UNSUPPORTED',
  exit: 2,
  message: (harness: string, why: string) => `omh cannot import ${harness}'s MCP servers: ${why}`,
  hint: (file: string) => `Add the servers with \`omh config mcp add\`, or give the adapter (${file}) what it lacks.`,
})

export const INTERNAL = define({
  code: 'INTERNAL',
  exit: 1,
  message: (what: string) => `omh failed unexpectedly: ${what}`,
  hint: () => 'Run again with --verbose to see the cause, and report it if it persists.',
})

export const LAUNCH_FLAG_MISPLACED = define({
  code: 'LAUNCH_FLAG_MISPLACED',
  exit: 2,
  message: (flag: string, harness: string) =>
    `\`${flag}\` is omh's flag, not ${harness}'s, and everything after the harness name belongs to the harness.`,
  hint: (flag: string, harness: string, rest: string) =>
    `Put it first: \`omh ${flag} ${harness}${rest}\`; or pass it on to ${harness} after \`--\`: \`omh ${harness} -- ${flag}\`.`,
})

export const LOGIN_INCOMPLETE = define({
  code: 'LOGIN_INCOMPLETE',
  exit: 1,
  message: (harness: string, account: string, empty: readonly string[], status: number) =>
    `The ${harness} login for account "${account}" did not complete (${harness} exited ${status}): still empty: ${empty.join(', ')}. Nothing was recorded.`,
  hint: (harness: string, account: string, login?: string) =>
    `Run \`omh auth ${harness} ${account}\` again${login ? ` and ${login.charAt(0).toLowerCase()}${login.slice(1)}` : ', and finish logging in before you leave the harness'}`,
})

export const MCP_SERVER_NOT_FOUND = define({
  code: 'MCP_SERVER_NOT_FOUND',
  exit: 2,
  message: (name: string, file: string) => `${file} has no MCP server called "${name}".`,
  hint: (known: readonly string[], closest?: string) =>
    `${closest ? `Did you mean "${closest}"? ` : ''}Servers: ${list(known)}.`,
})

export const MOUNTPOINT_LINK = define({
  code: 'MOUNTPOINT_LINK',
  exit: 1,
  message: (link: string, target: string, mountpoint: string) =>
    `${link} is a symbolic link (to ${target}); omh creates no mountpoint through a link, so it did not make ${mountpoint}.`,
  hint: (link: string) =>
    `Remove the link (\`rm ${link}\`: it is in the session's worktree or an account's credentials, not your checkout) and launch again, or bind the adapter to a path that holds no link.`,
})

export const NOTHING_IN_BACKGROUND = define({
  code: 'NOTHING_IN_BACKGROUND',
  exit: 1,
  message: (sid: string, what: string) => `${what} in session ${sid}.`,
  hint: (sid: string) => `Start a harness in the background with \`omh --detach --session ${sid} <harness>\`, or with your terminal: \`omh --session ${sid} <harness>\`.`,
})

export const SESSION_UNRESPONSIVE = define({
  code: 'SESSION_UNRESPONSIVE',
  exit: 1,
  message: (sid: string, seconds: number) =>
    `Session ${sid}'s container did not answer within ${seconds} s: nothing new could start there, as when its processes fill the session's pids limit.`,
  hint: (sid: string) => `Stop it with \`omh sessions down ${sid}\`: its worktree and branch stay.`,
})

export const NOTHING_TO_COMMIT = define({
  code: 'NOTHING_TO_COMMIT',
  exit: 1,
  message: (branch: string) => `Nothing to commit on ${branch}: the worktree holds no change besides omh's own files.`,
  hint: (sid: string) => `See what the session changed with \`omh sessions diff ${sid}\`.`,
})

export const NOT_A_FILE = define({
  code: 'NOT_A_FILE',
  exit: 2,
  message: (file: string, why: string) => `${file} ${why}.`,
  hint: () => 'Give the path of a regular file, or of a link to one.',
})

export const NOT_A_REPOSITORY = define({
  code: 'NOT_A_REPOSITORY',
  exit: 2,
  message: (cwd: string) => `${cwd} is not inside a git repository.`,
  hint: () => 'omh works on a git branch of your project. Run it inside one, or `git init` first.',
})

export const PLUGIN_API_UNSUPPORTED = define({
  code: 'PLUGIN_API_UNSUPPORTED',
  exit: 2,
  message: (plugin: string, version: unknown, supported: readonly number[]) =>
    `${plugin} speaks plugin API ${String(version)}; this omh supports ${supported.join(', ')}.`,
  hint: (plugin: string, file: string) =>
    `Install a release of ${plugin} built for this omh, or remove it from \`plugins\` in ${file}.`,
})

export const PLUGIN_ERROR = define({
  code: 'PLUGIN_ERROR',
  exit: 1,
  message: (plugin: string, hook: string, what: string) => `${plugin} failed in ${hook}: ${what}`,
  hint: (plugin: string) => `This is a fault in ${plugin}; --verbose shows the cause. Report it to its authors.`,
})

export const PLUGIN_INSTALL_FAILED = define({
  code: 'PLUGIN_INSTALL_FAILED',
  exit: 1,
  message: (spec: string, folder: string, what: string) => `npm could not install ${spec} into ${folder}: ${what}`,
  hint: () =>
    'Check the package name, path or tarball, and that the npm registry is reachable; --verbose shows npm\'s output. Nothing was changed.',
})

export const PLUGIN_INVALID = define({
  code: 'PLUGIN_INVALID',
  exit: 2,
  message: (specifier: string, file: string, count: number) =>
    `${specifier} (named in ${file}) is not an omh plugin; ${count} problem${count === 1 ? '' : 's'}:`,
  hint: () =>
    'A plugin default-exports an object with `kind`, `apiVersion` and `meta`; see docs/plugins.md.',
})

export const PLUGIN_LOAD_FAILED = define({
  code: 'PLUGIN_LOAD_FAILED',
  exit: 2,
  message: (specifier: string, file: string, what: string) =>
    `${specifier} (named in ${file}) could not be loaded: ${what}`,
  hint: (specifier: string) => `Reinstall ${specifier}, or remove it from \`plugins\`. --verbose shows the cause.`,
})

export const PLUGIN_NOT_FOUND = define({
  code: 'PLUGIN_NOT_FOUND',
  exit: 2,
  message: (specifier: string, file: string) => `${file} names the plugin "${specifier}", which is not installed.`,
  hint: (specifier: string, dir: string) =>
    specifier.startsWith('.') || specifier.startsWith('/')
      ? `No file is at that path, resolved from ${dir}. Fix the path or remove the entry.`
      : `Run \`npm install ${specifier}\` in ${dir}, or remove it from \`plugins\`.`,
})

export const PLUGIN_NOT_INSTALLED = define({
  code: 'PLUGIN_NOT_INSTALLED',
  exit: 2,
  message: (name: string, folder: string) => `No plugin called ${name} is installed in ${folder}.`,
  hint: (installed: readonly string[], closest?: string) =>
    `${closest ? `Did you mean "${closest}"? ` : ''}${installed.length ? `Installed there: ${installed.join(', ')}.` : 'Nothing is installed there.'} \`omh plugins\` lists every plugin and where it came from.`,
})

export const PROFILE_INVALID = define({
  code: 'PROFILE_INVALID',
  exit: 2,
  message: (count: number) => `Your profile has ${count} problem${count === 1 ? '' : 's'}:`,
  hint: () => 'Fix the files above (docs/profile.md describes each one). Nothing was staged.',
})

export const REMOTE_UNKNOWN = define({
  code: 'REMOTE_UNKNOWN',
  exit: 2,
  message: (root: string, wanted: string | undefined, remotes: readonly string[]) =>
    wanted ? `${root} has no remote named "${wanted}" (remotes: ${list(remotes)}).` : `${root} has ${remotes.length ? `several remotes (${list(remotes)}) and none is called origin` : 'no remote'}, so omh cannot tell where to push.`,
  hint: (remotes: readonly string[]) =>
    remotes.length ? `Name one with --remote, e.g. \`--remote ${remotes[0]}\`.` : 'Add one with `git remote add origin <url>`, then run again.',
})

export const RENDER_COLLISION = define({
  code: 'RENDER_COLLISION',
  exit: 2,
  message: (guest: string, first: string, second: string) =>
    `${first} and ${second} both write ${guest}, and no installed plugin can combine them.`,
  hint: () => 'Give one of the two bindings another path.',
})

export const RENDER_REFUSED = define({
  code: 'RENDER_REFUSED',
  exit: 2,
  message: (harness: string, count: number) =>
    `${harness} would change ${count} value${count === 1 ? '' : 's'} of your profile before using ${count === 1 ? 'it' : 'them'}:`,
  hint: () =>
    'omh hands a harness exactly the values you approved. Write each value above without the text the harness would substitute, or keep that item out of this harness with [use].',
})

export const REPOSITORY_EMPTY = define({
  code: 'REPOSITORY_EMPTY',
  exit: 2,
  message: (root: string) => `${root} has no commits yet, so there is nothing to start a session's branch from.`,
  hint: () => 'Make a first commit (`git add -A && git commit -m "first commit"`), then run omh again.',
})

export const REPOSITORY_UNTRUSTED = define({
  code: 'REPOSITORY_UNTRUSTED',
  exit: 2,
  message: (root: string, count: number) =>
    `${root} carries ${count === 1 ? 'a file' : `${count} files`} that would run code on this machine or widen the sandbox, and you have not trusted ${count === 1 ? 'it' : 'them'}, so omh ran nothing:`,
  hint: (root: string) =>
    `Read what is listed above; if you trust it, run \`omh trust\` in ${root} (\`omh trust --show\` lists what it would trust). Settings that load no code and only narrow the sandbox, hook files and rules need no trust.`,
})

export const REQUIRED_DROPPED = define({
  code: 'REQUIRED_DROPPED',
  exit: 2,
  message: (harness: string, count: number) =>
    `${harness} cannot express ${count === 1 ? 'an item' : `${count} items`} your profile marks \`required: true\`, so nothing was started:`,
  hint: (harness: string) =>
    `Use a harness that can express it, or, if ${harness} may go without, remove \`required\` from the item (or keep it out of ${harness} with [use]).`,
})

export const RUNTIME_NOT_FOUND = define({
  code: 'RUNTIME_NOT_FOUND',
  exit: 1,
  message: (wanted: string, tried: readonly string[]) =>
    wanted === 'auto'
      ? `No container engine answers here (tried ${list(tried)}):`
      : `The container engine "${wanted}" is not usable here:`,
  hint: (wanted: string, engines: readonly string[]) =>
    wanted === 'auto'
      ? `Follow the advice for the engine you want (they are asked in this order: ${list(engines)}), or name one with \`runtime\` in settings or --runtime.`
      : `Follow the advice above, or choose another engine (${list(engines.filter((e) => e !== wanted))}) with \`runtime\` in settings or --runtime; \`auto\` takes the first that answers.`,
})

export const RUNTIME_UNKNOWN = define({
  code: 'RUNTIME_UNKNOWN',
  exit: 2,
  message: (wanted: string, origin: string) => `${origin} asks for the container engine "${wanted}", and no installed runtime plugin drives it.`,
  hint: (engines: readonly string[], closest?: string) =>
    `${closest ? `Did you mean "${closest}"? ` : ''}Installed runtimes: ${list(engines)}; \`auto\` takes the first that answers. A runtime for another engine is a plugin named in \`plugins\`.`,
})

export const SESSION_FILE_TOO_LARGE = define({
  code: 'SESSION_FILE_TOO_LARGE',
  exit: 1,
  message: (file: string, sid: string, size: number, max: number) =>
    `${file} in ${sid} holds ${size} bytes, more than the ${max} a session may bring into your repository (the bound an agent's own commits have). Nothing was committed.`,
  hint: (sid: string, file: string) => `Leave it in the session with \`omh sessions commit ${sid} --exclude ${file} -m <message>\`, or remove it there.`,
})

export const SANDBOX_HISTORY_REFUSED = define({
  code: 'SANDBOX_HISTORY_REFUSED',
  exit: 1,
  message: (sid: string, why: string) => `omh will not carry the commits of ${sid}'s sandbox repository: ${why}. Nothing was committed.`,
  hint: (sid: string) =>
    `Take the files as they stand, as one commit, with \`omh sessions commit ${sid} --squash -m <message>\`; or tidy the sandbox's history from inside the session and commit again.`,
})

export const SECRET_EXPOSED = define({
  code: 'SECRET_EXPOSED',
  exit: 2,
  message: (file: string, mode: string) => `${file} holds secrets and is readable by others than you (mode ${mode}), so omh will not read it.`,
  hint: (file: string) => `Run \`chmod 600 ${file}\`, then launch again.`,
})

export const SECRET_MISSING = define({
  code: 'SECRET_MISSING',
  exit: 2,
  message: (name: string, where: string) => `<secret ${name}> (${where}) has no value: it is not in the environment, in the secrets file, or in the keyring.`,
  hint: (name: string, file: string) =>
    `Set it one of these ways: export ${name}=… before omh; add \`${name} = "…"\` to ${file} (mode 600); or \`secret-tool store --label=omh omh ${name}\`.`,
})

export const SERVICE_UNHEALTHY = define({
  code: 'SERVICE_UNHEALTHY',
  exit: 1,
  message: (service: string, check: string, seconds: number, last: string) =>
    `The service ${service} did not become ready: its health check \`${check}\` still failed after ${seconds} s${last ? ` (${last})` : ''}.`,
  hint: (engine: string, container: string, service: string) =>
    `Its own output says why: \`${engine} logs ${container}\`. Fix [services.${service}] (its image, env, command or health), then launch again; the service starts again.`,
})

export const SESSION_BUSY = define({
  code: 'SESSION_BUSY',
  exit: 1,
  message: (sid: string, why: string, processes: readonly string[]) =>
    processes.length
      ? `Session ${sid} must restart its container (${why}), but something still runs in it: ${processes.slice(0, 3).join('; ')}${processes.length > 3 ? '; …' : ''}`
      : `Session ${sid} must restart its container (${why}), but the container did not say whether something still runs in it.`,
  hint: (sid: string, harness: string) =>
    `Finish that first; or stop the session with \`omh sessions down ${sid}\` (its work is kept); or start a new one with \`omh --new ${harness}\`.`,
})

export const SESSION_ELSEWHERE = define({
  code: 'SESSION_ELSEWHERE',
  exit: 1,
  message: (sid: string, up: string, wanted: string) =>
    `Session ${sid} is up on ${up}, and --runtime asks for ${wanted}: one session never runs on two engines, which would both mount its worktree.`,
  hint: (sid: string, up: string) =>
    `Leave out --runtime to use it on ${up}; or move it with \`omh sessions down ${sid}\` (its work is kept), then launch again with --runtime.`,
})

export const SESSION_NAME_REFUSED = define({
  code: 'SESSION_NAME_REFUSED',
  exit: 2,
  message: (name: string, why: string) => `omh cannot name a new session "${name}": ${why}.`,
  hint: (kind: 'taken' | 'branch' | 'invalid', name: string) =>
    kind === 'taken'
      ? `Go into it with \`omh --session ${name} <harness>\`, or choose another name.`
      : kind === 'branch'
        ? `Choose another name, or delete the branch first (\`git branch -D omh/${name}\`) if nothing on it is wanted.`
        : 'A name is lowercase letters, digits and single hyphens, starts with a letter, has at most 40 characters, and is not s followed by digits (omh numbers its sessions so): e.g. feature-x.',
})

export const SESSION_NOT_FOUND = define({
  code: 'SESSION_NOT_FOUND',
  exit: 2,
  message: (sid: string | undefined, root: string) =>
    sid ? `${root} has no session ${sid}.` : `${root} has no sessions yet.`,
  hint: (known: readonly string[]) =>
    known.length ? `Its sessions: ${known.join(', ')} (\`omh sessions ls\`).` : 'Start one with `omh <harness>`.',
})

export const SESSION_NOT_RUNNING = define({
  code: 'SESSION_NOT_RUNNING',
  exit: 1,
  message: (sid: string) => `Session ${sid} has no running container to attach to.`,
  hint: (sid: string) => `Start it with \`omh --session ${sid} <harness>\`, then attach again.`,
})

export const SESSION_OFF_BRANCH = define({
  code: 'SESSION_OFF_BRANCH',
  exit: 1,
  message: (sid: string, on: string, branch: string) =>
    `The worktree of session ${sid} is on ${on}, not ${branch}; omh will not review or commit a session that left its branch.`,
  hint: (worktree: string, branch: string) => `Put it back with \`git -C ${worktree} switch ${branch}\`, then run again.`,
})

export const SESSION_UNSAVED_WORK = define({
  code: 'SESSION_UNSAVED_WORK',
  exit: 1,
  message: (sid: string, what: string) => `Session ${sid} holds work that exists nowhere else: ${what}.`,
  hint: (sid: string) =>
    `Keep it with \`omh sessions commit ${sid} -m "…"\` and merge or push the branch; or remove it anyway with \`omh sessions rm ${sid} --force\`.`,
})

export const SESSION_UP_FAILED = define({
  code: 'SESSION_UP_FAILED',
  exit: 1,
  message: (sid: string, what: string) => `The container of session ${sid} did not start: ${what}`,
  hint: () => 'Nothing half-made was kept. Check the engine (`omh doctor`), then run again; --verbose shows its output.',
})

export const SETTINGS_INVALID = define({
  code: 'SETTINGS_INVALID',
  exit: 2,
  message: (file: string, count: number) => `${file} has ${count} problem${count === 1 ? '' : 's'}:`,
  hint: () => 'Fix the settings above; docs/configuration.md lists every key.',
})

export const SETTINGS_UNEDITABLE = define({
  code: 'SETTINGS_UNEDITABLE',
  exit: 2,
  message: (file: string, why: string) => `${file}: omh cannot change \`plugins\` here without touching anything else: ${why}.`,
  hint: (want: string) => `Edit the file by hand so that it reads ${want}, then run the command again.`,
})

export const SETUP_FAILED = define({
  code: 'SETUP_FAILED',
  exit: 1,
  message: (session: string, from: string, command: string, status: number) => `The setup of ${session} failed: \`${command}\` (${from}) exited with status ${status}.`,
  hint: (log: string, session: string) =>
    `The whole output is in ${log}. The session is kept: fix the command or the project, then launch into it again (\`omh --session ${session} …\`); the setup runs until it succeeds once.`,
})

export const SSH_KEY_FAILED = define({
  code: 'SSH_KEY_FAILED',
  exit: 1,
  message: (key: string, why: string) => `Could not make the SSH key ${key}: ${why}.`,
  hint: (missing: boolean) =>
    missing
      ? 'Install the OpenSSH client, which has ssh-keygen: openssh-client on Debian and Ubuntu, openssh-clients on Fedora and RHEL, openssh on Alpine, Arch and Homebrew. Then attach again.'
      : 'Nothing was kept. Check that you may write to the key\'s directory, then attach again; --verbose shows the cause.',
})

export const STATE_MOVE_FAILED = define({
  code: 'STATE_MOVE_FAILED',
  exit: 1,
  message: (from: string, to: string, why: string) =>
    `omh could not finish moving its state from ${from} to ${to}: ${why}. Every part is whole in one place or the other; nothing is half-moved.`,
  hint: (to: string) => `Fix the cause (space, permissions on ${to}), then run any omh command: it carries on where this one stopped.`,
})

export const TOML_SYNTAX = define({
  code: 'TOML_SYNTAX',
  exit: 2,
  message: (file: string, line: number, column: number, what: string) =>
    `${file}:${line}:${column} is not valid TOML: ${what}`,
  hint: () => 'Fix the syntax at that line; nothing was read from this file.',
})

export const USAGE = define({
  code: 'USAGE',
  exit: 2,
  message: (what: string) => what,
  hint: (command: string) => `See \`omh ${command ? `${command} ` : ''}--help\`.`,
})

export const USE_UNKNOWN = define({
  code: 'USE_UNKNOWN',
  exit: 2,
  message: (file: string, count: number) =>
    `${file}: [use] names ${count === 1 ? 'an entry' : `${count} entries`} your catalogue does not have:`,
  hint: () => 'An entry is a name in your catalogue: a file stem, a skill folder or an MCP server name. Fix the names, or add the entries.',
})

type AnyErrorData = ErrorData<any[], any[]>

export interface OmhErrorOptions<D extends AnyErrorData> {
  args: Parameters<D['message']>
  hintArgs?: NonNullable<D['hint']> extends (...a: infer H) => string ? H : never
  problems?: readonly Problem[]
  cause?: unknown
  /** Machine-readable facts for `--json`; never needed to understand the message. */
  details?: Record<string, unknown>
}

/** The one error class omh throws on purpose. Anything else reaching the CLI is INTERNAL. */
export class OmhError extends Error {
  override readonly name = 'OmhError'
  readonly code: string
  readonly exit: 1 | 2
  readonly hint: string | undefined
  readonly problems: readonly Problem[]
  readonly details: Record<string, unknown> | undefined

  constructor(data: AnyErrorData, options: OmhErrorOptions<AnyErrorData>) {
    super(data.message(...options.args), options.cause === undefined ? undefined : { cause: options.cause })
    this.code = data.code
    this.exit = data.exit
    this.hint = data.hint ? data.hint(...((options.hintArgs ?? []) as unknown[])) : undefined
    this.problems = options.problems ?? []
    this.details = options.details
  }

  /** Build from a catalogue entry with full type checking of its arguments. */
  static of<D extends AnyErrorData>(data: D, options: OmhErrorOptions<D>): OmhError {
    return new OmhError(data, options as OmhErrorOptions<AnyErrorData>)
  }
}

/** Duck-typed so an error from a plugin's own copy of the kernel still counts. */
export const isOmhError = (value: unknown): value is OmhError =>
  value instanceof Error && value.name === 'OmhError' && typeof (value as OmhError).code === 'string'

/** Every catalogue entry, sorted by code: for the docs test and `omh` tooling. */
export const ERROR_CATALOGUE: readonly AnyErrorData[] = [...defined].sort((a, b) => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0))
