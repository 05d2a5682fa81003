#!/usr/bin/env bash
# Opt-in local TTS `rhvoice` (docs/speech.md): only with RHVOICE=1. RHVoice is in Debian's **non-free** component
# (bookworm), which this step adds for the RHVoice packages alone (an apt pin keeps every other non-free package at
# priority -1, so nothing else can come from it). It installs rhvoice-english and librhvoice-dev without the
# voices licensed for non-commercial use only (evgeniy-eng, lyubov): a dpkg path-exclude keeps their files off
# the disk, and copies already there are removed. Then it builds rhvoice-server (the long-lived worker the engine
# keeps a pool of) into build/rhvoice-server/. Without RHVOICE=1 nothing is installed and `rhvoice` is not offered.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib/common.sh

if [ "${RHVOICE:-0}" != 1 ]; then
  log "rhvoice: not enabled (RHVOICE=1 scripts/setup.sh installs it from Debian non-free)"
  exit 0
fi

NONCOMMERCIAL=(evgeniy-eng lyubov)
exclude=/etc/dpkg/dpkg.cfg.d/rhvoice-noncommercial
if [ ! -f "$exclude" ]; then
  log "rhvoice: excluding the non-commercial voices (${NONCOMMERCIAL[*]}) from installation"
  for v in "${NONCOMMERCIAL[@]}"; do echo "path-exclude=/usr/share/RHVoice/voices/$v/*"; done | as_root tee "$exclude" >/dev/null
fi
for v in "${NONCOMMERCIAL[@]}"; do
  [ -e "/usr/share/RHVoice/voices/$v" ] && as_root rm -rf "/usr/share/RHVoice/voices/$v"
done

packages=(rhvoice-english librhvoice-dev)
missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
  log "rhvoice: adding Debian non-free ($codename) for the RHVoice packages only, and installing ${missing[*]}"
  as_root tee /etc/apt/sources.list.d/rhvoice-nonfree.sources >/dev/null <<SRC
# Added by scripts/setup.d/45-rhvoice.sh (RHVOICE=1): RHVoice is in non-free; the pin below admits only its packages.
Types: deb
URIs: http://deb.debian.org/debian
Suites: $codename
Components: non-free
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  as_root tee /etc/apt/preferences.d/rhvoice-nonfree >/dev/null <<'PIN'
# Added by scripts/setup.d/45-rhvoice.sh: from Debian non-free, only the RHVoice packages may be installed.
Package: rhvoice rhvoice-english librhvoice-core7 librhvoice-audio2 librhvoice5 librhvoice-dev
Pin: release o=Debian,c=non-free
Pin-Priority: 500

Package: *
Pin: release o=Debian,c=non-free
Pin-Priority: -1
PIN
  as_root apt-get update -q
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
  for v in "${NONCOMMERCIAL[@]}"; do
    [ -e "/usr/share/RHVoice/voices/$v" ] && as_root rm -rf "/usr/share/RHVoice/voices/$v"
  done
fi

src=shared/engines/tts/rhvoice-server/rhvoice-server.c
out=build/rhvoice-server/rhvoice-server
if [ -x "$out" ] && [ "$out" -nt "$src" ] && [ "$out" -nt shared/engines/tts/worker-protocol.h ]; then
  log "rhvoice: ok"
  exit 0
fi
mkdir -p "$(dirname "$out")"
cc -O2 -Wall -o "$out.tmp" "$src" -lRHVoice
mv "$out.tmp" "$out"
log "rhvoice: built $out (voices: $(ls /usr/share/RHVoice/voices | tr '\n' ' '))"
