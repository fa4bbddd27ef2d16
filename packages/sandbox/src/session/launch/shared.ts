/**
 * Small tools for asking things ahead of need and waiting on several at once, shared by the
 * phases: which error a user hears, and when, must not depend on which question answered first.
 */

export const ignore = (): void => undefined

/** A question asked ahead of need: its answer or its failure, held as a value until someone needs it. */
export type Early<T> = Promise<PromiseSettledResult<T>>

export const early = <T>(question: Promise<T>): Early<T> => Promise.allSettled([question]).then(([result]) => result!)

export async function answer<T>(asked: Early<T>): Promise<T> {
  const result = await asked
  if (result.status === 'rejected') throw result.reason
  return result.value
}

/**
 * Awaits every promise and throws the first rejection in argument order, not
 * in time: which error a user hears does not depend on which call happened
 * to answer first.
 */
export async function inOrder<T extends readonly unknown[]>(...promises: { readonly [K in keyof T]: Promise<T[K]> }): Promise<T> {
  const results = await Promise.allSettled(promises)
  for (const result of results) if (result.status === 'rejected') throw result.reason
  return results.map((r) => (r as PromiseFulfilledResult<unknown>).value) as unknown as T
}
