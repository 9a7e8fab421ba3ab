#!/usr/bin/env bash
# need.sh: make sure the programs and files a make target needs are on this machine.
#
#   deploy/need.sh WHO THING=PACKAGE ...
#   deploy/need.sh "make test" promtool=prometheus /usr/share/fonts/truetype/liberation=fonts-liberation
#
# THING is a command looked up on PATH, or an absolute path that must exist; PACKAGE is the Debian
# package that provides it. What is missing is installed with apt-get when this runs as root on
# Debian (the package lists are refreshed once if a package is not found); anywhere else it prints
# the command to run and exits 1. The local ClickHouse scripts and `make test` use it, so every
# install step lives in the make targets and a fresh machine needs no manual one.
set -euo pipefail

who=$1
shift
missing=()
for item in "$@"; do
  thing=${item%%=*} package=${item#*=}
  case "$thing" in
    /*) [ -e "$thing" ] && continue ;;
    *) command -v "$thing" >/dev/null 2>&1 && continue ;;
  esac
  missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

say() { printf '%s: %s\n' "$who" "$*" >&2; }
if [ -r /etc/debian_version ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  say "installing ${missing[*]} (apt-get) ..."
  # Another apt-get (a second make target, say) holds the lock for a while: wait for it.
  apt() { DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 "$@"; }
  install() { apt install -y -q --no-install-recommends "${missing[@]}"; }
  # A package's postinst may try to start a service; with no init system (CI) that is harmless.
  if ! install >/dev/null 2>&1; then
    apt update -q >/dev/null
    install >/dev/null
  fi
  exit 0
fi
say "missing: ${missing[*]}. Install them, then run this again:"
if [ -r /etc/debian_version ]; then
  say "  sudo apt-get install ${missing[*]}"
else
  say "  (Debian package names; use your system's packages of the same programs)"
fi
exit 1
