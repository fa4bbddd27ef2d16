import type { Adapter, ImageSource, Kernel } from '@omh/kernel'

/** The image a harness runs in: the `[image] base` setting until harness layers are built. */
export function images(kernel: Kernel): ImageSource {
  const tag = (_adapter: Adapter) => {
    const base = kernel.settings.imageBase?.value
    if (!base) throw new Error('no settings layer names an image: set [image] base')
    return base
  }
  return { tag, ensure: async (adapter) => tag(adapter) }
}
