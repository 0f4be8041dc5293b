#!/bin/sh
# tools/deps.sh: installs the Debian packages evalgate needs.
#   tools/deps.sh         to build and run it
#   tools/deps.sh --test  and to run its tests
# Packages already present are not touched; nothing is installed unless
# one is missing.  Needs root (or sudo) for apt-get.
set -eu

pkgs="build-essential autoconf automake pkg-config libfcgi-dev
libjson-c-dev libsqlite3-dev libcurl4-openssl-dev libsodium-dev lighttpd
curl"
if [ "${1:-}" = "--test" ]; then
	pkgs="$pkgs python3 sqlite3"
	command -v node >/dev/null 2>&1 || pkgs="$pkgs nodejs npm"
fi

missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
	    grep -q 'install ok installed' || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

sudo=
[ "$(id -u)" = 0 ] || sudo=sudo
echo "tools/deps.sh: installing$missing" >&2
$sudo apt-get update -qq
# Debian starts lighttpd on port 80 when it is installed; evalgate runs
# its own instances, so keep the packaged service from starting.
printf '#!/bin/sh\nexit 101\n' | $sudo tee /usr/sbin/policy-rc.d >/dev/null
$sudo chmod 755 /usr/sbin/policy-rc.d
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
    --no-install-recommends $missing
$sudo rm -f /usr/sbin/policy-rc.d
