import { isOmhError, type OmhError } from '@omh/plugin-api'

/** The OmhError `run` rejects with; fails the test when it resolves or throws anything else. */
export async function failure(run: () => Promise<unknown>): Promise<OmhError> {
  try {
    await run()
  } catch (error) {
    if (isOmhError(error)) return error
    throw error
  }
  throw new Error('expected a failure')
}
