import AdaptersLs from './commands/adapters/ls.js'
import AdaptersShow from './commands/adapters/show.js'
import AdaptersValidate from './commands/adapters/validate.js'
import Attach from './commands/attach.js'
import Auth from './commands/auth.js'
import CachesLs from './commands/caches/ls.js'
import CachesRm from './commands/caches/rm.js'
import Completion from './commands/completion.js'
import ConfigMcpAdd from './commands/config/mcp/add.js'
import ConfigMcpImport from './commands/config/mcp/import.js'
import ConfigMcpLs from './commands/config/mcp/ls.js'
import ConfigMcpRm from './commands/config/mcp/rm.js'
import Doctor from './commands/doctor.js'
import ImagesLs from './commands/images/ls.js'
import ImagesPrune from './commands/images/prune.js'
import ImagesPush from './commands/images/push.js'
import Init from './commands/init.js'
import Launch from './commands/launch.js'
import Plugins from './commands/plugins/index.js'
import PluginsAdd from './commands/plugins/add.js'
import PluginsRm from './commands/plugins/rm.js'
import Render from './commands/render.js'
import SessionsAttach from './commands/sessions/attach.js'
import SessionsCommit from './commands/sessions/commit.js'
import SessionsDiff from './commands/sessions/diff.js'
import SessionsDown from './commands/sessions/down.js'
import SessionsAllow from './commands/sessions/allow.js'
import SessionsEgress from './commands/sessions/egress.js'
import SessionsExec from './commands/sessions/exec.js'
import SessionsLogs from './commands/sessions/logs.js'
import SessionsLs from './commands/sessions/ls.js'
import SessionsNotifier from './commands/sessions/notifier.js'
import SessionsPorts from './commands/sessions/ports.js'
import SessionsPush from './commands/sessions/push.js'
import SessionsRm from './commands/sessions/rm.js'
import SessionsShow from './commands/sessions/show.js'
import SessionsSpare from './commands/sessions/spare.js'
import SessionsTest from './commands/sessions/test.js'
import SessionsWatch from './commands/sessions/watch.js'
import Trust from './commands/trust.js'
import commandNotFound from './hooks/command_not_found/launch.js'

/**
 * Every command, by oclif id. omh ships as one bundle, so oclif finds commands
 * here ("explicit" strategy) instead of globbing a directory of files.
 */
export const COMMANDS = {
  'adapters:ls': AdaptersLs,
  'adapters:show': AdaptersShow,
  'adapters:validate': AdaptersValidate,
  attach: Attach,
  auth: Auth,
  completion: Completion,
  'caches:ls': CachesLs,
  'caches:rm': CachesRm,
  'config:mcp:add': ConfigMcpAdd,
  'config:mcp:import': ConfigMcpImport,
  'config:mcp:ls': ConfigMcpLs,
  'config:mcp:rm': ConfigMcpRm,
  doctor: Doctor,
  'images:ls': ImagesLs,
  'images:prune': ImagesPrune,
  'images:push': ImagesPush,
  init: Init,
  launch: Launch,
  plugins: Plugins,
  'plugins:add': PluginsAdd,
  'plugins:rm': PluginsRm,
  render: Render,
  'sessions:allow': SessionsAllow,
  'sessions:attach': SessionsAttach,
  'sessions:commit': SessionsCommit,
  'sessions:diff': SessionsDiff,
  'sessions:down': SessionsDown,
  'sessions:egress': SessionsEgress,
  'sessions:exec': SessionsExec,
  'sessions:logs': SessionsLogs,
  'sessions:ls': SessionsLs,
  'sessions:notifier': SessionsNotifier,
  'sessions:ports': SessionsPorts,
  'sessions:push': SessionsPush,
  'sessions:rm': SessionsRm,
  'sessions:show': SessionsShow,
  'sessions:spare': SessionsSpare,
  'sessions:test': SessionsTest,
  'sessions:watch': SessionsWatch,
  trust: Trust,
}

export { commandNotFound }
