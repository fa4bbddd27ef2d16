# shellcheck shell=bash
# Prepares this checkout on a fresh machine: Node >= 22 on PATH (Node 24 from
# the npm registry when the machine's node is older), the system packages the
# tests use, the container engines the end-to-end tests run on, then `npm ci`
# and a build. Source it, so PATH stays set:
#
#   . scripts/setup.sh && npm test
#
# Idempotent: a second run only checks.

omh_setup() {
  local root prefix pkg arch
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

  if ! command -v node >/dev/null 2>&1 || [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 22 ]; then
    prefix=${OMH_NODE_PREFIX:-$HOME/.cache/omh/node24}
    case $(uname -m) in
      x86_64) arch=x64 ;;
      aarch64) arch=arm64 ;;
      *) echo "setup: no Node 24 package for $(uname -m); install Node >= 22 yourself" >&2; return 1 ;;
    esac
    pkg=node-linux-$arch
    if [ ! -x "$prefix/bin/node" ]; then
      echo "setup: installing Node 24 ($pkg@24 from the npm registry) into $prefix" >&2
      npm install --prefix "$prefix/pkg" --no-save --no-package-lock --no-audit --no-fund "$pkg@24" >&2 || return 1
      mkdir -p "$prefix/bin" && ln -sf "$prefix/pkg/node_modules/$pkg/bin/node" "$prefix/bin/node"
    fi
    export PATH="$prefix/bin:$PATH"
  fi
  echo "setup: node $(node --version), npm $(npm --version)" >&2

  local missing=()
  command -v git >/dev/null 2>&1 || missing+=(git)
  command -v jq >/dev/null 2>&1 || missing+=(jq)
  # The completion tests run the generated scripts in real zsh and fish.
  command -v zsh >/dev/null 2>&1 || missing+=(zsh)
  command -v fish >/dev/null 2>&1 || missing+=(fish)
  # The live view of the sessions is checked in a real terminal: tmux's.
  command -v tmux >/dev/null 2>&1 || missing+=(tmux)
  # As root, the end-to-end tests also run omh as a user of their own on rootless Podman, which
  # maps that user's subordinate IDs with newuidmap and newgidmap.
  if [ "$(id -u)" -eq 0 ]; then command -v newuidmap >/dev/null 2>&1 || missing+=(uidmap); fi
  if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: apt-get install ${missing[*]}" >&2
    if [ "$(id -u)" -eq 0 ]; then
      DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2 || return 1
    else
      echo "setup: not root; install ${missing[*]} yourself" >&2; return 1
    fi
  fi

  # The end-to-end tests run on real Docker and Podman. Where the provisioning
  # recipe for these machines sits beside the checkout, it installs and starts
  # both and builds the Debian base image the tests start from; a re-run only checks.
  local provision="$root/../shared/runtimes/provision.sh"
  if [ -f "$provision" ] && [ "$(id -u)" -eq 0 ]; then
    echo "setup: container engines and the test base image ($provision)" >&2
    OMH_FLAVOR=debian OMH_IMAGE=localhost/omh-base:debian bash "$provision" engines image >&2 || return 1
  elif ! command -v docker >/dev/null 2>&1 || ! command -v podman >/dev/null 2>&1; then
    echo "setup: the end-to-end tests need docker and podman answering, and a Debian-based image with Node in both, named by OMH_TEST_BASE (default localhost/omh-base:debian)" >&2
  fi

  (cd "$root" && npm ci --no-audit --no-fund >&2 && npm run build >&2) || return 1

  # The hooks omh writes for Codex only run when Codex itself trusts them, and
  # only the real binary can say so: the end-to-end tests use the release the
  # adapter installs.
  local codex_prefix="${OMH_E2E_CACHE:-$HOME/.cache/omh/e2e}/codex-0.171.0"
  if [ ! -x "$codex_prefix/node_modules/.bin/codex" ]; then
    echo "setup: installing @openai/codex@0.171.0 for the end-to-end tests" >&2
    npm install --prefix "$codex_prefix" --ignore-scripts --no-save --no-audit --no-fund @openai/codex@0.171.0 >&2 || return 1
  fi
  export OMH_CODEX_BIN="$codex_prefix/node_modules/.bin/codex"
}

omh_setup
