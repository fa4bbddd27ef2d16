import { describe, expect, it } from 'vitest'
import { compareUrl } from './push.js'

describe('compareUrl', () => {
  it.each([
    ['git@github.com:me/app.git', 'https://github.com/me/app/compare/main...omh/s01?expand=1'],
    ['https://github.com/me/app', 'https://github.com/me/app/compare/main...omh/s01?expand=1'],
    ['ssh://git@github.com/me/app.git', 'https://github.com/me/app/compare/main...omh/s01?expand=1'],
    ['https://user:secret@github.example.com/me/app.git', 'https://github.example.com/me/app/compare/main...omh/s01?expand=1'],
    ['git@gitlab.com:group/sub/app.git', 'https://gitlab.com/group/sub/app/-/compare/main...omh/s01'],
    ['ssh://git@gitlab.example.com:2222/g/app.git', 'https://gitlab.example.com/g/app/-/compare/main...omh/s01'],
    ['git@bitbucket.org:team/app.git', 'https://bitbucket.org/team/app/branches/compare/omh/s01%0Dmain'],
    ['https://codeberg.org/me/app.git', 'https://codeberg.org/me/app/compare/main...omh/s01'],
    ['git@gitea.example.org:me/app.git', 'https://gitea.example.org/me/app/compare/main...omh/s01'],
  ])('%s', (url, expected) => {
    expect(compareUrl(url, 'main', 'omh/s01')).toBe(expected)
  })

  it.each(['/srv/git/app.git', 'file:///srv/git/app.git', 'git@example.com:me/app.git', 'https://github.com/', 'ext::sh -c evil'])('knows no forge at %s', (url) => {
    expect(compareUrl(url, 'main', 'omh/s01')).toBeUndefined()
  })
})
