// What oclif asks of ejs, bundled in its place: omh's help texts use templates only to name the
// binary (`<%= config.bin %>`), and loading ejs cost every `--help` about 6 ms. A template of any
// other form is refused rather than printed half rendered; scripts/bundle.js refuses such a
// template in the manifest at build time, so no user meets this.
const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&#34;', "'": '&#39;' }
const escape = (text) => String(text).replace(/[&<>"']/g, (c) => ESCAPES[c])
export const VALUE = /<%=\s*([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)\s*%>/g

export function render(template, data) {
  const rendered = String(template).replace(VALUE, (_, expression) => {
    let value = data
    for (const key of expression.split('.')) value = value == null ? undefined : value[key]
    return value == null ? '' : escape(value)
  })
  if (rendered.includes('<%')) throw new Error(`omh renders only <%= name.path %> in help texts: ${template}`)
  return rendered
}

// oclif requires ejs and reads `.default.render`.
export default { render }
