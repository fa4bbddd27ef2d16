import type { $ZodType } from 'zod/v4/core'

export function schemaDocuments(
  schemas: Record<'adapter' | 'editor' | 'settings' | 'hook', $ZodType>,
  runtimes?: readonly { readonly engine: string; readonly options?: $ZodType }[],
): Map<string, string>
