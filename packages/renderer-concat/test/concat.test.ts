import { testRenderer } from '@omh/plugin-kit/testing'
import { bundledFormats } from '../../../test/helpers/bundled.js'
import plugin from '../src/index.js'

testRenderer(plugin, { ...(await bundledFormats()), golden: new URL('./golden', import.meta.url) })
