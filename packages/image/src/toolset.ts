/**
 * omh's toolset: what a session needs of its image, brought in one directory
 * (`/opt/omh`) rather than installed with the image's package manager, so a
 * harness runs on the project's own image whatever it is. Built once on
 * omh's base (Debian, with Node): Node (with its headers), git, dtach, sshd,
 * jq, ripgrep, less, sleep and script (which records a harness in the background), each with the libraries it links and a dynamic loader of its own
 * (patchelf points every program at `/opt/omh/lib/ld.so`), so they run on a
 * glibc of any age and on musl alike, and never touch the image's libraries.
 *
 * The image's own tools come first: `/opt/omh/bin` holds only the harness and
 * dtach, and `/opt/omh/fallback` (git, node, jq, rg, less) is last on PATH.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

/** Where the toolset lies in every session image. */
export const TOOLSET = '/opt/omh'
/** omh's own Node: the credential proxy, doctor's runner and the image preparation run on it. */
export const TOOLSET_NODE = `${TOOLSET}/libexec/node`
/** What keeps a session container alive between harnesses. */
export const TOOLSET_SLEEP = `${TOOLSET}/libexec/sleep`
/** util-linux's `script`: a harness in the background runs under it, so its terminal output is kept. */
export const TOOLSET_SCRIPT = `${TOOLSET}/libexec/script`
export const TOOLSET_SSHD = `${TOOLSET}/libexec/sshd`
export const TOOLSET_SSH_KEYGEN = `${TOOLSET}/libexec/ssh-keygen`
/** Where a harness's `install` puts its files (`$OMH_PREFIX`, npm's global prefix during the install). */
export const HARNESS_PREFIX = `${TOOLSET}/harness`
/** The preparation script's place in the toolset. */
export const PREPARE_SCRIPT = `${TOOLSET}/share/prepare-image.mjs`
/** A session's PATH: the harness first, the image's own tools, then the toolset's as a fallback. */
export const sessionPath = (imagePath = '${PATH:-/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin}') => `${TOOLSET}/bin:${imagePath}:${TOOLSET}/fallback`

/** Debian packages the toolset is made from, on the builder only. */
const BUILDER_PACKAGES = 'patchelf git jq openssh-server openssh-client dtach ripgrep less coreutils ca-certificates'

/**
 * Copies each program with every library `ldd` lists (the loader among them)
 * and repoints it with patchelf; `DT_RPATH` rather than `RUNPATH`, because it
 * reaches the libraries' own dependencies too. git's helpers that are git
 * itself become links, so git costs one copy.
 */
