import { lstat } from 'node:fs/promises'

/** Whether anything is at a host path, a dangling link included. */
export const exists = (p: string): Promise<boolean> =>
  lstat(p).then(
    () => true,
    () => false,
  )
