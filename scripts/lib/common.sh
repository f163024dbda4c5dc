# Shared by the scripts: find the repository, install what a fresh Debian machine lacks.
# Sourced, not run.

ACCOUNTD_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

log() { printf '==> %s\n' "$*" >&2; }

# apt_install PKG... : installs the Debian packages that are missing (root only).
apt_install() {
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "missing Debian packages: ${missing[*]} (install them: sudo apt-get install ${missing[*]})" >&2
    return 1
  fi
  log "installing ${missing[*]}"
  if [ -z "${ACCOUNTD_APT_UPDATED:-}" ]; then
    apt-get update -qq >/dev/null
    export ACCOUNTD_APT_UPDATED=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

# The build needs libsodium (argon2id) and libargon2 (imported ARGON2 hashes) through pkg-config.
ensure_build_deps() {
  apt_install pkg-config libsodium-dev libargon2-dev
}

# A free TCP port on loopback.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}
