import * as z from 'zod/mini'
import { CAPABILITY_CLASSES, type Plugin } from '@omh/plugin-api'

const fn = z.custom<(...args: unknown[]) => unknown>((v) => typeof v === 'function', { message: 'expected a function' })

const schemaLike = z.custom<object>((v) => typeof v === 'object' && v !== null && '~standard' in v && '_zod' in v, {
  message: 'expected a zod schema',
})

const meta = z.object({ name: z.string().check(z.minLength(1)), version: z.string().check(z.minLength(1)) })

// Plugins are objects a third party wrote; extra members are their business,
// so these shapes are not strict. What the kernel calls must be there.
const renderer = z.object({
  kind: z.literal('renderer'),
  apiVersion: z.number(),
  meta,
  formats: z.array(z.string().check(z.minLength(1))).check(z.minLength(1)),
  classes: z.array(z.enum(CAPABILITY_CLASSES)).check(z.minLength(1)),
  options: z.optional(schemaLike),
  render: fn,
  parse: z.optional(fn),
  combine: z.optional(z.record(z.string(), fn)),
})

const runtime = z.object({
  kind: z.literal('runtime'),
  apiVersion: z.number(),
  meta,
  engine: z.string().check(z.minLength(1)),
  options: z.optional(schemaLike),
  configure: z.optional(fn),
  detect: fn,
  hasImage: fn,
  build: fn,
  up: fn,
  exec: fn,
  run: fn,
  list: fn,
  inspect: z.optional(fn),
  images: z.optional(fn),
  removeImage: z.optional(fn),
  pushImage: z.optional(fn),
  fileWays: z.optional(fn),
  volumes: z.optional(z.object({ create: fn, list: fn, remove: fn, put: fn, get: fn })),
  down: fn,
})

const extension = z.object({
  kind: z.literal('extension'),
  apiVersion: z.number(),
  meta,
  apply: fn,
})

export const pluginHeaderSchema = z.object({
  kind: z.enum(['renderer', 'runtime', 'extension']),
  apiVersion: z.unknown(),
  meta: z.optional(z.partial(meta)),
})

export const pluginSchema = z.discriminatedUnion('kind', [renderer, runtime, extension]) as unknown as z.ZodMiniType<Plugin>
