import type { $ZodType } from 'zod/v4/core'

export function schemaDocuments(schemas: Record<'adapter' | 'editor' | 'settings' | 'hook', $ZodType>): Map<string, string>