export const BUNDLE_SCRIPT = `P=${TOOLSET}
command -v node >/dev/null || { echo "omh: the toolset is built on [image] base, which must carry Node (it has none)" >&2; exit 1; }
mkdir -p $P/bin $P/lib $P/libexec/git-core $P/fallback $P/share
cp -L /lib64/ld-linux-x86-64.so.2 $P/lib/ld.so
libs() { ldd "$1" | awk '/=> \\//{print $3}' | while read -r l; do [ -e "$P/lib/\${l##*/}" ] || cp -L "$l" $P/lib/; done; }
bundle() {
  cp -L "$1" "$2"; chmod u+w "$2"; libs "$1"
  patchelf --set-interpreter $P/lib/ld.so --force-rpath --set-rpath $P/lib "$2"
}
bundle "$(command -v node)" $P/libexec/node
# Node's headers, for node-gyp to build a native addon without downloading them (prepare-image.ts puts them where it looks).
v=$(node -p process.versions.node); echo "$v" > $P/share/node-version
inc="$(dirname "$(readlink -f "$(command -v node)")")/../include/node"
if [ -d "$inc" ]; then mkdir -p $P/include && cp -r "$inc" $P/include/
elif (cd /tmp && npm pack --silent "node-linux-$(node -p process.arch)@$v" >/dev/null && tar xzf node-linux-*-"$v".tgz package/include); then mkdir -p $P/include && cp -r /tmp/package/include/node $P/include/ && rm -rf /tmp/package /tmp/node-linux-*.tgz
else echo "omh: no headers for Node $v: a native addon builds only where node-gyp can download them" >&2; fi
for b in dtach script jq rg less sleep ssh-keygen; do bundle "$(command -v $b)" $P/libexec/$b; done
bundle /usr/sbin/sshd $P/libexec/sshd
bundle /usr/bin/git $P/libexec/git
seen=
for f in /usr/lib/git-core/*; do
  n=\${f##*/}; [ -f "$f" ] || continue
  if cmp -s "$f" /usr/bin/git; then ln -s ../git $P/libexec/git-core/$n; continue; fi
  if head -c4 "$f" | grep -q ELF; then
    twin=; for s in $seen; do if cmp -s "$f" /usr/lib/git-core/$s; then twin=$s; break; fi; done
    if [ -n "$twin" ]; then ln -s $twin $P/libexec/git-core/$n; else bundle "$f" $P/libexec/git-core/$n; seen="$seen $n"; fi
  else cp "$f" $P/libexec/git-core/; fi
done
for l in /lib/x86_64-linux-gnu/libnss_files.so.2 /lib/x86_64-linux-gnu/libnss_dns.so.2 /lib/x86_64-linux-gnu/libresolv.so.2; do if [ -e "$l" ]; then cp -L "$l" $P/lib/; fi; done
mkdir -p $P/share/git-core && cp -r /usr/share/git-core/templates $P/share/git-core/
ln -s ../libexec/dtach $P/bin/dtach
for b in node jq rg less; do ln -s ../libexec/$b $P/fallback/$b; done
printf '#!/bin/sh\\nGIT_EXEC_PATH=%s/libexec/git-core GIT_TEMPLATE_DIR=%s/share/git-core/templates exec %s/libexec/git "$@"\\n' $P $P $P > $P/fallback/git
chmod 755 $P/fallback/git
$P/libexec/node -e 'process.exit(0)'
$P/fallback/git --version >/dev/null
`

/**
 * After a harness's `install`: every program it put in `$OMH_PREFIX/bin`
 * gets a command in `/opt/omh/bin`. A Node script runs on omh's Node, so an
 * image whose own Node is missing or old still runs it; anything else is
 * linked as it is. The build fails when the adapter's `bin` is not there
 * (unless it is a program every image has).
 */
export const WRAP_SCRIPT = `bin=$0
for f in ${HARNESS_PREFIX}/bin/*; do
  [ -e "$f" ] || continue
  n=\${f##*/}; t=$(readlink -f "$f")
  if head -n1 "$t" | grep -q '^#!.*node'; then
    printf '#!/bin/sh\\nexec %s %s "$@"\\n' ${TOOLSET_NODE} "$t" > ${TOOLSET}/bin/$n; chmod 755 ${TOOLSET}/bin/$n
  else ln -sf "$t" ${TOOLSET}/bin/$n; fi
done
# A harness that is a program every image has (sh, true) needs nothing installed.
[ -x ${TOOLSET}/bin/$bin ] || case $bin in sh|true|env) ;; *) echo "omh: the adapter's install put no program $bin in \\$OMH_PREFIX/bin (${HARNESS_PREFIX}/bin); an install must put the harness there (npm install -g does)" >&2; exit 1 ;; esac
`

/** The compiled preparation script, as this package has it. */
export function prepareScriptSource(): string {
  return readFileSync(createRequire(import.meta.url).resolve('@omh/image/prepare-image'), 'utf8')
}

/** The toolset's Containerfile body, after `FROM`. */
export function toolsetSteps(prepareScript: string): string[] {
  return [
    'USER root',
    'ARG DEBIAN_FRONTEND=noninteractive',
    `RUN ${JSON.stringify(['/bin/sh', '-ec', `apt-get update; apt-get install -y --no-install-recommends ${BUILDER_PACKAGES}; rm -rf /var/lib/apt/lists/*`])}`,
    `RUN ${JSON.stringify(['/bin/sh', '-ec', BUNDLE_SCRIPT])}`,
    `RUN ${JSON.stringify(['/bin/sh', '-ec', `printf %s "$0" | base64 -d > ${PREPARE_SCRIPT}`, Buffer.from(prepareScript).toString('base64')])}`,
  ]
}
