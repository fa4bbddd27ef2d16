import AdaptersLs from './commands/adapters/ls.js'
import AdaptersShow from './commands/adapters/show.js'
import AdaptersValidate from './commands/adapters/validate.js'
import Attach from './commands/attach.js'
import Auth from './commands/auth.js'
import ConfigMcpAdd from './commands/config/mcp/add.js'
import ConfigMcpImport from './commands/config/mcp/import.js'
import ConfigMcpLs from './commands/config/mcp/ls.js'
import ConfigMcpRm from './commands/config/mcp/rm.js'
import Doctor from './commands/doctor.js'
import Launch from './commands/launch.js'
import Plugins from './commands/plugins/index.js'
import Render from './commands/render.js'
import SessionsCommit from './commands/sessions/commit.js'
import SessionsDiff from './commands/sessions/diff.js'
import SessionsEgress from './commands/sessions/egress.js'
import SessionsDown from './commands/sessions/down.js'
import SessionsLs from './commands/sessions/ls.js'
import SessionsRm from './commands/sessions/rm.js'
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
  'config:mcp:add': ConfigMcpAdd,
  'config:mcp:import': ConfigMcpImport,
  'config:mcp:ls': ConfigMcpLs,
  'config:mcp:rm': ConfigMcpRm,
  doctor: Doctor,
  launch: Launch,
  plugins: Plugins,
  render: Render,
  'sessions:commit': SessionsCommit,
  'sessions:diff': SessionsDiff,
  'sessions:egress': SessionsEgress,
  'sessions:down': SessionsDown,
  'sessions:ls': SessionsLs,
  'sessions:rm': SessionsRm,
  trust: Trust,
}

export { commandNotFound }
