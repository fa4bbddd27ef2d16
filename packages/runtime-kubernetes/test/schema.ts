/**
 * Offline checks of Kubernetes objects: kubernetes-models validates types and
 * required fields against Kubernetes' OpenAPI schemas but lets unknown fields
 * through, so a second check walks every key against the field lists the
 * official client generates from the same schemas.
 */
import * as k8s from '@kubernetes/client-node'
import { ConfigMap, PersistentVolumeClaim, Pod, Secret } from 'kubernetes-models/v1'

interface Attribute {
  readonly baseName: string
  readonly type: string
}

const models = k8s as unknown as Record<string, { getAttributeTypeMap?: () => Attribute[] } | undefined>

/** Every path in `value` that the type does not have, e.g. `spec.containers[0].securityContext.noNewPrivs`. */
export function unknownFields(value: unknown, type: string, at = ''): string[] {
  const array = /^Array<(.+)>$/.exec(type)
  if (array) return Array.isArray(value) ? value.flatMap((v, n) => unknownFields(v, array[1]!, `${at}[${n}]`)) : [`${at}: not a list`]
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type)
  if (map) return value && typeof value === 'object' ? Object.entries(value).flatMap(([k, v]) => unknownFields(v, map[1]!, `${at}.${k}`)) : [`${at}: not a map`]
  const model = models[type]?.getAttributeTypeMap
  if (!model) return []
  if (!value || typeof value !== 'object' || Array.isArray(value)) return [`${at}: not an object`]
  const fields = new Map(model().map((a) => [a.baseName, a.type]))
  return Object.entries(value).flatMap(([k, v]) => {
    const path = at ? `${at}.${k}` : k
    const fieldType = fields.get(k)
    return fieldType === undefined ? [path] : unknownFields(v, fieldType, path)
  })
}

const MODELS = { Pod, ConfigMap, Secret, PersistentVolumeClaim } as const
const TYPES = { Pod: 'V1Pod', ConfigMap: 'V1ConfigMap', Secret: 'V1Secret', PersistentVolumeClaim: 'V1PersistentVolumeClaim' } as const

/** Problems with one object: schema violations, then unknown fields. Empty when it is sound. */
export function problems(object: Record<string, unknown>): string[] {
  const kind = object['kind'] as keyof typeof MODELS
  const Model = MODELS[kind]
  if (!Model) return [`no schema for kind ${String(kind)}`]
  const out: string[] = []
  try {
    new Model(object as never).validate()
  } catch (error) {
    out.push(`schema: ${(error as Error).message}`)
  }
  for (const path of unknownFields(object, TYPES[kind])) out.push(`unknown field: ${path}`)
  return out
}
