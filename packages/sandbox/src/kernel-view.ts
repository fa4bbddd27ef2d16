/**
 * What the sandbox uses of the kernel, and nothing else: the settings and where things live, the
 * environment omh runs in, and the services it calls (an adapter, a render, a runtime, the
 * launch taps of extensions). The Kernel is one; a test may hand in any other.
 */
import type { Adapter, EffectiveSettings, HarnessRender, KernelOptions, LaunchTaps, ReachedRuntime, ResolvedRuntime, RuntimeAsk } from '@omh/kernel'
import type { Hook, RuntimeContext } from '@omh/plugin-api'

export interface KernelView {
  readonly settings: EffectiveSettings
  readonly options: Pick<KernelOptions, 'cwd' | 'env' | 'defaultsFile'>
  /** The profile's directory (`$OMH_HOME`). */
  readonly omhHome: string
  /** Where omh keeps its state (`$OMH_STATE`). */
  readonly omhState: string
  readonly repoRoot: string | undefined
  /** What extensions tap into a launch's hooks (an extension that declares them is imported now). */
  launchTaps(): Promise<LaunchTaps>
  adapter(name: string): Promise<Adapter>
  /** `own`: hooks of omh's own rendered beside the user's and never reported (the state hooks). */
  renderHarness(adapter: Adapter, projectDir: string | undefined, own?: readonly Hook[]): Promise<HarnessRender>
  /** The settings as their files say now, for a session that outlives an edit. */
  rereadSettings(): Promise<EffectiveSettings>
  resolveRuntime(wanted: string | undefined, context: RuntimeContext, origin?: string): Promise<ResolvedRuntime>
  resolveRuntime<T>(wanted: string | undefined, context: RuntimeContext, ask: RuntimeAsk<T>): Promise<ReachedRuntime<T>>
}
