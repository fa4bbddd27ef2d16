import { testRenderer } from '@omh/plugin-kit/testing'
import { bundledFormats } from '@omh/test-utils'
import plugin from '../src/index.js'

testRenderer(plugin, { ...(await bundledFormats()), golden: new URL('./golden', import.meta.url) })
